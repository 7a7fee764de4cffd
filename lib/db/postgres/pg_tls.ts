/**
 * TLS negotiated by dbport inside the socket factory it gives postgres.js
 * (pg_pools.ts), so that a session under TLS is still a socket dbport
 * opens: postgres.js gets the TLS socket's clear side, is told not to
 * negotiate again (`ssl: false`), and dbport's read path (pg_wire.ts), its
 * socket watch and its requeue hook (pg_pools.ts) and its cancel requests
 * (pg_wired.ts `cancelRequest`) work on it as on a plain TCP socket or a
 * tunnel's channel.
 *
 * The verification is postgres.js's own (3.4.9, connection.js `secure`),
 * kept exactly: `sslmode=require`, `allow` and `prefer` encrypt without
 * checking the certificate; every other mode (`verify-ca`, `verify-full`,
 * `ssl=true`, …) checks the chain and the host name (the URL's host, as
 * SNI too unless an IP address) — postgres.js's `verify-ca` checks the host
 * name too, and so does this. `prefer` goes on in clear when the server
 * answers 'N'; every other mode then fails ("the server does not support
 * SSL/TLS"). `sslnegotiation=direct` starts TLS at once (ALPN
 * `postgresql`). Added: `sslrootcert=<file>` (a PEM CA the chain must end
 * in, instead of the system's) and `sslrootcert=system` (verify-full), which
 * postgres.js passed to the server as a startup parameter (and the server
 * refused). Added too: a client certificate, libpq's `sslcert=<file>` and
 * `sslkey=<file>` (PEM), the key decrypted with `sslpassword` when it is
 * encrypted — read once per driver, checked to be a pair, and presented
 * to a server that asks for one (pg_hba `cert`, `clientcert=verify-*`).
 * libpq's default files (~/.postgresql/postgresql.crt, …) are never read:
 * only the files the URL names.
 *
 * @module
 */

import { isIP } from "node:net";
import tls from "node:tls";
import { createPrivateKey, X509Certificate } from "node:crypto";
import { constants as fsConstants } from "node:fs";
import { open as fsOpen } from "node:fs/promises";
import { Duplex } from "node:stream";
import { alarm } from "../../base/alarms.ts";
import { CONNECT_TIMEOUT_SECONDS } from "./pg_options.ts";

/** How a connection's sessions negotiate TLS. */
export interface TlsPlan {
  /** The sslmode as postgres.js read it (for messages). */
  readonly mode: string;
  /** Whether the chain and the host name are checked. */
  readonly verify: boolean;
  /** Whether an 'N' answer goes on in clear (`prefer`). */
  readonly fallback: boolean;
  /** `sslnegotiation=direct`: TLS at once, without the SSLRequest. */
  readonly direct: boolean;
  /** The host name checked, and sent as SNI unless an IP address. */
  readonly host: string;
  /** The CA file `sslrootcert` names; undefined: the system's CAs. */
  readonly caFile?: string;
  /** The client certificate presented (`sslcert`, `sslkey`), if any. */
  readonly client?: ClientCertFiles;
}

/** A client certificate as the URL names it. */
export interface ClientCertFiles {
  /** `sslcert`: the PEM certificate (its chain may follow it). */
  readonly certFile: string;
  /** `sslkey`: its PEM private key. */
  readonly keyFile: string;
  /** `sslpassword`: the key's passphrase (a secret: never in a message). */
  readonly password?: string;
}

/**
 * The TLS a connection asks for: null for none (clear), undefined when
 * postgres.js must negotiate it itself (an `ssl` object, which dbport never
 * gives, or no single host).
 */
export function tlsPlan(
  url: string,
  options: { ssl?: unknown; sslnegotiation?: unknown; host?: string[] },
): TlsPlan | null | undefined {
  const rootCert = rootCertOf(url);
  const client = clientCertOf(url);
  // A CA named without an sslmode asks for a checked server, never clear
  // text (outsider stop 51: the password went to a hop that asked); an
  // explicit `sslmode=disable` is the owner's word. A client certificate
  // named without one asks for TLS (`require`: a certificate is presented
  // only under TLS, and libpq's `prefer` would go on in clear without it).
  const ssl = options.ssl ||
    (hasSslMode(url)
      ? false
      : rootCert !== undefined
      ? "verify-full"
      : client !== undefined
      ? "require"
      : false);
  if (!ssl) return null;
  if (typeof ssl !== "string" && ssl !== true) return undefined;
  const host = options.host?.length === 1 ? options.host[0] : undefined;
  if (host === undefined) return undefined;
  const mode = String(ssl);
  const direct = options.sslnegotiation === "direct";
  // A CA named is a CA to check against, whatever the mode.
  const verify = !["require", "allow", "prefer"].includes(mode) ||
    rootCert !== undefined;
  return {
    mode: rootCert === "system" ? "verify-full" : mode,
    verify,
    fallback: mode === "prefer" && !direct && !verify,
    direct,
    host,
    ...(rootCert === undefined || rootCert === "system"
      ? {}
      : { caFile: rootCert }),
    ...(client === undefined ? {} : { client }),
  };
}

