/**
 * Outsider stop 59: "Every row, by effect" (lib/db/every_row.ts,
 * lib/db/postgres/pg_every_row.ts, lib/features/tools/every_row.ts) attacked
 * through the MCP endpoint with a readWrite token on a connection in Safe
 * Mode `silent` (execute_query; approvals time out after 1 s, so an asked
 * write answers `ERR user_cancelled`). The goal: delete or change every row
 * (or all but one) of a table of one's own without being asked, on
 * PostgreSQL, MariaDB and SQLite; and false asks and breakage.
 *
 * Each test's comment gives what was sent, what should happen and what
 * happened. "held: …" held at the attack; "held (fixed: …)" leaked and is
 * fixed; "held (by design)" was reported as a false ask and is the rule.
 * Findings not fixed that stop had their tests left out (the suite skips
 * nothing); each is in docs/security.md "Every row, by effect":
 * - A row another session commits while the write runs (PostgreSQL,
 *   MariaDB): `delete from t where id > 0 and pg_sleep(0.4) is not null`
 *   with `insert into t values (100)` 200 ms later deleted every row t had
 *   unasked. Fixed at stop 61: tests/db/every_row_concurrent_test.ts.
 * - All but one row (`delete from t where id <> (select min(id) from t)`),
 *   every engine: the rule is every row.
 * SQLite's `update or replace t set v = 'x' where true` of a UNIQUE column
 * (or a column declared ON CONFLICT REPLACE), which collapsed the table to
 * one row, is fixed; tests/db/every_row_approval_test.ts holds it.
 *
 * @module
 */

import { assertEquals } from "@std/assert";
import postgres from "postgres";
import mysql from "mysql2/promise";
import { MYSQL_URL, needs, POSTGRES_URL } from "../_db.ts";
import { said } from "../_outsider.ts";
import { savedConnection, serverWith } from "../_connections.ts";
import { callTool } from "../_tool_call.ts";
import { modernRequest, postModern } from "../_server.ts";
import { recordingDialog } from "../_dialog.ts";
import { inAppDir } from "../../lib/app/paths.ts";
import { QUERIES_FILE } from "../../lib/app/queries.ts";
import type { Engine } from "../../lib/db/types.ts";

const ASKED = "ERR user_cancelled";

/** A readWrite token (Safe Mode silent) on `url`; approvals cut at 1 s. */
async function writer(engine: Engine, url: string) {
  const saved = savedConnection({ engine, url }, "Stop59", {
    externalAccess: "readWrite",
    safeMode: "silent",
  });
  const server = await serverWith([saved], { approvalTimeoutSeconds: 1 });
  const token = (await server.mint("readWrite")).plaintext;
  const raw = (query: string, extra: Record<string, unknown> = {}) =>
    callTool(server, "execute_query", {
      connection_id: saved.id,
      query,
      max_rows: 50,
      ...extra,
    }, { authorization: `Bearer ${token}` });
  const write = async (query: string, extra: Record<string, unknown> = {}) =>
    said(await raw(query, extra));
  return { server, write, raw };
}

type Write = Awaited<ReturnType<typeof writer>>["write"];

/** "asked", "ran", or the start of the error. */
function outcome(answer: string): string {
  return answer.startsWith(ASKED)
    ? "asked"
    : answer.startsWith("OK")
    ? "ran"
    : answer.slice(0, 60);
}

/** Each statement and whether it was asked about. */
async function outcomes(
  write: Write,
  steps: string[],
): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const step of steps) out[step] = outcome(await write(step));
  return out;
}

function all(steps: string[], what: string): Record<string, string> {
  return Object.fromEntries(steps.map((step) => [step, what]));
}

/** A PostgreSQL database of the test's own (attack59_…). */
async function pgOwn(setup: string) {
  const name = `attack59_${crypto.randomUUID().slice(0, 8)}`;
  const root = postgres(POSTGRES_URL, { max: 1, onnotice: () => {} });
  await root.unsafe(`create database ${name}`);
  const url = new URL(POSTGRES_URL);
  url.pathname = `/${name}`;
  const sql = postgres(url.href, { max: 1, onnotice: () => {} });
  await sql.unsafe(setup);
  const { server, write } = await writer("postgres", url.href);
  return {
    write,
    sql,
    url: url.href,
    async count(table: string): Promise<number> {
      return Number(
        (await sql.unsafe(`select count(*) from ${table}`))[0]!
          .count,
      );
    },
    async [Symbol.asyncDispose]() {
      await server[Symbol.asyncDispose]();
      await sql.end();
      await root.unsafe(`drop database if exists ${name} with (force)`);
      await root.end();
    },
  };
}

/** MariaDB tables (and triggers) of the test's own, attack59_… in test. */
async function myOwn(setup: string[]) {
  const root = await mysql.createConnection(MYSQL_URL);
  const prefix = `attack59_${crypto.randomUUID().slice(0, 6)}`;
  for (const step of setup) await root.query(step.replaceAll("$p", prefix));
  const { server, write, raw } = await writer("mysql", MYSQL_URL);
  return {
    prefix,
    write: (query: string, extra?: Record<string, unknown>) =>
      write(query.replaceAll("$p", prefix), extra),
    raw: (query: string) => raw(query.replaceAll("$p", prefix)),
    async rows(query: string): Promise<unknown[]> {
      return (await root.query(query.replaceAll("$p", prefix)))[0] as unknown[];
    },
    async [Symbol.asyncDispose]() {
      await server[Symbol.asyncDispose]();
      try {
        const [rows] = await root.query(
          "select table_name as t from information_schema.tables where table_schema = 'test' and table_name like ?",
          [`${prefix}%`],
        );
        const [events] = await root.query(
          "select event_name as e from information_schema.events where event_schema = 'test' and event_name like ?",
          [`${prefix}%`],
        );
        for (const row of events as { e: string }[]) {
          await root.query(`drop event if exists \`${row.e}\``);
        }
        await root.query("set foreign_key_checks = 0");
        for (const row of rows as { t: string }[]) {
          await root.query(`drop table if exists \`${row.t}\``);
        }
      } finally {
        await root.end();
      }
    },
  };
}

