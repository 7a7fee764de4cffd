/**
 * A TCP relay to the test PostgreSQL that opens each session late: a pool
 * whose sessions are still connecting when a test closes or replaces it.
 *
 * @module
 */

import { POSTGRES_URL } from "./_db.ts";

/** A relay to PostgreSQL that opens each session `delayMs` late. */
export function slowRelay(
  delayMs: number,
): { url: string; accepted(): number; close(): void } {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const open = new Set<Deno.Conn>();
  const target = new URL(POSTGRES_URL);
  let accepted = 0;
  void (async () => {
    for await (const client of listener) {
      accepted++;
      open.add(client);
      void (async () => {
        await new Promise((resolve) => setTimeout(resolve, delayMs));
        const server = await Deno.connect({
          hostname: target.hostname,
          port: Number(target.port || 5432),
        });
        open.add(server);
        await Promise.allSettled([
          client.readable.pipeTo(server.writable),
          server.readable.pipeTo(client.writable),
        ]);
      })().catch(() => {});
    }
  })().catch(() => {});
  const url = new URL(POSTGRES_URL);
  url.port = String((listener.addr as Deno.NetAddr).port);
  return {
    url: url.toString(),
    accepted: () => accepted,
    close() {
      listener.close();
      for (const conn of open) {
        try {
          conn.close();
        } catch { /* closed already */ }
      }
    },
  };
}
