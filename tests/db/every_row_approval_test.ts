/**
 * A write that changes every row of a table is asked about by its effect,
 * not its words (lib/features/tools/every_row.ts, lib/db/every_row.ts): the
 * four findings outsider stop 58 left open — `DELETE|UPDATE … WHERE true`,
 * `MERGE … ON true`, an upsert of a table from itself, a function whose
 * body deletes every row — on each engine, through the MCP endpoint
 * (execute_query, a readWrite token, Safe Mode silent, approvals timing out
 * after 1 s). Each asked write is rolled back: the table keeps its rows.
 * Writes that pick their rows (a WHERE by key, a VALUES upsert, a table of
 * one row) are not asked about.
 *
 * @module
 */

import { assertEquals } from "@std/assert";
import { needs, READ_OPTIONS } from "../_db.ts";
import { ownPostgresDriver } from "../_pg_driver.ts";
import { all, everyRow, outcomes } from "../_every_row_harness.ts";

const { pgOwn, myOwn, liteOwn } = everyRow({
  tag: "every_row",
  name: "EveryRow",
  cut: 120,
});

Deno.test({
  name:
    "postgres: DELETE … WHERE true, UPDATE … WHERE 1 = 1, MERGE … ON true, an upsert of a table from itself, a SQL function or a PL/pgSQL one that empties a table, a PL/pgSQL function that truncates or drops one, and a partitioned table's every partition are asked about and rolled back",
  ...needs("postgres"),
  async fn() {
    await using db = await pgOwn();
    await db.sql.unsafe(`
      create table t (id int primary key, v text);
      insert into t select g, 'v' || g from generate_series(1, 3) g;
      create table p (id int, d int) partition by range (d);
      create table p1 partition of p for values from (0) to (10);
      create table p2 partition of p for values from (10) to (20);
      insert into p values (1, 1), (2, 15);
      create function wipe() returns void language sql as $$ delete from t $$;
      create function wipe2() returns void language plpgsql as $$
        begin
          perform set_config('search_path', 'public, pg_catalog', true);
          delete from t;
        end $$;
      create view public.pg_stat_xact_user_tables as
        select * from pg_catalog.pg_stat_xact_user_tables where false;
      create table gone (id int);
      create function trunc() returns void language plpgsql as $$
        begin truncate t; end $$;
      create function dropper() returns void language plpgsql as $$
        begin execute 'drop table gone'; end $$;`);
    const asked = [
      "select trunc()",
      "select dropper()",
      "delete from t where true",
      "update t set v = 'x' where 1 = 1",
      "merge into t using (select 1) s on true when matched then delete",
      "merge into t using (select 1) s on true when matched then update set v = 'm'",
      "insert into t select id, 'u' from t on conflict (id) do update set v = excluded.v",
      "select wipe()",
      "select wipe2()",
      "with d as (delete from t where id > 0 returning id) select count(*) from d",
      "delete from p where d >= 0",
    ];
    assertEquals(await outcomes(db.write, asked), all(asked, "asked"));
    assertEquals(
      (await db.sql`select id, v from t order by id`).map((r) =>
        `${r.id}:${r.v}`
      ),
      ["1:v1", "2:v2", "3:v3"],
    );
    assertEquals(Number((await db.sql`select count(*) from p`)[0]!.count), 2);
    assertEquals(
      (await db.sql`select to_regclass('gone') is not null as here`)[0]!.here,
      true,
    );
    // Rows picked by key, new rows, a VALUES upsert, one partition of
    // two and a table of one row run without asking.
    await db.sql.unsafe(
      "create table one (id int primary key); insert into one values (1)",
    );
    const ran = [
      "delete from t where id = 1",
      "update t set v = 'y' where id = 2",
      "insert into t values (9, 'n'), (10, 'n')",
      "insert into t values (2, 'z') on conflict (id) do update set v = excluded.v",
      "delete from p where d < 10",
      "delete from one where true",
      "create table made (id int)",
      "alter table made add column v text",
    ];
    assertEquals(await outcomes(db.write, ran), all(ran, "ran"));
    assertEquals(
      (await db.sql`select id, v from t order by id`).map((r) =>
        `${r.id}:${r.v}`
      ),
      ["2:z", "3:v3", "9:n", "10:n"],
    );
  },
});

Deno.test({
  name:
    "mysql: DELETE … WHERE true, UPDATE … WHERE 1 = 1, INSERT … SELECT … ON DUPLICATE KEY UPDATE and REPLACE … SELECT of a table from itself, and a multi-table DELETE are asked about and rolled back",
  ...needs("mysql"),
  async fn() {
    await using db = await myOwn();
    const t = `${db.prefix}_t`;
    await db.root(`create table ${t} (id int primary key, v text)`);
    await db.root(
      `insert into ${t} values (1, 'v1'), (2, 'v2'), (3, 'v3')`,
    );
    const asked = [
      `delete from ${t} where true`,
      `update ${t} set v = 'x' where 1 = 1`,
      `insert into ${t} select id, 'u' from ${t} as s on duplicate key update v = 'u'`,
      `replace into ${t} select id, 'r' from ${t}`,
      `delete ${t} from ${t} where id > 2`,
    ];
    assertEquals(await outcomes(db.write, asked), all(asked, "asked"));
    const rows = async () =>
      ((await db.root(`select id, v from ${t} order by id`)) as {
        id: number;
        v: string;
      }[]).map((r) => `${r.id}:${r.v}`);
    assertEquals(await rows(), ["1:v1", "2:v2", "3:v3"]);
    const ran = [
      `delete from ${t} where id = 1`,
      `update ${t} set v = 'y' where id = 2`,
      `insert into ${t} values (9, 'n')`,
      `insert into ${t} values (2, 'z') on duplicate key update v = 'z'`,
    ];
    assertEquals(await outcomes(db.write, ran), all(ran, "ran"));
    assertEquals(await rows(), ["2:z", "3:v3", "9:n"]);
  },
});