/** A SQLite file of the test's own. */
async function liteOwn(setup: string) {
  const dir = await Deno.makeTempDir({ prefix: "attack59_" });
  const file = `${dir}/attack59.db`;
  const { DatabaseSync } = await import("node:sqlite");
  const db = new DatabaseSync(file);
  db.exec(setup);
  const { server, write } = await writer("sqlite", file);
  return {
    write,
    all: (query: string) => db.prepare(query).all().map((row) => ({ ...row })),
    async [Symbol.asyncDispose]() {
      db.close();
      await server[Symbol.asyncDispose]();
      await Deno.remove(dir, { recursive: true });
    },
  };
}

const PG_T = `create table t (id int primary key, v text);
  insert into t select g, 'v' || g from generate_series(1, 3) g;`;

// ---------------------------------------------------------------- PostgreSQL

Deno.test({
  name:
    "held: postgres: the previously found cases (WHERE true, WHERE 1 = 1, MERGE ON true, a self-upsert, a SQL function that deletes every row), a one-row DELETE whose ON DELETE CASCADE empties a child table, and writes that make the count fail or run elsewhere (statement_timeout, lock_timeout, search_path) are asked or fail; plpgsql, set_config of role or track_counts are refused; nothing is committed",
  ...needs("postgres"),
  async fn() {
    await using db = await pgOwn(`${PG_T}
      create function wipe() returns void language sql as $$ delete from t $$;
      create table par (id int primary key);
      insert into par values (1), (2);
      create table ch (id int, pid int references par on delete cascade);
      insert into ch values (1, 1), (2, 1), (3, 1);`);
    const asked = [
      "delete from t where true",
      "update t set v = 'x' where 1 = 1",
      "merge into t using (select 1) s on true when matched then delete",
      "merge into t using (select 1) s on true when matched then update set v = 'm'",
      "insert into t select id, 'u' from t on conflict (id) do update set v = excluded.v",
      "select wipe()",
      "delete from par where id = 1",
      "delete from t where id > $1",
      "with x as (select set_config('lock_timeout', '1', true) s) delete from t where id > 0 and (select s from x) is not null",
      "with x as (select set_config('search_path', 'pg_catalog', true) s) delete from public.t where id > 0 and (select s from x) is not null",
    ];
    const out: Record<string, string> = {};
    for (const step of asked) {
      out[step] = outcome(
        await db.write(step, step.includes("$1") ? { params: [0] } : {}),
      );
    }
    assertEquals(out, all(asked, "asked"));
    // The count cut by the statement's own statement_timeout: an error,
    // nothing committed.
    const cut = await db.write(
      "with x as (select set_config('statement_timeout', '1', true) s) delete from t where id > 0 and (select s from x) is not null",
    );
    // Or asked: the count that failed in its savepoint left it unjudged.
    assertEquals(
      cut.includes("statement timeout") || cut.startsWith("ERR user_cancelled"),
      true,
      cut,
    );
    const refused = [
      "create function p1() returns void language plpgsql as $$ begin begin insert into t select g from generate_series(100, 120) g; raise exception 'x'; exception when others then null; end; delete from t; end $$",
      "with x as (select set_config('track_counts', 'off', true) s) delete from t where id > 0 and (select s from x) = 'off'",
      "with x as (select set_config('role', 'pg_read_all_stats', true) s) delete from t where id > 0 and (select s from x) is not null",
    ];
    for (const step of refused) {
      const answer = await db.write(step);
      assertEquals(answer.startsWith("ERR denied"), true, answer);
    }
    assertEquals(await db.count("t"), 3);
  },
});

Deno.test({
  // Sent (readWrite token, Safe Mode silent), on a table t of 3 rows and a
  // table u:
  //   create function f_tr() returns void language sql as $$ truncate t $$
  //   select f_tr()
  //   create function f_dr() returns void language sql as $$ drop table u $$
  //   select f_dr()
  // Should: a plain `truncate t` is denied to this token ("drops or
  // truncates data, which this client may not do", needs fullAccess via
  // confirm_destructive_operation); a SQL body that truncates or drops must
  // be refused (or asked) the same. At the least the every-row check must
  // ask (docs/security.md lists TRUNCATE in a function as "not counted").
  // Happened: each CREATE FUNCTION and each SELECT answered OK unasked; t
  // has 0 rows and u no longer exists. pg_vet.ts judges a SQL body's tier
  // only as "read or not" (merged.tier !== "read": "changes data"), so the
  // body's "destructive" tier (TruncateStmt, DropStmt) is lost.
  name:
    "held (fixed: pg_vet.ts destroys): a LANGUAGE sql function whose body is TRUNCATE or DROP TABLE emptied or dropped a table unasked, though TRUNCATE itself is denied to the token; its call is destructive now",
  ...needs("postgres"),
  async fn() {
    await using db = await pgOwn(`${PG_T} create table u (id int);`);
    const steps = [
      "create function f_tr() returns void language sql as $$ truncate t $$",
      "select f_tr()",
      "create function f_dr() returns void language sql as $$ drop table u $$",
      "select f_dr()",
    ];
    const out = await outcomes(db.write, steps);
    const u = await db.count(
      "information_schema.tables where table_name = 'u'",
    );
    assertEquals({ out, t: await db.count("t"), u }, {
      out: {
        ...out,
        "select f_tr()":
          "ERR denied: this statement drops or truncates data (f_tr() r",
        "select f_dr()":
          "ERR denied: this statement drops or truncates data (f_dr() r",
      },
      t: 3,
      u: 1,
    });
  },
});

