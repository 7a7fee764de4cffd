/**
 * A TLS-terminating proxy in front of a PostgreSQL server whose own TLS is
 * off (the shared test server): it answers a connection's SSLRequest with
 * 'S', does TLS as the server would with a test certificate
 * (tests/fixtures/tls: a test-only CA, and certificates it signed for
 * `localhost`/127.0.0.1 and for `other.example`; their keys are test-only
 * keys, committed on purpose, never trusted anywhere else), and forwards the
 * clear bytes to the server. A connection that starts in clear (no
 * SSLRequest, or a CancelRequest) is forwarded as it is; a CancelRequest
 * inside TLS is passed on too — counted, and held back `cancelDelayMs`
 * when asked (a slow network, as tests/_tcp_proxy.ts `slowCancelProxy`).
 *
 * Inside, the SSLRequest is read on a plain listener, which then relays the
 * connection's remaining bytes to a `Deno.listenTls` listener of its own:
 * Deno upgrades only a client's socket in place.
 *
 * `clientCerts` asks for a client certificate signed by the test client CA
 * (tests/fixtures/tls/client-ca.pem), as a server whose pg_hba says `cert`
 * or `clientcert=verify-full` does: the TLS listener is then node:tls's
 * (`Deno.listenTls` cannot ask for one). A connection that shows none gets
 * PostgreSQL's own answer to its startup (FATAL 28000 "connection requires
 * a valid client certificate"); one whose certificate the CA did not sign
 * is closed at once — a PostgreSQL server fails that handshake with an
 * alert ("unknown ca"), which node:tls's server in Deno does not send (with
 * `rejectUnauthorized` it hangs up too).
 */

import tls from "node:tls";

const FIXTURES = new URL("./fixtures/tls/", import.meta.url);

/** The test CA's certificate (PEM): what `sslrootcert` names. */
export const TEST_CA_FILE = new URL("ca.pem", FIXTURES).pathname;

/**
 * Test client certificates (tests/fixtures/tls/README.md): `client`, signed
 * by the client CA a `clientCerts` proxy trusts, its key in clear and
 * encrypted (with {@linkcode TEST_KEY_PASSPHRASE}; PKCS #8 and OpenSSL's
 * traditional format); `stranger`, signed by
 * a CA nobody trusts.
 */
export const TEST_CLIENT = {
  cert: new URL("client.pem", FIXTURES).pathname,
  key: new URL("client.key", FIXTURES).pathname,
  encryptedKey: new URL("client-encrypted.key", FIXTURES).pathname,
  /** The same, in OpenSSL's traditional format (`Proc-Type: 4,ENCRYPTED`). */
  traditionalKey: new URL("client-encrypted-traditional.key", FIXTURES)
    .pathname,
  strangerCert: new URL("stranger.pem", FIXTURES).pathname,
  strangerKey: new URL("stranger.key", FIXTURES).pathname,
};

/** The passphrase of `client-encrypted.key` (test-only). */
export const TEST_KEY_PASSPHRASE = "dbport-test-passphrase";

/** A running proxy. */
export interface TlsPgProxy {
  /** `target` with the proxy's host (127.0.0.1) and port. */
  readonly url: string;
  /** What went through it. */
  readonly stats: {
    /** Connections that asked for TLS and got it. */
    tls: number;
    /** Connections that spoke in clear throughout. */
    clear: number;
    /** SSLRequests answered 'N' (`refuseTls`). */
    refused: number;
    /** Cancel requests passed on (in clear or inside TLS). */
    cancels: number;
    /**
     * Messages clients sent inside TLS after their startup, by type
     * (`Q` simple query, `P` Parse, `S` Sync, …), and their writes (TLS
     * records relayed): what a benchmark counts per read.
     */
    messages: Record<string, number>;
    writes: number;
    /**
     * Statements in them: a Parse's one, a simple query's parts between
     * semicolons (naively: what dbport and postgres.js send has no
     * semicolon in a literal).
     */
    statements: number;
    /** `clientCerts`: connections whose client certificate was accepted. */
    clientCerts: number;
    /** `clientCerts`: connections refused for showing none. */
    noClientCert: number;
    /**
     * `clientCerts`: connections refused for an untrusted certificate
     * (`"handshake"`: every handshake refused).
     */
    untrustedClientCert: number;
  };
  /** Stop listening and close every connection through the proxy. */
  close(): Promise<void>;
}

