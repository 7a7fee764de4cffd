/**
 * A loopback TCP proxy in front of a database that counts what a client
 * asks of it: round trips and statements, read from the wire protocol
 * itself (bench "round trips per read"). Only the connections made through
 * the proxy are counted — the database servers are shared, so their own
 * counters (pg_stat_database, MariaDB's global Com_*) would count other
 * people's work; pg_stat_statements and performance_schema are not loaded.
 *
 * - PostgreSQL: a round trip is a `ReadyForQuery` (`Z`) the server sends;
 *   a statement is a simple `Query` (`Q`) or an extended `Execute` (`E`).
 * - MySQL/MariaDB: a round trip is a client command (a packet with sequence
 *   id 0, `COM_STMT_CLOSE` excepted: it has no answer); a statement is a
 *   `COM_QUERY` or a `COM_STMT_EXECUTE`.
 *
 * @module
 */

/** The counts so far. */
export interface WireCounts {
  roundTrips: number;
  statements: number;
}

/** A started counting proxy. */
export interface WireCounter extends AsyncDisposable {
  readonly port: number;
  readonly counts: WireCounts;
}

type Protocol = "postgres" | "mysql";

/** Reads length-prefixed messages from a byte stream split anyhow. */
class Framer {
  #buffer = new Uint8Array(0);
  #started: boolean;
  constructor(
    readonly protocol: Protocol,
    readonly onMessage: (message: Uint8Array) => void,
    readonly side: "client" | "server",
  ) {
    // PostgreSQL's first client messages (SSL request, startup) have no
    // type byte; its server may answer an SSL request with one byte.
    this.#started = protocol === "mysql";
  }

  push(chunk: Uint8Array): void {
    const joined = new Uint8Array(this.#buffer.length + chunk.length);
    joined.set(this.#buffer);
    joined.set(chunk, this.#buffer.length);
    let at = 0;
    for (;;) {
      const size = this.#size(joined, at);
      if (size === null || at + size > joined.length) break;
      this.onMessage(joined.subarray(at, at + size));
      at += size;
    }
    this.#buffer = joined.slice(at);
  }

  /** The whole message's size at `at`, or null when its header is not in. */
  #size(bytes: Uint8Array, at: number): number | null {
    const view = new DataView(bytes.buffer, bytes.byteOffset);
    if (this.protocol === "mysql") {
      if (at + 4 > bytes.length) return null;
      return 4 + (bytes[at]! | bytes[at + 1]! << 8 | bytes[at + 2]! << 16);
    }
    if (!this.#started && this.side === "server") {
      if (at + 1 > bytes.length) return null;
      this.#started = true;
      return bytes[at] === 0x4e || bytes[at] === 0x53
        ? 1
        : this.#size(bytes, at);
    }
    if (!this.#started) {
      if (at + 4 > bytes.length) return null;
      const length = view.getInt32(at);
      // An SSLRequest/GSSENCRequest is answered by one byte; the startup
      // message that follows has no type byte either.
      const code = at + 8 <= bytes.length ? view.getInt32(at + 4) : 0;
      if (code !== 80877103 && code !== 80877104) this.#started = true;
      return length;
    }
    if (at + 5 > bytes.length) return null;
    return 1 + view.getInt32(at + 1);
  }
}

/** Count `protocol` traffic between clients and `upstreamPort`. */
export function wireCounter(
  protocol: Protocol,
  upstreamPort: number,
): WireCounter {
  const counts: WireCounts = { roundTrips: 0, statements: 0 };
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const open = new Set<Deno.Conn>();
  const fromClient = (message: Uint8Array) => {
    if (protocol === "postgres") {
      if (message[0] === 0x51 || message[0] === 0x45) counts.statements++;
      return;
    }
    if (message[3] !== 0) return;
    const command = message[4];
    if (command !== 0x19) counts.roundTrips++;
    if (command === 0x03 || command === 0x17) counts.statements++;
  };
  const fromServer = (message: Uint8Array) => {
    if (protocol === "postgres" && message[0] === 0x5a) counts.roundTrips++;
  };
  const pipe = async (
    from: Deno.Conn,
    to: Deno.Conn,
    framer: Framer,
  ) => {
    try {
      for await (const chunk of from.readable) {
        framer.push(chunk);
        let offset = 0;
        while (offset < chunk.length) {
          offset += await to.write(chunk.subarray(offset));
        }
      }
    } catch {
      // Either side closed.
    } finally {
      for (const conn of [from, to]) {
        try {
          conn.close();
        } catch { /* closed already */ }
        open.delete(conn);
      }
    }
  };
  const accepting = (async () => {
    for await (const client of listener) {
      const server = await Deno.connect({
        hostname: "127.0.0.1",
        port: upstreamPort,
      });
      open.add(client);
      open.add(server);
      // The MySQL server speaks first; PostgreSQL's client does.
      void pipe(client, server, new Framer(protocol, fromClient, "client"));
      void pipe(server, client, new Framer(protocol, fromServer, "server"));
    }
  })().catch(() => {});
  return {
    port: (listener.addr as Deno.NetAddr).port,
    counts,
    async [Symbol.asyncDispose]() {
      listener.close();
      for (const conn of open) {
        try {
          conn.close();
        } catch { /* closed already */ }
      }
      await accepting;
    },
  };
}