Deno.test({
  // Sent: `delete from p where true`, p a table with two inheritance
  // children c1, c2 (`create table c1 () inherits (p)`), one row in each
  // of p, c1, c2. Should: asked -- `select * from p` shows 3 rows and the
  // write deletes all of them, as for a partitioned table (whose
  // partitions' counts go to the root). Happened: OK, unasked; p (with its
  // children) is empty. pg_every_row.ts judges each inheritance child on
  // its own (ONLY, pg_partition_root is null for inheritance), and no one
  // table had 2 rows. With N children of one row each, any number of rows.
  name:
    "held (fixed): postgres: DELETE … WHERE true of an inheritance parent whose rows are spread one per child table deletes them all unasked",
  ...needs("postgres"),
  async fn() {
    await using db = await pgOwn(`create table p (id int);
      create table c1 () inherits (p); create table c2 () inherits (p);
      insert into p values (1); insert into c1 values (2);
      insert into c2 values (3);`);
    assertEquals(
      outcome(await db.write("delete from p where true")),
      "asked",
    );
    assertEquals(await db.count("p"), 3);
  },
});

Deno.test({
  // Sent: `delete from q1 where true`, q1 a partition (9 rows) of q (20
  // rows). Should (arguably): asked -- the statement names q1 and empties
  // it, as `delete from t where true` of a plain table of 9 rows is.
  // Happened: OK, unasked; q1 has 0 rows. pg_every_row.ts sums a
  // partition's counts on its root and judges the root (9 of 20 rows).
  name:
    "held (fixed): postgres: DELETE … WHERE true of one partition named directly empties it unasked (its counts are judged on the partitioned table)",
  ...needs("postgres"),
  async fn() {
    await using db = await pgOwn(`
      create table q (id int, d int) partition by range (d);
      create table q1 partition of q for values from (0) to (10);
      create table q2 partition of q for values from (10) to (100);
      insert into q select g, g from generate_series(1, 20) g;`);
    assertEquals(outcome(await db.write("delete from q1 where true")), "asked");
    assertEquals(await db.count("q1"), 9);
  },
});

Deno.test({
  // Sent, on t of exactly 2 rows (1, 2): `update t set v = 'x' where id in
  // (1, 2)`, `insert into t values (1, 'a'), (2, 'b') on conflict (id) do
  // update set v = excluded.v`, `update t set v = v where id = 1 or id = 2`.
  // Should (a user's view): run -- each names its rows by key, as a
  // WHERE picks them; a 2-row table is where it most often happens (a work
  // queue drained by id, two settings rows). Happened: each asked
  // ("changes every row of public.t (2 rows)"). MariaDB and SQLite run the
  // same VALUES upsert unasked (their judgment is by words), so the engines
  // disagree on the same write.
  name:
    "held (by design): postgres: an UPDATE or a VALUES upsert that names every row of a 2-row table by key is asked, as every write of every row of a table of two or more rows is",
  ...needs("postgres"),
  async fn() {
    await using db = await pgOwn(`create table t (id int primary key, v text);
      insert into t values (1, 'v1'), (2, 'v2');`);
    const steps = [
      "update t set v = 'x' where id in (1, 2)",
      "insert into t values (1, 'a'), (2, 'b') on conflict (id) do update set v = excluded.v",
      "update t set v = v where id = 1 or id = 2",
    ];
    // By design: every row of a table of two or more rows is asked about,
    // named by key or not (docs/security.md "Every row, by effect").
    assertEquals(await outcomes(db.write, steps), all(steps, "asked"));
  },
});

Deno.test({
  // Sent (t of 3 rows (id, v 'v1'..'v3')): `alter table t alter column v
  // type text using 'x'`, then `alter table t alter column v type int
  // using 0`. Should: asked (or denied) -- it overwrites the column of
  // every row, as `alter table t drop column v` destroys it, which is
  // denied to this token ("drops or truncates data"). Happened: OK twice,
  // unasked; every row's v is 0. A table rewrite is not counted in
  // pg_stat_xact_user_tables' n_tup_upd, and the classifier treats ALTER
  // … TYPE … USING as a plain DDL write.
  name:
    "held (fixed): postgres: ALTER TABLE … ALTER COLUMN … TYPE … USING overwrites a column of every row unasked (DROP COLUMN is denied)",
  ...needs("postgres"),
  async fn() {
    await using db = await pgOwn(PG_T);
    const steps = [
      "alter table t alter column v type text using 'x'",
      "alter table t alter column v type int using 0",
    ];
    const out = await outcomes(db.write, steps);
    const left = (await db.sql`select v::text from t order by id`).map((r) =>
      r.v
    );
    assertEquals({ out, left }, {
      out: { ...out, [steps[0]!]: "asked" },
      left: ["v1", "v2", "v3"],
    });
  },
});

Deno.test({
  name:
    "held: postgres, sqlite: approved, an every-row write runs once, held to its preview, with the right rows_affected",
  ...needs("postgres"),
  async fn() {
    await using dialog = await recordingDialog(0);
    await using pg = await pgOwn(`${PG_T} create sequence s;`);
    const dir = await Deno.makeTempDir({ prefix: "attack59_" });
    const file = `${dir}/attack59.db`;
    const { DatabaseSync } = await import("node:sqlite");
    const lite = new DatabaseSync(file);
    lite.exec(`create table t (id integer primary key, v text);
      insert into t values (1, 'a'), (2, 'b'), (3, 'c');`);
    const connections = [
      savedConnection({ engine: "postgres", url: pg.url }, "Pg", {
        externalAccess: "readWrite",
        safeMode: "silent",
      }),
      savedConnection({ engine: "sqlite", url: file }, "Lite", {
        externalAccess: "readWrite",
        safeMode: "silent",
      }),
    ];
    await using server = await serverWith(connections, {
      hostDialog: dialog.setting,
    });
    const token = (await server.mint("readWrite")).plaintext;
    const call = async (id: string, query: string) =>
      (await callTool(server, "execute_query", {
        connection_id: id,
        query,
        max_rows: 50,
      }, { authorization: `Bearer ${token}` })).json.result?.structuredContent
        ?.rows_affected;
    try {
      assertEquals({
        pg: await call(connections[0]!.id, "delete from t where id > 0"),
        lite: await call(connections[1]!.id, "delete from t where id > 0"),
        asked: (await dialog.asked()).length,
        left: [
          await pg.count("t"),
          lite.prepare("select count(*) as n from t").get()!.n,
        ],
      }, { pg: 3, lite: 3, asked: 2, left: [0, 0] });
    } finally {
      lite.close();
      await Deno.remove(dir, { recursive: true });
    }
  },
});

