/**
 * A row another session commits while a write runs is not a row the write
 * kept (outsider stop 59, left open then): `delete from t where id > 0 and
 * pg_sleep(0.4) is not null`, with `insert into t values (100)` committed
 * meanwhile, had deleted every row t had without asking, as the count
 * after the write saw the new row. A PostgreSQL write that is judged runs
 * in REPEATABLE READ, its counts in its own snapshot (postgres.ts,
 * pg_every_row.ts `pgTouches`); MariaDB counts the fewer of the rows in a
 * snapshot taken as its transaction starts and the rows committed now
 * (mysql_write.ts, mysql_every_row.ts). Through the MCP endpoint
 * (execute_query, a readWrite token, Safe Mode silent, approvals cut at
 * 1 s), and the PostgreSQL judgment on one session.
 *
 * @module
 */

import { assertEquals } from "@std/assert";
import { needs } from "../_db.ts";
import { everyRow } from "../_every_row_harness.ts";
import { pgEveryRow, pgTouches } from "../../lib/db/postgres/pg_every_row.ts";

const { pgOwn, myOwn } = everyRow({
  tag: "concurrent",
  name: "Concurrent",
  cut: 160,
});

Deno.test({
  name:
    "postgres: a DELETE of every row is asked about though another session commits a row while it runs",
  ...needs("postgres"),
  async fn() {
    await using db = await pgOwn(`
      create table t (id int primary key, v text);
      insert into t select g, 'v' from generate_series(1, 3) g;`);
    const a = db.write(
      "delete from t where id > 0 and pg_sleep(0.3) is not null",
    );
    await db.running("delete from t where id > 0");
    await db.sql.unsafe("insert into t values (100, 'b')");
    assertEquals(await a, "asked");
    assertEquals(await db.ids("t"), [1, 2, 3, 100]);
  },
});

Deno.test({
  name:
    "postgres: an UPDATE of every row is asked about though another session commits a row meanwhile; a write of some rows is not, nor are the rows it inserts or changes in a subtransaction lost to the count",
  ...needs("postgres"),
  async fn() {
    await using db = await pgOwn(`
      create table t (id int primary key, v text);
      insert into t select g, 'v' from generate_series(1, 4) g;
      create function part() returns void language plpgsql as $$
        begin
          begin
            update t set v = 's' where id <= 2;
            insert into t values (50, 'n');
          exception when others then null;
          end;
        end $$;`);
    await db.sql.unsafe("vacuum freeze t");
    const a = db.write(
      "update t set v = 'x' where id > 0 and pg_sleep(0.2) is not null",
    );
    await db.running("update t set v = 'x' where id");
    await db.sql.unsafe("insert into t values (100, 'b')");
    assertEquals(await a, "asked");
    assertEquals(
      (await db.sql`select count(*)::int as n from t where v = 'x'`)[0]!.n,
      0,
    );
    // Two of five rows changed, one added, in a subtransaction: not every
    // row, though the rows it wrote carry the subtransaction's id.
    assertEquals(await db.write("select part()"), "ran");
    // Rows frozen long ago (vacuum freeze above) count as rows it kept.
    assertEquals(await db.write("delete from t where id in (1, 2)"), "ran");
    assertEquals(await db.ids("t"), [3, 4, 50, 100]);
  },
});

Deno.test({
  name:
    "postgres: the judgment, on one session: every row deleted or changed though rows were committed meanwhile, and a kept row still kept",
  ...needs("postgres"),
  async fn() {
    await using db = await pgOwn(`
      create table t (id int primary key, v text);
      insert into t select g, 'v' from generate_series(1, 3) g;
      create table u (id int primary key, v text);
      insert into u select g, 'v' from generate_series(1, 3) g;`);
    await using session = await db.session();
    const exec = (sql: string, params?: unknown[]) =>
      session.unsafe(sql, params as never[]) as Promise<
        Record<string, unknown>[]
      >;
    const judged = async (statement: string, meanwhile: string) => {
      await exec("begin isolation level repeatable read");
      try {
        const before = await pgTouches(exec);
        await exec(statement);
        await db.sql.unsafe(meanwhile);
        return await pgEveryRow(exec, before, true);
      } finally {
        await exec("rollback");
      }
    };
    assertEquals(
      await judged("delete from t", "insert into t values (100, 'b')"),
      [{ table: "public.t", rows: 3, how: "deleted" }],
    );
    assertEquals(
      await judged("update u set v = 'x'", "insert into u values (100, 'b')"),
      [{ table: "public.u", rows: 3, how: "changed" }],
    );
    assertEquals(
      await judged(
        "delete from t where id < 3",
        "delete from u where id = 100",
      ),
      [],
    );
  },
});

Deno.test({
  name:
    "mysql: a DELETE of every row is asked about though another session commits a row while it runs",
  ...needs("mysql"),
  async fn() {
    await using db = await myOwn([
      "create table $p_t (id int primary key) engine = InnoDB",
      "insert into $p_t values (1), (2), (3)",
    ]);
    const a = db.write(
      "delete from $p_t where id in (1, 2, 3) and sleep(0.4) = 0",
    );
    await db.running("sleep(0.4)");
    await db.root("insert into $p_t values (100)");
    assertEquals(await a, "asked");
    assertEquals(await db.ids("$p_t"), [1, 2, 3, 100]);
  },
});