Deno.test({
  name:
    "sqlite: DELETE … WHERE true, UPDATE … WHERE 1 = 1, INSERT OR REPLACE … SELECT, an upsert … SELECT of a table from itself, and an UPDATE whose conflicts replace every other row (OR REPLACE, a key ON CONFLICT REPLACE) are asked about and rolled back",
  async fn() {
    // Conflicts that delete rows the statement's count leaves out: un, cr.
    await using lite = await liteOwn(`
      create table t (id integer primary key, v text);
      insert into t values (1, 'v1'), (2, 'v2'), (3, 'v3');
      create table un (id integer primary key, u text unique);
      insert into un values (1, 'a'), (2, 'b'), (3, 'c');
      create table cr (id integer primary key, u text unique on conflict replace);
      insert into cr values (1, 'a'), (2, 'b'), (3, 'c');`);
    const { db, write } = lite;
    const asked = [
      "delete from t where true",
      "update t set v = 'x' where 1 = 1",
      "insert or replace into t select id, 'r' from t",
      "replace into t select id, 'r' from t",
      "insert into t select id, 'u' from t where true on conflict (id) do update set v = excluded.v",
      "update or replace un set u = 'x' where true",
      "update cr set u = 'x' where true",
    ];
    assertEquals(await outcomes(write, asked), all(asked, "asked"));
    const left = (table: string) =>
      Number(
        (db.prepare(`select count(*) as n from ${table}`).get() as {
          n: number;
        }).n,
      );
    assertEquals([left("un"), left("cr")], [3, 3]);
    const rows = () =>
      (db.prepare("select id, v from t order by id").all() as {
        id: number;
        v: string;
      }[]).map((r) => `${r.id}:${r.v}`);
    assertEquals(rows(), ["1:v1", "2:v2", "3:v3"]);
    const ran = [
      "delete from t where id = 1",
      "update t set v = 'y' where id = 2",
      "insert into t values (9, 'n')",
      "insert or replace into t values (2, 'z')",
    ];
    assertEquals(await outcomes(write, ran), all(ran, "ran"));
    assertEquals(rows(), ["2:z", "3:v3", "9:n"]);
  },
});

Deno.test({
  name:
    "postgres: a write's tracked counts (a preview's, the hold's) and its every-row counts are the engine's even when the statement set a search_path that puts a view named pg_stat_xact_user_tables first",
  ...needs("postgres"),
  async fn() {
    await using db = await pgOwn();
    await db.sql.unsafe(`
      create table t (id int primary key, v text);
      insert into t select g, 'v' || g from generate_series(1, 3) g;
      create function wipe2() returns void language plpgsql as $$
        begin
          perform set_config('search_path', 'public, pg_catalog', true);
          delete from t;
        end $$;
      create view public.pg_stat_xact_user_tables as
        select * from pg_catalog.pg_stat_xact_user_tables where false;`);
    const { driver } = ownPostgresDriver(db.url, "every_row");
    try {
      let tables: unknown = null;
      let found: unknown = null;
      const held = await driver.query("select wipe2()", {
        ...READ_OPTIONS,
        mode: "write",
        track: { sampleRows: 0 },
        everyRow: (rows) => {
          found = rows;
        },
        beforeCommit: (result) => {
          tables = result.changes?.tables;
          throw new Error("held back");
        },
      }).catch((error: Error) => error.message);
      assertEquals({ held, tables, found }, {
        held: "held back",
        tables: [{ table: "t", rows: 3 }],
        found: [{ table: "public.t", rows: 3, how: "deleted" }],
      });
      assertEquals(Number((await db.sql`select count(*) from t`)[0]!.count), 3);
    } finally {
      await driver.close();
    }
  },
});

Deno.test({
  name:
    "postgres: calling a SQL function whose body drops or truncates a table is destructive (a readWrite token is refused, naming the function), whoever made it; one that deletes by key is a write",
  ...needs("postgres"),
  async fn() {
    await using db = await pgOwn();
    await db.sql.unsafe(`
      create table t (id int);
      insert into t values (1), (2), (3);
      create function owners_drop() returns void language sql as $$ drop table t $$;`);
    const answers = await outcomes(db.write, [
      "create function f() returns void language sql as $$ drop table t $$",
      "select f()",
      "create function g() returns int language sql as $$ truncate t; select 1 $$",
      "select g()",
      "select owners_drop()",
      "create table d (id int default g())",
      "create function k() returns void language sql as $$ delete from t where id = 1 $$",
      "select k()",
    ]);
    // The refusal's reason, up to what it tells the caller to do.
    const said = Object.fromEntries(
      Object.entries(answers).map((
        [step, answer],
      ) => [step, answer.replace(/, which this client.*$/, "")]),
    );
    assertEquals(said, {
      "create function f() returns void language sql as $$ drop table t $$":
        "ran",
      "select f()":
        "ERR denied: this statement drops or truncates data (f() runs DROP in its body)",
      "create function g() returns int language sql as $$ truncate t; select 1 $$":
        "ran",
      "select g()":
        "ERR denied: this statement drops or truncates data (g() runs TRUNCATE in its body)",
      "select owners_drop()":
        "ERR denied: this statement drops or truncates data (owners_drop() runs DROP in its body)",
      "create table d (id int default g())":
        "ERR denied: this statement drops or truncates data (g() runs TRUNCATE in its body)",
      "create function k() returns void language sql as $$ delete from t where id = 1 $$":
        "ran",
      "select k()": "ran",
    });
    assertEquals(Number((await db.sql`select count(*) from t`)[0]!.count), 2);
  },
});
