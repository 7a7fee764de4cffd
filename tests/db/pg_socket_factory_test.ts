/**
 * A session's socket factory that fails (an SSH tunnel down for a moment):
 * postgres.js keeps a session whose factory threw "connecting" for ever, so
 * three failed opens left every session of the pool stuck and each later
 * read waited out its timeout although the tunnel was back. dbport's
 * factory never throws: a failure is a socket that fails
 * (pg_tls.ts `openingSafely`).
 *
 * @module
 */

import { assertEquals } from "@std/assert";
import { connect } from "node:net";
import type { Duplex } from "node:stream";
import { openPostgres } from "../../lib/db/postgres/postgres.ts";
import { needs, POSTGRES_URL, READ_OPTIONS } from "../_db.ts";
import { outcome } from "../_outsider.ts";
import { waitUntil } from "../_wait.ts";

for (const wiredReads of [true, false]) {
  Deno.test({
    name: `postgres (${
      wiredReads ? "wired" : "postgres.js's"
    } reads): a tunnel down for three opens fails three reads, and the next reads answer once it is back`,
    ...needs("postgres"),
    async fn() {
      const url = new URL(POSTGRES_URL);
      let down = 3;
      let opened = 0;
      let calls = 0;
      const sockets: Duplex[] = [];
      const driver = openPostgres({
        url: POSTGRES_URL,
        secrets: [],
        wiredReads,
        socket: () => {
          calls++;
          if (down > 0) {
            down--;
            return Promise.reject(new Error("the SSH tunnel is down"));
          }
          opened++;
          const socket = connect(Number(url.port || 5432), url.hostname);
          sockets.push(socket);
          return Promise.resolve(socket as Duplex);
        },
      });
      try {
        const read = () =>
          outcome(driver.query("select 1 as one", {
            ...READ_OPTIONS,
            timeoutMs: 5_000,
            signal: new AbortController().signal,
          }));
        const seen: string[] = [];
        // Until the tunnel is back every read fails with its error, never
        // with a timeout; then every read answers.
        while (seen.length < 10 && !seen.at(-1)?.startsWith("answered")) {
          seen.push(await read());
        }
        for (const line of seen.slice(0, -1)) {
          assertEquals(line.includes("the SSH tunnel is down"), true, line);
        }
        assertEquals(seen.at(-1), "answered [[1]]");
        for (let i = 0; i < 3; i++) {
          assertEquals(await read(), "answered [[1]]");
        }
        assertEquals(down, 0);
        assertEquals(opened > 0, true);
      } finally {
        await driver.close();
        // A session postgres.js was still opening for a failed reserve()
        // (3.4.9 index.js: one more open, on a timer) closes just after:
        // its timers would outlive the test.
        await waitUntil(
          "every session's socket closed",
          () => sockets.every((socket) => socket.destroyed),
        );
      }
    },
  });
}