/** Options of {@linkcode tlsPgProxy}. */
export interface TlsPgProxyOptions {
  /** The certificate shown: for `localhost` (default) or `other.example`. */
  cert?: "localhost" | "other";
  /** How long each cancel request is held back (0: none). */
  cancelDelayMs?: number;
  /** Answer the SSLRequest with 'N' and go on in clear (TLS off). */
  refuseTls?: boolean;
  /**
   * Require a client certificate the test client CA signed: `true` as
   * PostgreSQL does (see the module's comment); `"handshake"` refused in the
   * TLS handshake by node:tls (`rejectUnauthorized`: an alert when none is
   * shown, a hang-up for an untrusted one).
   */
  clientCerts?: boolean | "handshake";
}

const SSL_REQUEST = 80877103;
const CANCEL_REQUEST = 80877102;

/** Start a proxy in front of `target`; see the module's comment. */
export async function tlsPgProxy(
  target: URL,
  options: TlsPgProxyOptions = {},
): Promise<TlsPgProxy> {
  const name = options.cert ?? "localhost";
  const [cert, key] = await Promise.all([
    Deno.readTextFile(new URL(`${name}.pem`, FIXTURES)),
    Deno.readTextFile(new URL(`${name}.key`, FIXTURES)),
  ]);
  const stats = {
    tls: 0,
    clear: 0,
    refused: 0,
    cancels: 0,
    messages: {} as Record<string, number>,
    writes: 0,
    statements: 0,
    clientCerts: 0,
    noClientCert: 0,
    untrustedClientCert: 0,
  };
  const conns = new Set<Pipe>();
  const track = <C extends Pipe>(conn: C): C => {
    conns.add(conn);
    return conn;
  };
  const toServer = () =>
    Deno.connect({
      hostname: target.hostname,
      port: Number(target.port || 5432),
    }).then(track);
  const outer = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const inner = options.clientCerts
    ? await nodeTlsListener(
      cert,
      key,
      await Deno.readTextFile(new URL("client-ca.pem", FIXTURES)),
      stats,
      options.clientCerts === "handshake",
    )
    : Deno.listenTls({ hostname: "127.0.0.1", port: 0, cert, key });
  const innerPort = (inner.addr as Deno.NetAddr).port;

  /** Cancel requests held now (`cancelDelayMs`), each with its release. */
  const holds = new Map<ReturnType<typeof setTimeout>, () => void>();

  /** Relay `client` (its first bytes `head` already read) to a server. */
  const passOn = async (
    client: Pipe,
    reader: ReadableStreamDefaultReader<Uint8Array>,
    head: Uint8Array,
    count?: (chunk: Uint8Array) => void,
  ) => {
    if (isMessage(head, CANCEL_REQUEST)) {
      stats.cancels++;
      if (options.cancelDelayMs) {
        // Ended by `close` too: a test over before the hold leaves no timer.
        await new Promise<void>((resolve) => {
          const timer = setTimeout(() => {
            holds.delete(timer);
            resolve();
          }, options.cancelDelayMs);
          holds.set(timer, resolve);
        });
      }
    }
    await relay(client, reader, head, await toServer(), count);
  };

  const outerServing = (async () => {
    for await (const conn of outer) {
      track(conn);
      void (async () => {
        const reader = conn.readable.getReader();
        const head = await readAtLeast(reader, 8);
        if (head === null) return conn.close();
        if (!isMessage(head, SSL_REQUEST)) {
          stats.clear++;
          return await passOn(conn, reader, head);
        }
        if (options.refuseTls) {
          stats.refused++;
          const writer = conn.writable.getWriter();
          await writer.write(Uint8Array.of(0x4e)); // 'N'
          writer.releaseLock();
          return await passOn(conn, reader, head.subarray(8));
        }
        stats.tls++;
        const writer = conn.writable.getWriter();
        await writer.write(Uint8Array.of(0x53)); // 'S'
        writer.releaseLock();
        const toInner = await Deno.connect({
          hostname: "127.0.0.1",
          port: innerPort,
        }).then(track);
        await relay(conn, reader, head.subarray(8), toInner);
      })().catch(() => {});
    }
  })().catch(() => {});

  const innerServing = (async () => {
    for await (const conn of inner) {
      track(conn);
      void (async () => {
        const reader = conn.readable.getReader();
        const head = await readAtLeast(reader, 8);
        if (head === null) return conn.close();
        await passOn(conn, reader, head, messageCounter(stats));
      })().catch(() => {});
    }
  })().catch(() => {});

  const url = new URL(target);
  url.hostname = "127.0.0.1";
  url.port = String((outer.addr as Deno.NetAddr).port);
  return {
    url: url.toString(),
    stats,
    async close() {
      for (const [timer, resolve] of holds) {
        clearTimeout(timer);
        resolve();
      }
      holds.clear();
      outer.close();
      inner.close();
      for (const conn of conns) {
        try {
          conn.close();
        } catch {
          // Closed already.
        }
      }
      await Promise.all([outerServing, innerServing]);
    },
  };
}

