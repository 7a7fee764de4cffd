/**
 * A MariaDB read cut at its row cap (issue 33, the load test's RSS): the
 * session is killed and thrown away, and its socket closed with it. mysql2's
 * `destroy()` alone half-closed a session the cut had paused, which then
 * never read the server's end: every cut read kept a socket and the rows
 * the server had still sent (the load test's 800 MiB peak).
 */

import { assert, assertEquals } from "@std/assert";
import { openMysql } from "../../lib/db/mysql/mysql.ts";
import { needs, openFixture, READ_OPTIONS } from "../_db.ts";
import { waitUntil } from "../_wait.ts";

/** This process's open sockets. */
function sockets(): number {
  let count = 0;
  for (const entry of Deno.readDirSync("/proc/self/fd")) {
    try {
      if (
        Deno.readLinkSync(`/proc/self/fd/${entry.name}`).startsWith("socket:")
      ) {
        count++;
      }
    } catch { /* closed meanwhile */ }
  }
  return count;
}

Deno.test({
  name: "MariaDB: forty reads cut at their row cap leave no socket behind",
  ...needs("mysql"),
  async fn() {
    await using fixture = await openFixture("mysql");
    const driver = openMysql({ url: fixture.url, secrets: [] });
    try {
      const read = async () => {
        const result = await driver.query(
          "select seq, md5(seq) from seq_1_to_5000",
          { ...READ_OPTIONS, maxRows: 10 },
        );
        assertEquals(result.rows.length, 10);
        assert(result.truncated);
      };
      await read();
      const before = sockets();
      for (let i = 0; i < 40; i++) await read();
      // The side connections of KILL QUERY close too, a moment later.
      await waitUntil(
        "the side connections of KILL QUERY to close",
        () => sockets() - before < 5,
        { intervalMs: 100 },
      ).catch(() => {}); // the assertion below says how many are left
      const after = sockets();
      assert(
        after - before < 5,
        `${
          after - before
        } more sockets open after 40 cut reads (${before} → ${after})`,
      );
    } finally {
      await driver.close();
    }
  },
});