/** The client certificate the URL names (both files), if any. */
function clientCertOf(url: string): ClientCertFiles | undefined {
  const params = queryOf(url);
  const certFile = params.get("sslcert");
  const keyFile = params.get("sslkey");
  if (certFile === null || keyFile === null) return undefined;
  const password = params.get("sslpassword");
  return {
    certFile,
    keyFile,
    ...(password === null ? {} : { password }),
  };
}

/**
 * Why the URL's client certificate parameters (`sslcert`, `sslkey`,
 * `sslpassword`) cannot be used as they are, or null: one file named
 * without the other, a passphrase without a key, TLS turned off
 * (`sslmode=disable`), or TLS that postgres.js would negotiate itself
 * (`own` false: several hosts, a Unix socket), which would connect without
 * the certificate. Refused before anything connects, as `uncheckedCa`.
 */
export function clientCertRefusal(url: string, own: boolean): Error | null {
  const params = queryOf(url);
  const cert = params.has("sslcert");
  const key = params.has("sslkey");
  if (!cert && !key) {
    return params.has("sslpassword")
      ? tlsError(
        // No "sslkey: …": redact.ts reads a secret parameter's name
        // followed by ':' as a value given, and garbled the message into
        // "no sslkey=[redacted] is the passphrase …".
        "the URL names sslpassword but no sslkey; sslpassword is the passphrase of the client key that sslkey names (with its certificate, sslcert): name both, or remove sslpassword",
      )
      : null;
  }
  if (!cert) {
    return tlsError(
      "the URL names a client key (sslkey) but no certificate: name the key's PEM certificate with sslcert too",
    );
  }
  if (!key) {
    return tlsError(
      "the URL names a client certificate (sslcert) but no key: name the certificate's PEM private key with sslkey too",
    );
  }
  if (params.get("sslmode") === "disable" || params.get("ssl") === "false") {
    return tlsError(
      "the URL names a client certificate (sslcert, sslkey) and turns TLS off (sslmode=disable): a certificate is presented only under TLS; remove one or the other",
    );
  }
  if (!own) {
    return tlsError(
      "a client certificate (sslcert, sslkey) is presented only on TLS dbport negotiates itself, which it does on a single host by TCP (not several hosts, not a Unix socket); name one host",
    );
  }
  return null;
}

/**
 * Whether the URL says an `sslmode` (or `ssl`) at all: an empty one
 * (`sslmode=`, a template filled with nothing) says none — postgres.js
 * reads it as no TLS, and with a CA named it sent the startup and the
 * password in clear (outsider stop 52).
 */
function hasSslMode(url: string): boolean {
  const params = queryOf(url);
  return params.getAll("sslmode").some((value) => value !== "") ||
    params.getAll("ssl").some((value) => value !== "");
}

/**
 * Why a URL whose TLS postgres.js would negotiate itself (several hosts, a
 * Unix socket) cannot be opened: it names a CA (`sslrootcert`), which
 * postgres.js would never check (`require` checks nothing; it passed the
 * parameter to the server, after the startup) — and handed its own TLS
 * the CA, a refused certificate made it try the hosts again in a loop
 * that outlived the closed driver (outsider stop 51). Null otherwise.
 */
export function uncheckedCa(url: string): Error | null {
  if (rootCertOf(url) === undefined) return null;
  return tlsError(
    "TLS with a CA the URL names (sslrootcert) needs a single host (dbport checks the server's certificate against it only on one host); name one host",
  );
}

/** The URL's `sslrootcert`, if any. */
function rootCertOf(url: string): string | undefined {
  return queryOf(url).get("sslrootcert") ?? undefined;
}

/**
 * A connection URL's parameters, read from its query string alone: a URL
 * of several hosts (`h1:5432,h2:5432`) is no WHATWG URL, and its CA must
 * not go unread for that (outsider stop 51).
 */
