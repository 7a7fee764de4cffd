/**
 * The files a PostgreSQL URL's TLS parameters name (`sslrootcert`,
 * `sslcert`, `sslkey`), read for dbport's own TLS (pg_tls.ts `secured`)
 * without ever holding the event loop or the runtime's blocking threads:
 * only a regular file of bounded size, within the connect timeout and until
 * the driver closes, one read of a file at a time shared by every caller,
 * a few files at once (`readTextWithin`); the client certificate and its
 * key read, decrypted and checked to be a pair (`readClientCert`). Every
 * failure is a connect error naming the parameter and the file.
 *
 * @module
 */

import { createPrivateKey, X509Certificate } from "node:crypto";
import { constants as fsConstants } from "node:fs";
import { open as fsOpen } from "node:fs/promises";
import { alarm } from "../../base/alarms.ts";
import { CONNECT_TIMEOUT_SECONDS } from "./pg_options.ts";
import { closedWhileOpening, tlsError } from "./pg_tls_errors.ts";
import type { ClientCertFiles } from "./pg_tls_plan.ts";

/** A client certificate read, its key decrypted (PEM, PKCS #8). */
export interface ClientCert {
  readonly cert: string;
  readonly key: string;
}

/**
 * The certificate and key `files` name, read (asynchronously,
 * `readNamedFile`), the key decrypted with its passphrase and checked to be
 * the certificate's. Every failure is a connect error naming the parameter
 * and the file — never the passphrase.
 */
export async function readClientCert(
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
export async function readNamedFile(
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