// ------------------------------------------------------------------ MariaDB

Deno.test({
  name:
    "held: mysql: the previously found cases, DELETE … RETURNING behind comments, SET STATEMENT … FOR, a `test.x` quoted name, CREATE FUNCTION/TRIGGER are asked; an executable comment is refused; nothing is committed",
  ...needs("mysql"),
  async fn() {
    await using db = await myOwn([
      "create table $p_t (id int primary key, v varchar(20))",
      "insert into $p_t values (1, 'a'), (2, 'b'), (3, 'c')",
      "create table `test.$p_t` (id int)",
      "insert into `test.$p_t` values (1), (2), (3)",
    ]);
    const asked = [
      "delete from $p_t where true",
      "update $p_t set v = 'x' where 1 = 1",
      "insert into $p_t select id, 'u' from $p_t as s on duplicate key update v = 'u'",
      "replace into $p_t select id, 'r' from $p_t",
      "delete from $p_t where true returning id",
      "-- c\ndelete from $p_t where true returning id",
      "/* a */ /* b */ delete from $p_t where true returning id",
      "set statement sql_select_limit = 0 for delete from $p_t where true",
      "delete from `test.$p_t` where true",
      "create function $p_f() returns int modifies sql data begin delete from $p_t; return 1; end",
      "create trigger $p_tr after insert on $p_t for each row delete from `test.$p_t`",
    ];
    const out: Record<string, string> = {};
    for (const step of asked) out[step] = outcome(await db.write(step));
    assertEquals(out, all(asked, "asked"));
    const refused = await db.write("/*!delete from $p_t where true*/");
    assertEquals(refused.startsWith("ERR denied"), true, refused);
    assertEquals(await db.rows("select id, v from $p_t order by id"), [
      { id: 1, v: "a" },
      { id: 2, v: "b" },
      { id: 3, v: "c" },
    ]);
  },
});

Deno.test({
  // Sent (MariaDB, t of 3 rows): `replace into t select id, 'r' from t
  // returning id`. Should: asked, as `replace into t select id, 'r' from
  // t` is (every row replaced). Happened: OK [[1],[2],[3]], unasked; every
  // row is now 'r', and the answer's rows_affected is 0. A REPLACE …
  // RETURNING answers rows and no OK packet, and mysql_rows.ts takes the
  // returned rows as the count only for INSERT|DELETE (RETURNS_CHANGED),
  // so rowsAffected is 0 and judgeWritten(before 2, written 0, now 1)
  // finds nothing.
  name:
    "held (fixed): mysql: REPLACE … SELECT … RETURNING of a table from itself changes every row unasked (rows_affected 0)",
  ...needs("mysql"),
  async fn() {
    await using db = await myOwn([
      "create table $p_t (id int primary key, v varchar(20))",
      "insert into $p_t values (1, 'a'), (2, 'b'), (3, 'c')",
      "create table $p_u (id int primary key, v varchar(20))",
    ]);
    const asked = outcome(
      await db.write("replace into $p_t select id, 'r' from $p_t returning id"),
    );
    const counted = await db.raw(
      "replace into $p_u values (1, 'q') returning id",
    );
    assertEquals({
      asked,
      v: await db.rows("select v from $p_t order by id"),
      rowsAffected: counted.json.result?.structuredContent?.rows_affected,
    }, {
      asked: "asked",
      v: [{ v: "a" }, { v: "b" }, { v: "c" }],
      rowsAffected: 1,
    });
  },
});

Deno.test({
  // Sent (MariaDB): `delete from par where id = 1`, par of 1 row, ch of 3
  // rows each with `foreign key (pid) references par(id) on delete
  // cascade`. Should: asked, as PostgreSQL asks the same write (its
  // counts see the cascade: "deletes every row of public.ch"); at least
  // "unjudged" -- mysql_changes.ts already finds such CASCADE/SET NULL
  // rules for the preview. Happened: OK, unasked; ch has 0 rows. Not in
  // docs/security.md's "Not counted" list (only triggers are).
  name:
    "held (fixed): mysql: a one-row DELETE whose ON DELETE CASCADE empties another table runs unasked (PostgreSQL asks)",
  ...needs("mysql"),
  async fn() {
    await using db = await myOwn([
      "create table $p_par (id int primary key) engine = innodb",
      "insert into $p_par values (1)",
      "create table $p_ch (id int, pid int, foreign key (pid) references $p_par (id) on delete cascade) engine = innodb",
      "insert into $p_ch values (1, 1), (2, 1), (3, 1)",
    ]);
    assertEquals(
      outcome(await db.write("delete from $p_par where id = 1")),
      "asked",
    );
    assertEquals(await db.rows("select count(*) as n from $p_ch"), [{ n: 3 }]);
  },
});

Deno.test({
  // Sent (MariaDB; SQLite the same with `replace into k values …`): k (id
  // primary key, k unique) of rows (1,a), (2,b), (3,c); `replace into k
  // values (1, 'b'), (3, 'z')`. Should: asked -- each VALUES row replaced
  // every row it conflicts with on any unique key, so 2 rows replaced all
  // 3 the table had. Happened: OK, unasked; k is (1,b), (3,z). The
  // judgment treats REPLACE … VALUES as "none" (only a REPLACE from a
  // query is counted).
  name:
    "held (fixed): mysql, sqlite: REPLACE … VALUES whose rows conflict on two unique keys replaces every row of the table unasked",
  ...needs("mysql"),
  async fn() {
    await using db = await myOwn([
      "create table $p_k (id int primary key, k varchar(5) unique)",
      "insert into $p_k values (1, 'a'), (2, 'b'), (3, 'c')",
    ]);
    await using lite = await liteOwn(`
      create table k (id integer primary key, k text unique);
      insert into k values (1, 'a'), (2, 'b'), (3, 'c');`);
    assertEquals({
      mysql: outcome(
        await db.write("replace into $p_k values (1, 'b'), (3, 'z')"),
      ),
      sqlite: outcome(
        await lite.write("replace into k values (1, 'b'), (3, 'z')"),
      ),
      left: [
        await db.rows("select id, k from $p_k order by id"),
        lite.all("select id, k from k order by id"),
      ],
    }, {
      mysql: "asked",
      sqlite: "asked",
      left: [[{ id: 1, k: "a" }, { id: 2, k: "b" }, { id: 3, k: "c" }], [
        { id: 1, k: "a" },
        { id: 2, k: "b" },
        { id: 3, k: "c" },
      ]],
    });
  },
});