function queryOf(url: string): URLSearchParams {
  const at = url.indexOf("?");
  const hash = url.indexOf("#", at < 0 ? 0 : at);
  return new URLSearchParams(
    at < 0 ? "" : url.slice(at + 1, hash < 0 ? undefined : hash),
  );
}

/** The URL parameters dbport's own TLS reads (never the server's). */
const OWN_TLS_PARAMS = ["sslrootcert", "sslcert", "sslkey", "sslpassword"];

/**
 * `url` without the parameters dbport's TLS reads and postgres.js would pass
 * to the server as startup parameters (`sslrootcert`, `sslcert`, `sslkey`,
 * `sslpassword` — a passphrase sent to the server in a startup message).
 */
export function withoutOwnTlsParams(url: string): string {
  const params = queryOf(url);
  if (!OWN_TLS_PARAMS.some((name) => params.has(name))) return url;
  for (const name of OWN_TLS_PARAMS) params.delete(name);
  const at = url.indexOf("?");
  const rest = params.toString();
  return url.slice(0, at) + (rest === "" ? "" : `?${rest}`);
}

const SSL_REQUEST = Uint8Array.of(0, 0, 0, 8, 0x04, 0xd2, 0x16, 0x2f);

/**
 * A socket factory that negotiates `plan`'s TLS on each socket `open`
 * gives. A failure is never thrown: postgres.js would keep the session in
 * its connecting state for ever (a factory that throws rejects the one
 * statement and leaves the session neither open nor closed). The socket
 * it returns fails instead, and postgres.js sees it error and close.
 *
 * `stop` (the driver closing: pg_pools.ts `close`) ends what the factory
 * is still doing: a socket still negotiating (before postgres.js has it,
 * no pool would close it) is destroyed, a file read given up, and nothing
 * is opened after it (outsider stop 53: a socket whose SSLRequest a hop
 * never answered outlived the close until the connect alarm).
 */
export function secured(
  open: () => Promise<Duplex>,
  plan: TlsPlan,
  stop?: AbortSignal,
): () => Promise<Duplex> {
  let ca: Promise<string> | undefined;
  let client: Promise<ClientCert> | undefined;
  return openingSafely(async () => {
    if (stop?.aborted) throw closedWhileOpening();
    // Each read again at the next session when it failed (a file put
    // right); bounded and shared with every driver (`readTextWithin`: a
    // read that hangs fails the next sessions at once), a failed one is
    // never kept here.
    if (plan.caFile !== undefined) {
      const reading: Promise<string> = ca ??= readNamedFile(
        plan.caFile,
        "sslrootcert",
        "CA",
        stop,
      ).catch((error) => {
        if (ca === reading) ca = undefined;
        throw error;
      });
    }
    if (plan.client !== undefined) {
      const reading: Promise<ClientCert> = client ??= readClientCert(
        plan.client,
        stop,
      ).catch((error) => {
        if (client === reading) client = undefined;
        throw error;
      });
    }
    const [caText, clientCert] = await Promise.all([ca, client]);
    if (stop?.aborted) throw closedWhileOpening();
    return negotiate(await open(), plan, caText, clientCert, stop);
  });
}

/** The driver closed while a session's socket was opened (`secured`). */
function closedWhileOpening(): Error {
  return Object.assign(
    new Error("the connection was closed while its TLS was negotiated"),
    { code: "CONNECTION_ENDED" },
  );
}

/** A client certificate read, its key decrypted (PEM, PKCS #8). */
interface ClientCert {
  readonly cert: string;
  readonly key: string;
}

/**
 * The certificate and key `files` name, read (asynchronously,
 * `readNamedFile`), the key decrypted with its passphrase and checked to be
 * the certificate's. Every failure is a connect error naming the parameter
 * and the file — never the passphrase.
 */
