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
 */

const FIXTURES = new URL("./fixtures/tls/", import.meta.url);

/** The test CA's certificate (PEM): what `sslrootcert` names. */
export const TEST_CA_FILE = new URL("ca.pem", FIXTURES).pathname;

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
  };
  const conns = new Set<Deno.Conn>();
  const track = <C extends Deno.Conn>(conn: C): C => {
    conns.add(conn);
    return conn;
  };
  const toServer = () =>
    Deno.connect({
      hostname: target.hostname,
      port: Number(target.port || 5432),
    }).then(track);
  const outer = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const inner = Deno.listenTls({ hostname: "127.0.0.1", port: 0, cert, key });
  const innerPort = (inner.addr as Deno.NetAddr).port;

  /** Cancel requests held now (`cancelDelayMs`), each with its release. */
  const holds = new Map<ReturnType<typeof setTimeout>, () => void>();

  /** Relay `client` (its first bytes `head` already read) to a server. */
  const passOn = async (
    client: Deno.Conn,
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
  client: Deno.Conn,
  reader: ReadableStreamDefaultReader<Uint8Array>,
  head: Uint8Array,
  server: Deno.Conn,
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