/** What the relay needs of a connection: a `Deno.Conn`'s streams and close. */
interface Pipe {
  readonly readable: ReadableStream<Uint8Array>;
  readonly writable: WritableStream<Uint8Array>;
  close(): void;
}

/** A listener of {@linkcode Pipe}s, as `Deno.listenTls`'s of connections. */
interface PipeListener extends AsyncIterable<Pipe> {
  readonly addr: Deno.Addr;
  close(): void;
}

/**
 * A node:tls listener that asks for a client certificate the client CA
 * `ca` signed: the connections that show one come out; the others are
 * answered (none: PostgreSQL's FATAL 28000) or closed (untrusted) here.
 */
async function nodeTlsListener(
  cert: string,
  key: string,
  ca: string,
  stats: TlsPgProxy["stats"],
  inHandshake: boolean,
): Promise<PipeListener> {
  const ready: Pipe[] = [];
  let wake: (() => void) | null = null;
  let closed = false;
  const sockets = new Set<tls.TLSSocket>();
  const server = tls.createServer({
    cert,
    key,
    ca,
    requestCert: true,
    rejectUnauthorized: inHandshake,
  }, (socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
    socket.on("error", () => {});
    const peer = socket.getPeerCertificate();
    if (peer === null || Object.keys(peer).length === 0) {
      stats.noClientCert++;
      // As PostgreSQL answers a startup without the certificate pg_hba's
      // `cert` (or clientcert=verify-full) asks for.
      socket.once("data", () => {
        socket.end(errorResponse(
          "28000",
          "connection requires a valid client certificate",
        ));
      });
      return;
    }
    if (!socket.authorized) {
      stats.untrustedClientCert++;
      socket.destroy();
      return;
    }
    stats.clientCerts++;
    ready.push(nodePipe(socket));
    wake?.();
  });
  server.on("tlsClientError", () => {
    if (inHandshake) stats.untrustedClientCert++;
  });
  await new Promise<void>((resolve) =>
    server.listen(0, "127.0.0.1", () => resolve())
  );
  const { port } = server.address() as { port: number };
  return {
    addr: { transport: "tcp", hostname: "127.0.0.1", port },
    close() {
      closed = true;
      server.close();
      for (const socket of sockets) socket.destroy();
      wake?.();
    },
    async *[Symbol.asyncIterator]() {
      while (!closed) {
        const next = ready.shift();
        if (next !== undefined) {
          yield next;
          continue;
        }
        await new Promise<void>((resolve) => wake = resolve);
        wake = null;
      }
    },
  };
}

/** A node socket as a {@linkcode Pipe}. */
function nodePipe(socket: tls.TLSSocket): Pipe {
  const readable = new ReadableStream<Uint8Array>({
    start(controller) {
      const end = () => {
        try {
          controller.close();
        } catch {
          // Closed already.
        }
      };
      socket.on("data", (chunk: Uint8Array) => {
        try {
          controller.enqueue(new Uint8Array(chunk));
        } catch {
          // Closed already.
        }
      });
      socket.once("end", end);
      socket.once("close", end);
    },
  });
  const writable = new WritableStream<Uint8Array>({
    write: (chunk) =>
      new Promise<void>((resolve, reject) =>
        socket.write(chunk, (error) => error ? reject(error) : resolve())
      ),
  });
  return { readable, writable, close: () => socket.destroy() };
}