async function readClientCert(
  files: ClientCertFiles,
  stop?: AbortSignal,
): Promise<ClientCert> {
  const [certText, keyText] = await Promise.all([
    readNamedFile(files.certFile, "sslcert", "client certificate", stop),
    readNamedFile(files.keyFile, "sslkey", "client key", stop),
  ]);
  let cert: X509Certificate;
  try {
    cert = new X509Certificate(certText);
  } catch {
    throw tlsError(
      `the file the URL's sslcert names (${files.certFile}) holds no PEM certificate`,
    );
  }
  const encrypted =
    /-----BEGIN ENCRYPTED PRIVATE KEY-----|Proc-Type:\s*4,\s*ENCRYPTED/
      .test(keyText);
  if (encrypted && files.password === undefined) {
    throw tlsError(
      `the client key the URL's sslkey names (${files.keyFile}) is encrypted: give its passphrase with sslpassword`,
    );
  }
  let key: ReturnType<typeof createPrivateKey>;
  try {
    key = createPrivateKey({
      key: keyText,
      format: "pem",
      // An empty passphrase: a key that is not encrypted ignores it.
      passphrase: files.password ?? "",
    });
  } catch {
    throw tlsError(
      encrypted
        ? `the URL's sslpassword does not decrypt the client key sslkey names (${files.keyFile}): a wrong passphrase`
        : `the file the URL's sslkey names (${files.keyFile}) holds no PEM private key`,
    );
  }
  if (!cert.checkPrivateKey(key)) {
    throw tlsError(
      `the client key the URL's sslkey names (${files.keyFile}) is not the key of the certificate sslcert names (${files.certFile})`,
    );
  }
  return {
    cert: certText,
    key: String(key.export({ format: "pem", type: "pkcs8" })),
  };
}

/** How long the read of a file the URL names may take at most. */
export const FILE_READ_MS = CONNECT_TIMEOUT_SECONDS * 1000;

/**
 * The largest certificate, key or CA file read: 4 MiB. A PEM CA bundle is
 * kilobytes (the system's, ~220 KB); a larger file is refused by its size
 * before it is opened, and a read stops past it (a file that grows after
 * its stat) — a 300 MB file read whole stalled the event loop 2 s, 1.8 GB
 * for four sessions (outsider stop 54).
 */
export const MAX_FILE_BYTES = 4 * 1024 * 1024;

/**
 * How many reads of files URLs name may be under way at once, all
 * connections together. A read of a hung file system never ends, nor does
 * the runtime thread that makes it: unbounded, ~32 of them stalled every
 * other file read and host-name lookup of the server (outsider stop 54).
 */
export const FILE_READS_AT_ONCE = 4;

/**
 * The file the URL's `param` names (`what`: for the message), as a connect
 * error naming the parameter and the file when it cannot be read. Only a
 * regular file of at most {@linkcode MAX_FILE_BYTES} is read: a FIFO, a
 * device or a socket is refused at once (stat first, then the opened file's
 * own stat: a FIFO swapped in after the stat is never waited for) — the
 * read of a FIFO nobody writes never ends, and a session waited for it its
 * whole timeout (outsider stop 53). The read itself is bounded by the
 * connect timeout ({@linkcode FILE_READ_MS}) and by `stop`, and shared
 * ({@linkcode readTextWithin}).
 */
async function readNamedFile(
  file: string,
  param: string,
  what: string,
  stop?: AbortSignal,
): Promise<string> {
  const refused = (why: string) =>
    tlsError(
      `the ${what} file the URL's ${param} names (${file}) could not be read: ${why}`,
    );
  try {
    return await readTextWithin(file, FILE_READ_MS, stop, (info) => {
      if (info.isDirectory) throw refused("a directory");
      if (!info.isFile) {
        throw refused(`not a regular file (${fileKind(info)})`);
      }
    });
  } catch (error) {
    const code = (error as { code?: unknown } | null)?.code;
    // Refused above, or the driver closed: as they are.
    if (code === "ETLS" || code === "CONNECTION_ENDED") throw error;
    throw refused(readFailure(error));
  }
}

/** A file's read that did not end in time (`readTextWithin`). */
class ReadTimedOut extends Error {
  constructor(ms: number, why = "") {
    super(`its read did not end within ${ms / 1000} s${why}`);
  }
}

/** A file larger than the reads' bound (`readTextWithin`). */
class FileTooLarge extends Error {
  constructor(max: number, size?: number) {
    super(
      `${
        size === undefined
          ? "it grew past"
          : `it is ${megabytes(size)}, more than`
      } the ${
        megabytes(max)
      } read at most (a PEM certificate, key or CA bundle is kilobytes)`,
    );
  }
}

/** A regular file at its stat, something else once opened. */
class KindChanged extends Error {
  constructor(kind: string) {
    super(`not a regular file (${kind}, swapped in after its stat)`);
  }
}

/** `bytes` in MiB, MB or bytes, for a message. */
function megabytes(bytes: number): string {
  if (bytes % (1024 * 1024) === 0) return `${bytes / (1024 * 1024)} MiB`;
  if (bytes < 1e6) return `${bytes} bytes`;
  return `${(bytes / 1e6).toFixed(bytes < 1e7 ? 1 : 0)} MB`;
}

/** How a read shared by every caller ended (never a rejection). */
type ReadOutcome =
  | { readonly text: string }
  | { readonly error: unknown; readonly refused?: Deno.FileInfo };

