/**
 * Waiting for one of a MariaDB driver's pooled sessions (mysql_session.ts
 * `acquire`) ends as the call would: at once when the caller cancels, at
 * the call's own timeout otherwise (as PostgreSQL's `reserveSession` does),
 * for reads and catalog calls alike; and the session mysql2 hands over
 * after the caller gave up goes back to the pool (outsider stop 50: the
 * wait knew neither the timeout nor the signal).
 */

import { assertEquals } from "@std/assert";
import mysql from "mysql2/promise";
import { openMysql } from "../../lib/db/mysql/mysql.ts";
import type { Driver } from "../../lib/db/types.ts";
import { needs, openFixture, READ_OPTIONS } from "../_db.ts";
import { outcome } from "../_outsider.ts";
import { waitUntil } from "../_wait.ts";

/** How many reads of `table` wait on its lock now. */
async function waitingOn(
  owner: mysql.Connection,
  table: string,
): Promise<number> {
  const [rows] = await owner.query(
    `select 1 from information_schema.processlist
      where state like 'Waiting for table%' and info like ?`,
    [`%${table}%`],
  );
  return (rows as unknown[]).length;
}

/** Four reads of `table` (locked by its owner), each on a session of its own. */
async function holdAllFour(
  driver: Driver,
  owner: mysql.Connection,
  table: string,
): Promise<Promise<string>[]> {
  const reads = [1, 2, 3, 4].map(() =>
    outcome(
      driver.query(`select i from ${table}`, {
        ...READ_OPTIONS,
        timeoutMs: 30_000,
        signal: new AbortController().signal,
      }),
    )
  );
  await waitUntil(
    "four reads waiting on the lock",
    async () => (await waitingOn(owner, table)) === 4,
  );
  return reads;
}

Deno.test({
  name:
    "MariaDB: a call waiting for a pooled session fails at once when cancelled and at its own timeout, and the session it would have got goes back to the pool",
  ...needs("mysql"),
  async fn() {
    await using fixture = await openFixture("mysql");
    const t = `${fixture.schema}.t`;
    await fixture.admin(`create table ${t} (i int)`);
    await fixture.admin(`insert into ${t} values (1)`);
    const driver = openMysql({ url: fixture.url, secrets: [] });
    const owner = await mysql.createConnection({ uri: fixture.url });
    try {
      await owner.query(`lock tables ${t} write`);
      const held = await holdAllFour(driver, owner, t);
      // A read whose caller cancels while it waits.
      const cancel = new AbortController();
      let cancelled = "";
      const asked = outcome(
        driver.query("select 1 as one", {
          ...READ_OPTIONS,
          timeoutMs: 60_000,
          signal: cancel.signal,
        }),
      ).then((seen) => cancelled = seen);
      // A catalog call with 1 s: mysql_session.ts `exec` waits the same way.
      const described = outcome(
        driver.describeTable("t", {
          schema: fixture.schema,
          timeoutMs: 1_000,
          signal: new AbortController().signal,
        }).then((detail) => ({ rows: detail?.name ?? null })),
      );
      cancel.abort();
      await asked;
      const timedOut = await described;
      // Both gave up while the four reads still held every session.
      const stillHeld = await waitingOn(owner, t);
      await owner.query("unlock tables");
      await Promise.all(held);
      assertEquals(
        {
          cancelled,
          timedOut,
          stillHeld,
        },
        {
          cancelled:
            "failed: [cancelled] DbError: the query was not started: the request was cancelled",
          timedOut:
            "failed: [timeout] DbError: the statement timeout of 1 s ran out while the query waited for a database session: it was not started",
          stillHeld: 4,
        },
      );
      // The two sessions mysql2 handed to the calls that had given up went
      // back: all four serve reads at once again.
      await owner.query(`lock tables ${t} write`);
      const again = await holdAllFour(driver, owner, t);
      await owner.query("unlock tables");
      assertEquals(await Promise.all(again), Array(4).fill("answered [[1]]"));
    } finally {
      await owner.query("unlock tables").catch(() => {});
      await owner.end();
      await driver.close();
    }
  },
});