Deno.test({
  // Sent, all through the token. MariaDB: `create trigger xt after insert
  // on x for each row delete from t where true` (t of 3 rows; the body's
  // `where true` passes the words check a body `delete from t` fails),
  // then `insert into x values (1)`. SQLite: `create trigger xi after
  // insert on x begin update u set v = 'trig' where true; end`, `create
  // view vw as select * from x`, `create trigger vwi instead of insert on
  // vw begin delete from k where true; end`, `create trigger sd after
  // update of v on s begin delete from s where id <> new.id; end` (a
  // trigger on the SAME table), then `insert into x values (1)`, `insert
  // into vw values (1)`, `update s set v = 'q' where id = 1`. Should: asked (the
  // documented gap covers "rows a trigger changes in another table"; the
  // same-table one is not even documented). Happened: all OK, unasked; t,
  // k and s emptied, every row of u changed. Cheap ways to count: SQLite
  // already reads total_changes() - before; when it exceeds the
  // statement's own changes() by >= 2, other rows changed that no count
  // names: judge "unjudged". MariaDB: a target with triggers is known
  // (mysql_changes.ts skips its dry run for it): judge "unjudged".
  name:
    "held (fixed: standing_code.ts): a trigger the token creates itself (on another table, INSTEAD OF on a view, or SQLite on the same table) emptied or rewrote a table unasked; creating one asks now",
  ...needs("mysql"),
  async fn() {
    await using db = await myOwn([
      "create table $p_t (id int primary key)",
      "insert into $p_t values (1), (2), (3)",
      "create table $p_x (id int)",
    ]);
    const mysqlSteps = [
      "create trigger $p_xt after insert on $p_x for each row delete from $p_t where true",
      "insert into $p_x values (1)",
    ];
    const mysqlOut = await outcomes(db.write, mysqlSteps);
    await using lite = await liteOwn(`
      create table u (id integer primary key, v text);
      insert into u values (1, 'a'), (2, 'b'), (3, 'c');
      create table k (id integer primary key);
      insert into k values (1), (2), (3);
      create table s (id integer primary key, v text);
      insert into s values (1, 'a'), (2, 'b'), (3, 'c');
      create table x (id integer);`);
    const made = [
      "create trigger xi after insert on x begin update u set v = 'trig' where true; end",
      "create view vw as select * from x",
      "create trigger vwi instead of insert on vw begin delete from k where true; end",
      "create trigger sd after update of v on s begin delete from s where id <> new.id; end",
    ];
    const steps = [
      "insert into x values (1)",
      "insert into vw values (1)",
      "update s set v = 'q' where id = 1",
    ];
    assertEquals({
      made: await outcomes(lite.write, made),
      mysql: mysqlOut,
      sqlite: await outcomes(lite.write, steps),
      left: [
        await db.rows("select count(*) as n from $p_t"),
        lite.all("select count(*) as n from k"),
        lite.all("select count(*) as n from u where v = 'trig'"),
        lite.all("select count(*) as n from s"),
      ],
    }, {
      // A trigger is code that runs later: its creation asks
      // (standing_code.ts), so none of them exists and the writes run.
      made: { ...all(made, "asked"), [made[1]!]: "ran" },
      mysql: { [mysqlSteps[0]!]: "asked", [mysqlSteps[1]!]: "ran" },
      sqlite: {
        ...all(steps, "ran"),
        // No INSTEAD OF trigger: a view takes no INSERT.
        [steps[1]!]:
          "ERR query_failed: cannot modify vw because it is a view [SQL",
      },
      left: [[{ n: 3 }], [{ n: 3 }], [{ n: 0 }], [{ n: 3 }]],
    });
  },
});

Deno.test({
  // Sent through the token: `create table m (id int primary key) engine =
  // myisam`, `insert into m values (1), (2), (3)`, then `delete from m
  // where true`; `delete from m` (no WHERE: asked by its words); and on an
  // `engine = memory` table of 3 rows `delete from e where id in (1, 2,
  // 3)`. Should: each asked and nothing changed ("nothing was run";
  // "tried and rolled back, not committed"). Happened: each answered "ERR
  // user_cancelled … nothing was run", yet the table is empty: a MyISAM,
  // Aria or MEMORY table is not transactional, so the try before COMMIT
  // (and the preview's dry run of a DELETE without WHERE) removed the rows
  // for good. The every-row stop (and every dry run) relies on ROLLBACK;
  // a table whose ENGINE is not transactional (information_schema.ENGINES
  // TRANSACTIONS = 'NO') must be asked before it is run, never tried.
  name:
    "held (fixed): mysql: an asked write on a MyISAM or MEMORY table has already removed the rows ('nothing was run'): the try before COMMIT cannot be rolled back",
  ...needs("mysql"),
  async fn() {
    await using db = await myOwn([]);
    const setup = [
      "create table $p_m (id int primary key) engine = myisam",
      "insert into $p_m values (1), (2), (3)",
      "create table $p_n (id int primary key) engine = myisam",
      "insert into $p_n values (1), (2), (3)",
      "create table $p_e (id int primary key) engine = memory",
      "insert into $p_e values (1), (2), (3)",
    ];
    assertEquals(await outcomes(db.write, setup), all(setup, "ran"));
    const asked = [
      "delete from $p_m where true",
      "delete from $p_n",
      "delete from $p_e where id in (1, 2, 3)",
    ];
    const out = await outcomes(db.write, asked);
    const left = [];
    for (const t of ["m", "n", "e"]) {
      left.push(await db.rows(`select count(*) as n from $p_${t}`));
    }
    assertEquals({ out, left }, {
      out: all(asked, "asked"),
      left: [[{ n: 3 }], [{ n: 3 }], [{ n: 3 }]],
    });
  },
});