/** A read under way (`readTextWithin`), of one file, for every caller. */
interface SharedRead {
  /** When it was asked (performance.now()). */
  readonly asked: number;
  readonly outcome: Promise<ReadOutcome>;
}

/** The reads under way, by the file as named (one per file at a time). */
const readsUnderWay = new Map<string, SharedRead>();
/** When each read holding one of the {@linkcode FILE_READS_AT_ONCE} began. */
const readsRunning = new Set<{ readonly began: number }>();
/** The reads waiting for one. */
const readsWaiting: Array<() => void> = [];

/**
 * The text of `file` (at most `maxBytes`: longer fails), its `Deno.stat`
 * first given to `check` (which throws to refuse it), both within `ms` and
 * until `stop`: they fail then ({@linkcode ReadTimedOut}, or `stop`'s
 * reason), whatever the file system does with the read.
 *
 * Nothing of it holds the event loop, and nothing of it can exhaust the
 * runtime's blocking threads (the file system calls run on them, and a
 * call a hung file system never answers holds its thread for ever —
 * giving up on the promise frees nothing, and neither would a terminated
 * Worker): a file is read by one call at a time, every caller that asks
 * meanwhile sharing its outcome; at most {@linkcode FILE_READS_AT_ONCE}
 * files are read at once; and a file whose read has not ended within `ms`
 * fails every caller at once until that read ends (then it is read again:
 * a file system that answers again, a file put right). A file the stat
 * calls regular is opened non-blocking and stat again: a FIFO swapped in
 * meanwhile is refused at once ({@linkcode KindChanged}), never waited for.
 */
export async function readTextWithin(
  file: string,
  ms: number,
  stop?: AbortSignal,
  check: (info: Deno.FileInfo) => void = () => {},
  maxBytes: number = MAX_FILE_BYTES,
): Promise<string> {
  const deadline = new AbortController();
  const timer = alarm(ms, () => deadline.abort(new ReadTimedOut(ms)));
  const stopped = () => deadline.abort(closedWhileOpening());
  if (stop?.aborted) stopped();
  else stop?.addEventListener("abort", stopped, { once: true });
  let given: () => void = () => {};
  const givenUp = new Promise<never>((_, reject) => {
    given = () => reject(deadline.signal.reason);
    if (deadline.signal.aborted) given();
    else deadline.signal.addEventListener("abort", given, { once: true });
  });
  try {
    return await Promise.race([
      givenUp,
      (async () => {
        deadline.signal.throwIfAborted();
        const outcome = await sharedRead(file, ms, check, maxBytes);
        if ("text" in outcome) return outcome.text;
        // Refused by the check of the caller that began the read: by this
        // caller's own (its own words).
        if (outcome.refused !== undefined) check(outcome.refused);
        throw outcome.error;
      })(),
    ]);
  } finally {
    timer.clear();
    stop?.removeEventListener("abort", stopped);
    deadline.signal.removeEventListener("abort", given);
    givenUp.catch(() => {});
  }
}

/** The outcome of `file`'s read under way, or of one begun now. */
function sharedRead(
  file: string,
  ms: number,
  check: (info: Deno.FileInfo) => void,
  maxBytes: number,
): Promise<ReadOutcome> {
  const now = performance.now();
  const under = readsUnderWay.get(file);
  if (under !== undefined) {
    if (now - under.asked < ms) return under.outcome;
    throw new ReadTimedOut(
      ms,
      ` (a read of it asked ${
        Math.round((now - under.asked) / 1000)
      } s ago has not ended: a hung file system?)`,
    );
  }
  if (
    readsRunning.size >= FILE_READS_AT_ONCE &&
    [...readsRunning].every((read) => now - read.began >= ms)
  ) {
    throw new ReadTimedOut(
      ms,
      ` (${readsRunning.size} reads of other such files have not ended: a hung file system?)`,
    );
  }
  const read: SharedRead = {
    asked: now,
    outcome: readBounded(file, check, maxBytes).finally(() => {
      if (readsUnderWay.get(file) === read) readsUnderWay.delete(file);
    }),
  };
  readsUnderWay.set(file, read);
  return read.outcome;
}

/** The flags a file the stat calls regular is opened with. */
const OPEN_FLAGS = fsConstants.O_RDONLY | (fsConstants.O_NOCTTY ?? 0);

/** The bytes read at a time (a CA bundle: one or two reads). */
const READ_CHUNK = 256 * 1024;

