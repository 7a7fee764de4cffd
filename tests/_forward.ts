/**
 * A small TCP forwarder for tests: listens on another loopback address
 * (127.0.0.2, ::1) and relays each connection to a database on 127.0.0.1, so
 * a test can prove dbport reaches a host other than 127.0.0.1 without any
 * traffic leaving the machine.
 *
 * @module
 */

/** A running forwarder; dispose to stop it and every relayed connection. */
export interface Forwarder extends AsyncDisposable {
  /** The address to put in a URL (`127.0.0.2`, `[::1]`). */
  host: string;
  port: number;
}

/** Forward `hostname`:(free port) to 127.0.0.1:`target`. */
export function forward(hostname: string, target: number): Forwarder {
  const listener = Deno.listen({ hostname, port: 0 });
  const open = new Set<Deno.Conn>();
  const relays: Promise<unknown>[] = [];
  const accepting = (async () => {
    for await (const client of listener) {
      const upstream = Deno.connect({ hostname: "127.0.0.1", port: target });
      open.add(client);
      relays.push(
        upstream.then(async (server) => {
          open.add(server);
          await Promise.allSettled([
            client.readable.pipeTo(server.writable),
            server.readable.pipeTo(client.writable),
          ]);
        }).catch(() => {}),
      );
    }
  })().catch(() => {});
  const port = (listener.addr as Deno.NetAddr).port;
  return {
    host: hostname.includes(":") ? `[${hostname}]` : hostname,
    port,
    async [Symbol.asyncDispose]() {
      listener.close();
      for (const conn of open) {
        try {
          conn.close();
        } catch { /* already closed */ }
      }
      await accepting;
      await Promise.allSettled(relays);
    },
  };
}
