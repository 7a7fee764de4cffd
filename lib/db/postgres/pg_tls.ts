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
 * What a URL asks for is read in pg_tls_plan.ts, the files it names in
 * pg_tls_files.ts; this module opens, negotiates and watches the socket.
 *
 * @module
 */

import { isIP } from "node:net";
import tls from "node:tls";
import { Duplex } from "node:stream";
import { alarm } from "../../base/alarms.ts";
import { CONNECT_TIMEOUT_SECONDS } from "./pg_options.ts";
import { closedWhileOpening, tlsError } from "./pg_tls_errors.ts";
import {
  type ClientCert,
  readClientCert,
  readNamedFile,
} from "./pg_tls_files.ts";
import type { TlsPlan } from "./pg_tls_plan.ts";

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
 * `error`, and only then does the close ask waiting reads again (pg_pool_sockets.ts
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
    // first write: pg_pool_sockets.ts `cancelsOnly`), nobody listens any more.
    if (socket.destroyed) return;
    if (socket.listenerCount("error") > 0) socket.emit("error", error);
    setTimeout(() => socket.destroy(), 0);
  }, 0);
  return socket;
}