Deno.test({
  // Sent (MariaDB): `set statement sql_mode = '' for alter table t modify v
  // int` (t's v 'a', 'b', 'c'), and `set statement max_statement_time = 0
  // for create table c as select 1 as x`. Should: either run unasked (a
  // DDL) or be asked before running. Happened: each answered "ERR
  // user_cancelled … nothing was run", but the DDL had committed
  // implicitly: every v is 0, table c exists. A SET-led statement is
  // "unjudged" (may call stored code) and is stopped only after it ran; a
  // DDL after FOR commits on its own. Once approved it would run a second
  // time.
  name:
    "held (fixed): mysql: SET STATEMENT … FOR <DDL> is asked only after the DDL committed (every value converted, a table created), then would run twice",
  ...needs("mysql"),
  async fn() {
    await using db = await myOwn([
      "create table $p_t (id int primary key, v varchar(20))",
      "insert into $p_t values (1, 'a'), (2, 'b'), (3, 'c')",
    ]);
    const steps = [
      "set statement sql_mode = '' for alter table $p_t modify v int",
      "set statement max_statement_time = 0 for create table $p_c as select 1 as x",
    ];
    const out = await outcomes(db.write, steps);
    assertEquals({
      out,
      v: await db.rows("select v from $p_t order by id"),
      c: await db.rows(
        "select count(*) as n from information_schema.tables where table_schema = 'test' and table_name = '$p_c'",
      ),
    }, {
      out: all(steps, "asked"),
      v: [{ v: "a" }, { v: "b" }, { v: "c" }],
      c: [{ n: 0 }],
    });
  },
});

Deno.test({
  // Sent (MariaDB; t of 3 rows whose column w is 'w' in each):
  // `alter ignore table t add unique (w)`. Should: asked -- it deletes
  // every row but one of each w (here all but one). Happened: OK,
  // unasked; t has 1 row. ALTER IGNORE … ADD UNIQUE drops the duplicate
  // rows, and as a DDL it commits on its own: no count can stop it after
  // the fact, so ALTER IGNORE must be asked (or denied) by its words.
  name:
    "held (fixed): mysql: ALTER IGNORE TABLE … ADD UNIQUE deletes all rows but one of each value unasked (and commits on its own)",
  ...needs("mysql"),
  async fn() {
    await using db = await myOwn([
      "create table $p_t (id int primary key, w varchar(5))",
      "insert into $p_t values (1, 'w'), (2, 'w'), (3, 'w')",
    ]);
    assertEquals(
      outcome(await db.write("alter ignore table $p_t add unique (w)")),
      "asked",
    );
    assertEquals(await db.rows("select count(*) as n from $p_t"), [{ n: 3 }]);
  },
});

Deno.test({
  // Sent: MariaDB `create trigger d after delete on t for each row insert
  // into log values (old.id)` (an ordinary audit trigger); SQLite `create
  // trigger d after delete on t begin insert into log values (old.id);
  // end`. Should: run unasked, as `create trigger … after insert …` does.
  // Happened: both asked ("unjudged": dml_shape.ts reads the trigger's
  // event word DELETE as the statement's keyword, and `DELETE ON` as a
  // multi-table DELETE). On MariaDB the answer says "nothing was run" but
  // the trigger exists (a DDL commits on its own); approved, it would run
  // a second time ("trigger already exists").
  name:
    "held (fixed: every_row.ts DML_WORDS, standing_code.ts): CREATE TRIGGER … AFTER DELETE ON … was asked as a multi-table DELETE after MariaDB had created it; it asks as code that runs later now, before anything is created",
  ...needs("mysql"),
  async fn() {
    await using db = await myOwn([
      "create table $p_t (id int primary key)",
      "create table $p_log (id int)",
    ]);
    const mysqlOut = outcome(
      await db.write(
        "create trigger $p_d after delete on $p_t for each row insert into $p_log values (old.id)",
      ),
    );
    await using lite = await liteOwn(`
      create table t (id integer primary key);
      create table log (id integer);`);
    const sqliteOut = outcome(
      await lite.write(
        "create trigger d after delete on t begin insert into log values (old.id); end",
      ),
    );
    // By design now: every trigger asks, as code that runs on later writes
    // (standing_code.ts), and on MariaDB before anything is created.
    assertEquals({ mysql: mysqlOut, sqlite: sqliteOut }, {
      mysql: "asked",
      sqlite: "asked",
    });
    assertEquals(
      await db.rows(
        "select count(*) as n from information_schema.triggers where trigger_name = '$p_d'",
      ),
      [{ n: 0 }],
    );
  },
});

Deno.test({
  // Sent (MariaDB; p partitioned by range into p0, p1, 4 rows; h by hash
  // into 2, 4 rows): `alter table p truncate partition all`, `alter table
  // h truncate partition p0, p1`. Should: denied to this token, as `alter
  // table p drop partition p0` and `truncate table p` are ("drops or
  // truncates data"). Happened: OK, unasked; both tables are empty. As a
  // DDL it commits on its own, so no count after it could stop it.
  name:
    "held (fixed): mysql: ALTER TABLE … TRUNCATE PARTITION ALL (or every partition by name) empties a table unasked, though DROP PARTITION and TRUNCATE are denied",
  ...needs("mysql"),
  async fn() {
    await using db = await myOwn([
      "create table $p_p (id int primary key) partition by range (id) (partition p0 values less than (10), partition p1 values less than (100))",
      "insert into $p_p values (1), (2), (3), (50)",
      "create table $p_h (id int primary key) partition by hash (id) partitions 2",
      "insert into $p_h values (1), (2), (3), (4)",
    ]);
    const steps = [
      "alter table $p_p drop partition p0",
      "alter table $p_p truncate partition all",
      "alter table $p_h truncate partition p0, p1",
    ];
    const out: Record<string, string> = {};
    for (const step of steps) out[step] = (await db.write(step)).slice(0, 10);
    assertEquals({
      out,
      p: await db.rows("select count(*) as n from $p_p"),
      h: await db.rows("select count(*) as n from $p_h"),
    }, {
      out: all(steps, "ERR denied"),
      p: [{ n: 4 }],
      h: [{ n: 4 }],
    });
  },
});