/** A PostgreSQL ErrorResponse (FATAL) of `code` and `message`. */
function errorResponse(code: string, message: string): Uint8Array {
  const fields = new TextEncoder().encode(
    `SFATAL\0VFATAL\0C${code}\0M${message}\0\0`,
  );
  const bytes = new Uint8Array(5 + fields.length);
  bytes[0] = 0x45; // 'E'
  new DataView(bytes.buffer).setInt32(1, 4 + fields.length);
  bytes.set(fields, 5);
  return bytes;
}

/** Whether `head` starts with the 8-byte request `code` names. */
function isMessage(head: Uint8Array, code: number): boolean {
  if (head.length < 8) return false;
  const view = new DataView(head.buffer, head.byteOffset, head.byteLength);
  const length = view.getInt32(0);
  return (length === 8 || length === 16) && view.getInt32(4) === code;
}

/** At least `n` bytes from `reader` (all it had at once), or null at its end. */
async function readAtLeast(
  reader: ReadableStreamDefaultReader<Uint8Array>,
  n: number,
): Promise<Uint8Array | null> {
  let bytes = new Uint8Array(0);
  while (bytes.length < n) {
    const { done, value } = await reader.read();
    if (done) return null;
    const joined = new Uint8Array(bytes.length + value.length);
    joined.set(bytes);
    joined.set(value, bytes.length);
    bytes = joined;
  }
  return bytes;
}

/**
 * `client`'s bytes (`head` first, then the rest of `reader`) to `server`,
 * and `server`'s to `client`; either side's end closes both.
 */
async function relay(
  client: Pipe,
  reader: ReadableStreamDefaultReader<Uint8Array>,
  head: Uint8Array,
  server: Pipe,
  count?: (chunk: Uint8Array) => void,
): Promise<void> {
  const close = () => {
    for (const conn of [client, server]) {
      try {
        conn.close();
      } catch {
        // Closed already.
      }
    }
  };
  const back = (async () => {
    const writer = client.writable.getWriter();
    for await (const chunk of server.readable) await writer.write(chunk);
  })().catch(() => {}).finally(close);
  const writer = server.writable.getWriter();
  try {
    if (head.length > 0) {
      count?.(head);
      await writer.write(head);
    }
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      count?.(value);
      await writer.write(value);
    }
  } catch {
    // Either side closed.
  }
  close();
  await back;
}

/**
 * Counts a client's messages by type into `stats`, after the first message
 * (the startup or a cancel request, which has no type byte).
 */
function messageCounter(
  stats: {
    messages: Record<string, number>;
    writes: number;
    statements: number;
  },
): (chunk: Uint8Array) => void {
  let first = true;
  let pending = new Uint8Array(0);
  return (chunk) => {
    if (!first) stats.writes++;
    const bytes = new Uint8Array(pending.length + chunk.length);
    bytes.set(pending);
    bytes.set(chunk, pending.length);
    let at = 0;
    for (;;) {
      const typed = first ? 0 : 1;
      if (bytes.length - at < typed + 4) break;
      const view = new DataView(bytes.buffer, bytes.byteOffset + at + typed);
      const length = view.getInt32(0);
      if (bytes.length - at < typed + length) break;
      if (!first) {
        const type = String.fromCharCode(bytes[at]!);
        stats.messages[type] = (stats.messages[type] ?? 0) + 1;
        if (type === "P") stats.statements++;
        if (type === "Q") {
          const text = new TextDecoder().decode(
            bytes.subarray(at + 5, at + 1 + length - 1),
          );
          stats.statements += text.split(";").filter((part) =>
            part.replace(/--[^\n]*/g, "").trim() !== ""
          ).length;
        }
      }
      at += typed + length;
      first = false;
    }
    pending = bytes.slice(at);
  };
}