/**
 * `file` read within one of the {@linkcode FILE_READS_AT_ONCE} (waiting
 * for one), as `readTextWithin` says; never fails (the outcome says).
 */
async function readBounded(
  file: string,
  check: (info: Deno.FileInfo) => void,
  maxBytes: number,
): Promise<ReadOutcome> {
  while (readsRunning.size >= FILE_READS_AT_ONCE) {
    await new Promise<void>((resolve) => readsWaiting.push(resolve));
  }
  const running = { began: performance.now() };
  readsRunning.add(running);
  try {
    const info = await Deno.stat(file);
    try {
      check(info);
    } catch (error) {
      return { error, refused: info };
    }
    if (info.isFile && info.size > maxBytes) {
      return { error: new FileTooLarge(maxBytes, info.size) };
    }
    // Non-blocking: a FIFO swapped in after the stat opens at once (and is
    // refused below) instead of waiting for a writer. A file the check let
    // through that is not regular (a caller's own choice) opens as it is.
    const handle = await fsOpen(
      file,
      OPEN_FLAGS | (info.isFile ? fsConstants.O_NONBLOCK ?? 0 : 0),
    );
    try {
      if (info.isFile) {
        const opened = await handle.stat();
        if (!opened.isFile()) {
          return {
            error: new KindChanged(
              opened.isFIFO()
                ? "a FIFO"
                : opened.isDirectory()
                ? "a directory"
                : opened.isSocket()
                ? "a socket"
                : "a device",
            ),
          };
        }
      }
      const chunks: Uint8Array[] = [];
      let length = 0;
      for (;;) {
        const chunk = new Uint8Array(READ_CHUNK);
        const { bytesRead } = await handle.read(chunk, 0, READ_CHUNK, null);
        if (bytesRead === 0) break;
        length += bytesRead;
        if (length > maxBytes) return { error: new FileTooLarge(maxBytes) };
        chunks.push(chunk.subarray(0, bytesRead));
      }
      const bytes = new Uint8Array(length);
      let at = 0;
      for (const chunk of chunks) {
        bytes.set(chunk, at);
        at += chunk.length;
      }
      // As Deno.readTextFile: bytes that are no UTF-8 read as U+FFFD.
      return { text: new TextDecoder().decode(bytes) };
    } finally {
      await handle.close().catch(() => {});
    }
  } catch (error) {
    return { error };
  } finally {
    readsRunning.delete(running);
    readsWaiting.shift()?.();
  }
}

/** What a file that is not a regular file is, in a word or two. */
function fileKind(info: Deno.FileInfo): string {
  if (info.isFifo) return "a FIFO";
  if (info.isCharDevice || info.isBlockDevice) return "a device";
  if (info.isSocket) return "a socket";
  return "not a file";
}

/** Why a file could not be read, in a few words. */
function readFailure(error: unknown): string {
  if (
    error instanceof ReadTimedOut || error instanceof FileTooLarge ||
    error instanceof KindChanged
  ) return error.message;
  // Deno's errors (the stat), or Node's codes (the open and the read).
  const code = (error as { code?: unknown } | null)?.code;
  if (error instanceof Deno.errors.NotFound || code === "ENOENT") {
    return "no such file";
  }
  if (
    error instanceof Deno.errors.PermissionDenied || code === "EACCES" ||
    code === "EPERM"
  ) return "permission denied";
  if (error instanceof Deno.errors.NotCapable) {
    return "dbport may not read files (--allow-read)";
  }
  if (error instanceof Deno.errors.IsADirectory || code === "EISDIR") {
    return "a directory";
  }
  if (error instanceof Deno.errors.InvalidData) return "not text";
  return error instanceof Error ? error.name : String(error);
}

/**
 * `open` as a socket factory that never throws: a failure (an SSH tunnel
 * down) is a socket that fails ({@linkcode failedSocket}). postgres.js
 * keeps a session whose factory threw connecting for ever: three failed
 * opens left a pool of three sessions that never asked the tunnel again,
 * every read then waiting out its timeout after the tunnel was back.
 */
export function openingSafely(
  open: () => Promise<Duplex>,
): () => Promise<Duplex> {
  return async () => {
    try {
      return await open();
    } catch (error) {
      return failedSocket(error);
    }
  };
}