Deno.test({
  // The two MariaDB cases above with the user approving (a host dialog
  // that answers yes). Sent: `delete from m where true` (m MyISAM, 3
  // rows); `set statement max_statement_time = 0 for create table c as
  // select 1 as x`. Should: the question tells the truth, and the approved
  // write runs once. Happened: the question says "it deletes every row of
  // m (3 rows): tried and rolled back, not committed" with the preview
  // "Changes 0 rows of m" (the rows were already gone), and the answer's
  // rows_affected is 0; for the SET STATEMENT … CREATE TABLE the question
  // says "tried and rolled back, not committed" beside a preview note that
  // MariaDB commits it at once, and the approved run fails "Table … already
  // exists": it ran twice.
  name:
    "held (fixed: mysql_every_row.ts, mysql_changes.ts untriable): approving those writes: the question said 'rolled back, not committed' of rows already gone (preview 'Changes 0 rows'), and a SET STATEMENT … FOR CREATE TABLE ran twice; now neither is tried before the answer",
  ...needs("mysql"),
  async fn() {
    await using dialog = await recordingDialog(0);
    const saved = savedConnection(
      { engine: "mysql", url: MYSQL_URL },
      "Stop59",
      { externalAccess: "readWrite", safeMode: "silent" },
    );
    await using server = await serverWith([saved], {
      hostDialog: dialog.setting,
    });
    const token = (await server.mint("readWrite")).plaintext;
    await using db = await myOwn([
      "create table $p_m (id int primary key) engine = myisam",
      "insert into $p_m values (1), (2), (3)",
    ]);
    const call = async (query: string) =>
      await callTool(server, "execute_query", {
        connection_id: saved.id,
        query: query.replaceAll("$p", db.prefix),
        max_rows: 50,
      }, { authorization: `Bearer ${token}` });
    const deleted = await call("delete from $p_m where true");
    const deleteAsked = (await dialog.asked()).at(-1) as {
      previewLine: string;
    };
    const created = said(
      await call(
        "set statement max_statement_time = 0 for create table $p_c as select 1 as x",
      ),
    );
    assertEquals({
      preview: deleteAsked.previewLine,
      rowsAffected: deleted.json.result?.structuredContent?.rows_affected,
      created: created.slice(0, 30),
    }, {
      preview:
        `No preview of ${db.prefix}_m: no dry run: ${db.prefix}_m is a MyISAM table: a write to it cannot be tried and rolled back`,
      rowsAffected: 3,
      created: "OK []",
    });
  },
});

Deno.test({
  // Sent (MariaDB, t of 3 rows): `create event e on schedule at
  // current_timestamp + interval 1 second do delete from t where true`.
  // Should: asked (or denied) -- the event runs later in the server's
  // scheduler, outside any write dbport judges. Happened: OK, unasked; the
  // event exists (the test server's event_scheduler is OFF, so it did not
  // fire here, and this test does not turn it on: a global setting; with
  // it ON, every row of t is deleted a second later). `drop event` is
  // denied to this token, so it cannot even clean up after itself.
  name:
    "held (fixed): mysql: CREATE EVENT … DO DELETE … WHERE true is created unasked (it would run later in the scheduler, outside any count)",
  ...needs("mysql"),
  async fn() {
    await using db = await myOwn([
      "create table $p_t (id int primary key)",
      "insert into $p_t values (1), (2), (3)",
    ]);
    const made = outcome(
      await db.write(
        "create event $p_e on schedule at current_timestamp + interval 1 second do delete from $p_t where true",
      ),
    );
    assertEquals({
      made,
      events: await db.rows(
        "select count(*) as n from information_schema.events where event_name = '$p_e'",
      ),
    }, { made: "asked", events: [{ n: 0 }] });
  },
});

// ------------------------------------------------------------------- SQLite

