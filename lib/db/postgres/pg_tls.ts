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
 * refused).
 *
 * @module
 */

import { isIP } from "node:net";
import tls from "node:tls";
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
  // A CA named without an sslmode asks for a checked server, never clear
  // text (outsider stop 51: the password went to a hop that asked); an
  // explicit `sslmode=disable` is the owner's word.
  const ssl = options.ssl ||
    (rootCert !== undefined && !hasSslMode(url) ? "verify-full" : false);
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
  };
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
    "TLS with a CA the URL names (sslrootcert) needs a single host: dbport checks the server's certificate against it only on one host; name one host",
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

/**
 * `url` without the parameters dbport's TLS reads and postgres.js would pass
 * to the server as startup parameters (`sslrootcert`).
 */
export function withoutOwnTlsParams(url: string): string {
  const params = queryOf(url);
  if (!params.has("sslrootcert")) return url;
  params.delete("sslrootcert");
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
 */
export function secured(
  open: () => Promise<Duplex>,
  plan: TlsPlan,
): () => Promise<Duplex> {
  let ca: Promise<string> | undefined;
  return openingSafely(async () => {
    if (plan.caFile !== undefined) {
      ca ??= Deno.readTextFile(plan.caFile).catch(() => {
        ca = undefined;
        throw tlsError(
          "the CA file the URL's sslrootcert names could not be read",
        );
      });
    }
    return negotiate(await open(), plan, await ca);
  });
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
): Promise<Duplex> {
  let timedOut = false;
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
    secure.setNoDelay?.(true);
    return secure;
  } catch (error) {
    raw.destroy();
    if (timedOut) {
      throw Object.assign(
        new Error("the database did not finish its TLS handshake in time"),
        { code: "CONNECT_TIMEOUT" },
      );
    }
    throw wrapTls(error);
  } finally {
    timer.clear();
  }
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