/** The TLS socket over `raw` (or `raw` itself: `prefer`, answered 'N'). */
async function negotiate(
  raw: Duplex,
  plan: TlsPlan,
  ca: string | undefined,
  client: ClientCert | undefined,
  stop?: AbortSignal,
): Promise<Duplex> {
  let timedOut = false;
  const stopped = () => raw.destroy(closedWhileOpening());
  if (stop?.aborted) stopped();
  else stop?.addEventListener("abort", stopped, { once: true });
  const timer = alarm(CONNECT_TIMEOUT_SECONDS * 1000, () => {
    timedOut = true;
    raw.destroy(Object.assign(
      new Error("the database did not finish its TLS handshake in time"),
      { code: "CONNECT_TIMEOUT" },
    ));
  });
  try {
    if (!plan.direct) {
      raw.write(SSL_REQUEST);
      const answer = await firstChunk(raw);
      if (answer.length === 1 && answer[0] === 0x4e) { // 'N'
        if (plan.fallback) return raw;
        raw.destroy();
        throw tlsError("the server answered 'N' to the SSLRequest", true);
      }
      if (answer[0] !== 0x53) { // 'S'
        raw.destroy();
        throw tlsError("the server did not answer the SSLRequest", true);
      }
      if (answer.length > 1) {
        // Bytes an attacker on the path put before the handshake would be
        // read as the server's, inside TLS (CVE-2021-23222).
        raw.destroy();
        throw tlsError("the server sent unencrypted data after its 'S'");
      }
    }
    const secure = tls.connect({
      socket: raw as never,
      host: plan.host,
      servername: isIP(plan.host) ? undefined : plan.host,
      rejectUnauthorized: plan.verify,
      ...(ca === undefined ? {} : { ca }),
      ...(client === undefined ? {} : { cert: client.cert, key: client.key }),
      ...(plan.direct ? { ALPNProtocols: ["postgresql"] } : {}),
    });
    await new Promise<void>((resolve, reject) => {
      const failed = (error: Error) => {
        secure.destroy();
        reject(error);
      };
      secure.once("error", failed);
      raw.once("error", failed);
      secure.once("secureConnect", () => {
        secure.off("error", failed);
        raw.off("error", failed);
        resolve();
      });
    });
    // postgres.js listens to the TLS socket alone: a later failure of the
    // socket under it is the TLS socket's (never an 'error' nobody hears).
    raw.on("error", (error: Error) => secure.destroy(error));
    // Under TLS 1.3 the server judges the client's certificate after the
    // client's handshake is over: its refusal is an alert read later, as the
    // session starts. Named here (heard before postgres.js's listener).
    secure.on("error", (error: Error) => namedAlert(error, plan));
    closedUnanswered(secure, plan);
    secure.setNoDelay?.(true);
    return secure;
  } catch (error) {
    raw.destroy();
    if (stop?.aborted) throw closedWhileOpening();
    if (timedOut) {
      throw Object.assign(
        new Error("the database did not finish its TLS handshake in time"),
        { code: "CONNECT_TIMEOUT" },
      );
    }
    if (error instanceof Error) namedAlert(error, plan);
    throw wrapTls(error);
  } finally {
    timer.clear();
    stop?.removeEventListener("abort", stopped);
  }
}

/**
 * A TLS alert the server sent after the handshake (`error`, rewritten in
 * place: postgres.js hears the same error next), named as a refused client
 * certificate, or a certificate asked for and not given.
 */
function namedAlert(error: Error, plan: TlsPlan): void {
  const alert = /alert[:\s]+([A-Za-z ]+)/i.exec(error.message)?.[1]?.trim();
  if (alert === undefined) return;
  const why = plan.client === undefined
    ? /certificate ?required|handshake ?failure/i.test(alert)
      ? "the server asks for a client certificate, and the URL names none (sslcert, sslkey)"
      : "the server refused the TLS session"
    : /certificate|unknown ?ca|access ?denied|handshake ?failure|decrypt/i.test(
        alert,
      )
    ? `the server refused the client certificate the URL's sslcert names (${plan.client.certFile})`
    : "the server refused the TLS session";
  error.message = `${why} (TLS alert: ${alert})`;
  (error as { code?: unknown }).code = "ETLS";
}

/**
 * Fails a session whose server closes its TLS socket before any answer to
 * its startup, instead of letting it close: postgres.js opens a session
 * closed during its startup again at once (3.4.9 connection.js `closed`:
 * `if (initial) return reconnect()`), hundreds of times until the call's
 * timeout — what a server does that refuses the client certificate without
 * an alert. A cancel request's socket (its first write one), which the
 * server closes unanswered by design, is left alone. Watched by the socket's
 * own `write` and `emit` until its first write and its first answer, then
 * given back.
 */
