/**
 * dbport's own PostgreSQL read (lib/db/postgres/pg_read.ts on a session postgres.js
 * lends it, lib/db/postgres/pg_wire.ts): one write per read, DISCARD ALL only after a
 * statement that is not a plain SELECT, and the reader's edge cases — NULLs
 * and arrays, an error after rows were sent, a byte budget spent early, a
 * session ended under a read, a cancel while it waits. The value encodings
 * of every type are tests/db/type_fidelity_test.ts's, through this reader.
 */

import { assert, assertEquals, assertRejects } from "@std/assert";
import postgres from "postgres";
import { DbError } from "../../lib/db/errors.ts";
import { wireWrites } from "../../lib/db/postgres/pg_wire.ts";
import type { Driver } from "../../lib/db/types.ts";
import { ownPostgresDriver } from "../_pg_driver.ts";
import { needs, openFixture, READ_OPTIONS } from "../_db.ts";
import { waitUntil } from "../_wait.ts";

/** A driver whose sessions carry an application_name of their own. */
function ownDriver(url: string): { driver: Driver; app: string } {
  return ownPostgresDriver(url, "dbport_read");
}

/** The backend of `app`'s session that is running a statement now. */
async function activeBackend(
  admin: ReturnType<typeof postgres>,
  app: string,
): Promise<number> {
  return await waitUntil(
    `a session of ${app} to wait for a lock`,
    async () => {
      const [row] = await admin`select pid from pg_stat_activity
        where application_name = ${app} and state = 'active'
          and wait_event_type = 'Lock'`;
      return row === undefined ? 0 : Number(row.pid);
    },
    { intervalMs: 25 },
  );
}

Deno.test({
  name:
    "postgres read: one write per read, DISCARD ALL only when the statement could leave state",
  ...needs("postgres"),
  async fn() {
    await using fixture = await openFixture("postgres");
    const { driver, app } = ownDriver(fixture.url);
    const admin = postgres(fixture.url, { max: 1, onnotice: () => {} });
    try {
      await driver.query("select 1", READ_OPTIONS);
      const before = { ...wireWrites };
      for (let i = 0; i < 20; i++) {
        const result = await driver.query(`select ${i} as i`, READ_OPTIONS);
        assertEquals(result.rows, [[i]]);
      }
      // One write each, and nothing from postgres.js (no BEGIN, Sync,
      // ROLLBACK or DISCARD ALL of its own).
      assertEquals(wireWrites.reads - before.reads, 20);
      assertEquals(wireWrites.postgresJs - before.postgresJs, 0);
      const [last] = await admin`select query from pg_stat_activity
        where application_name = ${app}`;
      // Every read ends with its ROLLBACK (PostgreSQL 14 and later: in the
      // statement's own batch, pg_lean.ts; before, a simple query after it).
      assertEquals(last?.query, "ROLLBACK");
      // EXPLAIN is not a plain SELECT: the same one write ends with DISCARD ALL.
      const explained = await driver.query("explain select 1", READ_OPTIONS);
      assert(explained.rows.length > 0);
      const [after] = await admin`select query from pg_stat_activity
        where application_name = ${app}`;
      assertEquals(after?.query, "DISCARD ALL");
    } finally {
      await admin.end();
      await driver.close();
    }
  },
});

Deno.test({
  name:
    "postgres read: NULLs, arrays, an error after rows were sent, and a byte budget spent early",
  ...needs("postgres"),
  async fn() {
    await using fixture = await openFixture("postgres");
    const { driver } = ownDriver(fixture.url);
    try {
      const values = await driver.query(
        "select null::int as n, array[1, null, 3] as a, array[['x', null], ['{', '\"']] as t, '{}'::int[] as e",
        READ_OPTIONS,
      );
      assertEquals(values.columns, ["n", "a", "t", "e"]);
      assertEquals(values.rows, [[
        null,
        [1, null, 3],
        [["x", null], ["{", '"']],
        [],
      ]]);
      // Rows 1 and 2 are sent before row 3 fails: the read fails whole.
      const error = await assertRejects(
        () =>
          driver.query(
            "select g, 10 / (3 - g) as q from generate_series(1, 5) g",
            { ...READ_OPTIONS, maxRows: 100 },
          ),
        DbError,
      );
      assert(/division by zero/.test(error.message), error.message);
      // Rows far past the byte budget: cut, and the statement stopped.
      const started = performance.now();
      const wide = await driver.query(
        "select g, repeat('x', 1000) as pad from generate_series(1, 200000) g",
        { ...READ_OPTIONS, maxRows: 1_000_000, maxBytes: 20_000 },
      );
      assert(
        wide.truncated && wide.truncation.bytes,
        JSON.stringify(wide.truncation),
      );
      assert(
        wide.rows.length > 0 && wide.rows.length < 30,
        `${wide.rows.length} rows`,
      );
      assert(performance.now() - started < 20_000);
      // The session serves the next read as usual (no stale cancel).
      for (let i = 0; i < 5; i++) {
        assertEquals((await driver.query("select 7 as x", READ_OPTIONS)).rows, [
          [7],
        ]);
      }
    } finally {
      await driver.close();
    }
  },
});

Deno.test({
  name:
    "postgres read: a session ended under a read fails it as a lost connection; a cancel stops it; the next read works",
  ...needs("postgres"),
  async fn() {
    await using fixture = await openFixture("postgres");
    const { driver, app } = ownDriver(fixture.url);
    const admin = postgres(fixture.url, { max: 1, onnotice: () => {} });
    const holder = postgres(fixture.url, { max: 1, onnotice: () => {} });
    const table = `"${fixture.schema}".authors`;
    try {
      await driver.query("select 1", READ_OPTIONS);
      const locked = await holder.reserve();
      await locked.unsafe(`begin; lock table ${table} in access exclusive mode`)
        .simple();
      try {
        // Ended by the administrator while it waits.
        const ended = driver.query(
          `select count(*) from ${table}`,
          READ_OPTIONS,
        );
        // It may fail before the administrator's own answer comes back:
        // handled now, asserted below.
        ended.catch(() => {});
        const pid = await activeBackend(admin, app);
        await admin`select pg_terminate_backend(${pid})`;
        const lost = await assertRejects(() => ended, DbError);
        assertEquals(lost.kind, "connect", lost.message);
        // Cancelled by its caller while it waits.
        const abort = new AbortController();
        const stopped = driver.query(`select count(*) from ${table}`, {
          ...READ_OPTIONS,
          signal: abort.signal,
        });
        stopped.catch(() => {});
        await activeBackend(admin, app);
        abort.abort();
        const cancelled = await assertRejects(() => stopped, DbError);
        assertEquals(cancelled.kind, "cancelled", cancelled.message);
      } finally {
        await locked.unsafe("rollback").simple();
        locked.release();
      }
      for (let i = 0; i < 5; i++) {
        assertEquals((await driver.query("select 8 as x", READ_OPTIONS)).rows, [
          [8],
        ]);
      }
    } finally {
      await holder.end();
      await admin.end();
      await driver.close();
    }
  },
});