Deno.test({
  name:
    "held: sqlite, postgres: a saved query whose parameter makes it pick every row (`delete from t where id > :min`, min 0; `update … where id <= :max`) is asked; picked by key it runs",
  ...needs("postgres"),
  async fn() {
    const dir = await Deno.makeTempDir({ prefix: "attack59_" });
    const file = `${dir}/attack59.db`;
    const { DatabaseSync } = await import("node:sqlite");
    const lite = new DatabaseSync(file);
    lite.exec(`create table t (id integer primary key, v text);
      insert into t values (1, 'a'), (2, 'b'), (3, 'c');`);
    await using pg = await pgOwn(PG_T);
    const connections = [
      savedConnection({ engine: "sqlite", url: file }, "Lite", {
        externalAccess: "readWrite",
        safeMode: "silent",
      }),
      savedConnection({ engine: "postgres", url: pg.url }, "Pg", {
        externalAccess: "readWrite",
        safeMode: "silent",
      }),
    ];
    await using server = await serverWith(connections, {
      approvalTimeoutSeconds: 1,
    });
    const queries = connections.flatMap((c) => {
      const at = c.name.toLowerCase();
      return [
        {
          name: `${at}_wipe`,
          connectionId: c.id,
          sql: "delete from t where id > :min",
          params: [{ name: "min", type: "int" }],
          description: "",
        },
        {
          name: `${at}_set`,
          connectionId: c.id,
          sql: "update t set v = 'x' where id <= :max",
          params: [{ name: "max", type: "int" }],
          description: "",
        },
      ];
    });
    await Deno.writeTextFile(
      inAppDir(server.home, QUERIES_FILE),
      JSON.stringify({ queries }),
    );
    const token = (await server.mint("readWrite")).plaintext;
    // Not callTool: its output check lists tools without the token.
    const call = async (name: string, args: Record<string, unknown>) =>
      outcome(
        said(
          await postModern(
            server.url,
            modernRequest("tools/call", { name, arguments: args }, 1),
            { authorization: `Bearer ${token}` },
          ),
        ),
      );
    // The server reads queries.json when it changes: wait for its tools.
    for (let i = 0; i < 100; i++) {
      const list = await postModern(
        server.url,
        modernRequest("tools/list", {}, 1),
        { authorization: `Bearer ${token}` },
      );
      const names = (list.json.result.tools as { name: string }[]).map((t) =>
        t.name
      );
      if (names.includes("q_pg_set") && names.includes("q_lite_wipe")) break;
      await new Promise((done) => setTimeout(done, 50));
    }
    try {
      const out: Record<string, string> = {};
      for (const at of ["lite", "pg"]) {
        out[`${at} wipe 0`] = await call(`q_${at}_wipe`, { min: 0 });
        out[`${at} set all`] = await call(`q_${at}_set`, { max: 9 });
        out[`${at} set one`] = await call(`q_${at}_set`, { max: 1 });
        out[`${at} wipe 2`] = await call(`q_${at}_wipe`, { min: 2 });
      }
      assertEquals(out, {
        "lite wipe 0": "asked",
        "lite set all": "asked",
        "lite set one": "ran",
        "lite wipe 2": "ran",
        "pg wipe 0": "asked",
        "pg set all": "asked",
        "pg set one": "ran",
        "pg wipe 2": "ran",
      });
      assertEquals(
        lite.prepare("select id, v from t order by id").all().map((r) =>
          `${r.id}:${r.v}`
        ),
        ["1:x", "2:b"],
      );
      assertEquals(
        (await pg.sql`select id, v from t order by id`).map((r) =>
          `${r.id}:${r.v}`
        ),
        ["1:x", "2:v2"],
      );
    } finally {
      lite.close();
      await Deno.remove(dir, { recursive: true });
    }
  },
});

Deno.test({
  name:
    "held: sqlite: the previously found cases, WITHOUT ROWID and FTS5 tables, and DELETE … WHERE true RETURNING cut at max_rows 1 are asked; nothing is committed",
  async fn() {
    await using db = await liteOwn(`
      create table t (id integer primary key, v text);
      insert into t values (1, 'v1'), (2, 'v2'), (3, 'v3');
      create table k (id text primary key, v text) without rowid;
      insert into k values ('1', 'a'), ('2', 'b'), ('3', 'c');
      create virtual table f using fts5(x);
      insert into f values ('a'), ('b'), ('c');`);
    const asked = [
      "delete from k where true",
      "update k set v = 'z' where id > '0'",
      "delete from f where rowid > 0",
      "update f set x = 'z' where true",
      "delete from t where true",
      "update t set v = 'x' where 1 = 1",
      "insert or replace into t select id, 'r' from t",
      "replace into t select id, 'r' from t",
      "insert into t select id, 'u' from t where true on conflict (id) do update set v = excluded.v",
      "with a as (select 1) delete from t where true",
    ];
    assertEquals(await outcomes(db.write, asked), all(asked, "asked"));
    assertEquals(
      outcome(
        await db.write("delete from t where true returning id", {
          max_rows: 1,
        }),
      ),
      "asked",
    );
    assertEquals(db.all("select id, v from t order by id"), [
      { id: 1, v: "v1" },
      { id: 2, v: "v2" },
      { id: 3, v: "v3" },
    ]);
  },
});

Deno.test({
  // Sent (SQLite): `with replace as (select 1) delete from w where true`,
  // w of 3 rows, and a table named "as" of 10 rows. Should: asked, as
  // `with a as (select 1) delete from w where true` is. Happened: OK,
  // unasked; w is empty. dml_shape.ts takes the first top-level write word
  // as the statement's keyword: the CTE's name `replace` (SQLite lets a
  // keyword of its fallback list name a CTE), so the statement is judged a
  // REPLACE … SELECT "written" into the table `AS`, whose 10 rows are more
  // than the 3 "written": nothing found. (Without a table "as" the count
  // fails and the write is asked.)
  name:
    "held (fixed): sqlite: a CTE named `replace` makes DELETE … WHERE true be judged as a REPLACE into table `as`: every row deleted unasked",
  async fn() {
    await using db = await liteOwn(`
      create table w (id integer primary key, v text);
      insert into w values (1, 'a'), (2, 'b'), (3, 'c');
      create table "as" (x);
      insert into "as" values (1), (2), (3), (4), (5), (6), (7), (8), (9), (10);`);
    assertEquals(
      outcome(
        await db.write("with replace as (select 1) delete from w where true"),
      ),
      "asked",
    );
    assertEquals(db.all("select count(*) as n from w"), [{ n: 3 }]);
  },
});

Deno.test({
  // Sent (SQLite): u (id integer primary key ON CONFLICT REPLACE, v) of 3
  // rows; `insert into u select id, 'r' from u`. Should: asked, as
  // `insert or replace into u select id, 'r' from u` is. Happened: OK,
  // unasked; every row is now 'r'. The judgment is by words (INSERT …
  // SELECT without OR REPLACE, upsert or REPLACE: "none"); the table's own
  // conflict clause makes it a REPLACE.
  name:
    "held (fixed): sqlite: a plain INSERT … SELECT of a table from itself whose key says ON CONFLICT REPLACE replaces every row unasked",
  async fn() {
    await using db = await liteOwn(`
      create table u (id integer primary key on conflict replace, v text);
      insert into u values (1, 'a'), (2, 'b'), (3, 'c');`);
    assertEquals(
      outcome(await db.write("insert into u select id, 'r' from u")),
      "asked",
    );
    assertEquals(db.all("select v from u order by id"), [
      { v: "a" },
      { v: "b" },
      { v: "c" },
    ]);
  },
});
