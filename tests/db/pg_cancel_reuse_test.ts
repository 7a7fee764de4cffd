/**
 * A PostgreSQL session a cancel request was sent for is never read on
 * again (lib/db/postgres/pg_wired.ts `handBack`): the server signals the
 * backend when the request arrives, and a signal landing after the read
 * ended would stop the session's next statement — another caller's read.
 * Found by an outsider: a client leaving mid-read cancelled another
 * token's read.
 */

import { assert, assertRejects } from "@std/assert";
import postgres from "postgres";
import { openPostgres } from "../../lib/db/postgres/postgres.ts";
import { needs, openFixture, READ_OPTIONS } from "../_db.ts";
import { waitUntil } from "../_wait.ts";

Deno.test({
  name:
    "postgres: a read stopped by its caller leaves its session closed, never lent to the next read",
  ...needs("postgres"),
  async fn() {
    await using fixture = await openFixture("postgres");
    const marker = `cancel_reuse_${crypto.randomUUID().slice(0, 8)}`;
    const driver = openPostgres({
      url: fixture.url,
      secrets: [],
      wiredReads: true,
    });
    const admin = postgres(fixture.url, { max: 1, onnotice: () => {} });
    try {
      // Warm the pool: its sessions exist before the stopped read.
      await Promise.all(
        Array.from(
          { length: 4 },
          () => driver.query("select pg_backend_pid()", READ_OPTIONS),
        ),
      );
      const stop = new AbortController();
      const stopped = driver.query(
        `select pg_sleep(30), '${marker}'`,
        { ...READ_OPTIONS, signal: stop.signal },
      );
      const pid = await waitUntil("the sleeping read to be seen", async () => {
        const rows = await admin`select pid from pg_stat_activity
          where query like ${"%" + marker + "%"} and pid <> pg_backend_pid()
            and state = 'active'`;
        return rows[0]?.pid as number | undefined;
      });
      stop.abort();
      await assertRejects(() => stopped);
      const seen = new Set<number>();
      for (let i = 0; i < 24; i++) {
        const result = await driver.query(
          "select pg_backend_pid()",
          READ_OPTIONS,
        );
        seen.add(Number(result.rows[0]![0]));
      }
      assert(
        !seen.has(pid),
        `the session ${pid} a cancel was sent for read again`,
      );
    } finally {
      await admin.end();
      await driver.close();
    }
  },
});