function closedUnanswered(secure: tls.TLSSocket, plan: TlsPlan): void {
  type Emit = (event: string | symbol, ...args: unknown[]) => boolean;
  type Write = (...args: unknown[]) => boolean;
  const socket = secure as unknown as { emit: Emit; write: Write };
  // Undefined until the first write; false once answered (or a cancel).
  let startup: boolean | undefined;
  let watching = true;
  const write = socket.write;
  const watchedWrite: Write = (...args) => {
    if (startup === undefined) startup = !isCancelRequest(args[0]);
    // Given back, unless patched over meanwhile (pg_wire.ts `wired` binds
    // the socket's write and emit, and sets its own): then kept, one test
    // per call.
    if (socket.write === watchedWrite) socket.write = write;
    return write.apply(secure, args);
  };
  socket.write = watchedWrite;
  const emit = socket.emit;
  const watchedEmit: Emit = (event, ...args) => {
    if (watching) {
      if (event === "data" || event === "error") {
        watching = false;
      } else if ((event === "end" || event === "close") && startup === true) {
        watching = false;
        socket.emit("error", tlsError(closedBeforeAnswer(plan)));
      }
      if (!watching && socket.emit === watchedEmit) socket.emit = emit;
    }
    return emit.apply(secure, [event, ...args]);
  };
  socket.emit = watchedEmit;
}

/** Whether `chunk` is a CancelRequest (16 bytes, code 80877102). */
function isCancelRequest(chunk: unknown): boolean {
  if (!(chunk instanceof Uint8Array) || chunk.length !== 16) return false;
  const view = new DataView(chunk.buffer, chunk.byteOffset, 16);
  return view.getInt32(0) === 16 && view.getInt32(4) === 80877102;
}

/** Why a server closed a session's TLS socket before answering its startup. */
function closedBeforeAnswer(plan: TlsPlan): string {
  const closed =
    "the server closed the TLS session before answering the startup";
  return plan.client === undefined
    ? `${closed}; a server that requires a client certificate does so when none is given (name one with sslcert and sslkey)`
    : `${closed}; a server that requires a client certificate does so when it refuses the one given: check that a CA the server trusts (its ssl_ca_file) signed the certificate the URL's sslcert names (${plan.client.certFile})`;
}

/** The first bytes `raw` reads; fails if it errs or closes first. */
function firstChunk(raw: Duplex): Promise<Uint8Array> {
  return new Promise((resolve, reject) => {
    const done = () => {
      raw.off("data", data);
      raw.off("error", failed);
      raw.off("close", closed);
      raw.off("end", closed);
    };
    const data = (chunk: Uint8Array) => {
      done();
      resolve(chunk);
    };
    const failed = (error: Error) => {
      done();
      reject(error);
    };
    const closed = () => {
      done();
      reject(tlsError("the server closed the connection at its SSLRequest"));
    };
    raw.on("data", data);
    raw.once("error", failed);
    raw.once("close", closed);
    raw.once("end", closed);
  });
}

/** A TLS failure of dbport's own words (code ETLS: a connect error). */
function tlsError(message: string, refused = false): Error {
  return Object.assign(
    new Error(refused ? `${message} (TLS refused)` : message),
    { code: refused ? "ETLSREFUSED" : "ETLS" },
  );
}

/** A handshake's failure, named as a TLS failure (a connect error). */
function wrapTls(error: unknown): Error {
  if (!(error instanceof Error)) return tlsError(String(error));
  const code = (error as { code?: unknown }).code;
  if (typeof code === "string" && /^(E[A-Z]+|CONNECT_TIMEOUT)$/.test(code)) {
    return error;
  }
  return Object.assign(
    new Error(`the TLS handshake failed: ${error.message}`),
    { code: "ETLS", tls: code },
  );
}

/**
 * A socket that fails with `error` once postgres.js listens to it (after
 * the factory's promise settled: a timer, not a microtask), and closes a
 * turn later: postgres.js fails the session's first statement with
 * `error`, and only then does the close ask waiting reads again (pg_pools.ts
 * `untilEnded`) — closed in the same turn, the statement itself was asked
 * again, and again, until its timeout.
 */
function failedSocket(error: unknown): Duplex {
  const socket = new Duplex({
    read() {},
    write(_chunk, _encoding, done) {
      done();
    },
  });
  setTimeout(() => {
    // Closed already (a pool that ended refuses a session's socket at its
    // first write: pg_pools.ts `cancelsOnly`), nobody listens any more.
    if (socket.destroyed) return;
    if (socket.listenerCount("error") > 0) socket.emit("error", error);
    setTimeout(() => socket.destroy(), 0);
  }, 0);
  return socket;
}
