/**
 * A column type change and `CREATE OR REPLACE` of a routine are asked about
 * before they run (lib/db/sql/column_change.ts): the findings outsider stop
 * 60 left open, through the MCP endpoint as
 * tests/db/every_row_approval_test.ts does (execute_query, a readWrite
 * token, Safe Mode silent, approvals cut at 1 s: an asked write answers
 * `ERR user_cancelled`). Each asked write leaves the table's values and the
 * routine's body as they were; a readOnly token is refused as before; table
 * changes that keep every value run unasked.
 *
 * @module
 */

import { assert, assertEquals } from "@std/assert";
import { MYSQL_URL, needs } from "../_db.ts";
import { recordingDialog } from "../_dialog.ts";
import { all, everyRow, outcomes } from "../_every_row_harness.ts";
import type { Engine } from "../../lib/db/types.ts";

const READ_ONLY =
  'FORBIDDEN Forbidden: a statement that writes needs the scope "tools:write"';

const { pgOwn, myOwn, writer } = everyRow({
  tag: "typechange",
  name: "Typechange",
  cut: 160,
});

/**
 * The reasons the host dialog shows for each of `queries`, sent by a
 * readWrite token (Safe Mode silent); the dialog denies each.
 */
async function reasonsShown(
  engine: Engine,
  url: string,
  queries: string[],
): Promise<unknown[]> {
  await using dialog = await recordingDialog(1);
  {
    await using server = await writer(engine, url, {
      hostDialog: dialog.setting,
    });
    for (const query of queries) {
      const answer = await server.said(query);
      assert(answer.startsWith("ERR"), `${query} -> ${answer}`);
    }
  }
  return (await dialog.asked()).map((asked) => asked.reasons);
}

const retyped = (column: string, table: string) =>
  `it changes the type of column ${column} of ${table}, which rewrites every row and may round or cut its values`;
const replaced = (routine: string) =>
  `it replaces routine ${routine}, which code already installed may call`;

Deno.test({
  name:
    "postgres: a column type change numeric(10,2) -> numeric(5,0) (TYPE or SET DATA TYPE, no USING) and CREATE OR REPLACE PROCEDURE are asked about and leave values and body as they were; a readOnly token is refused; ADD, SET DEFAULT, RENAME and a new procedure run",
  ...needs("postgres"),
  async fn() {
    await using db = await pgOwn();
    await db.sql.unsafe(`
      create table t (id int primary key, v numeric(10,2));
      insert into t values (1, 1.25), (2, 2.75);
      create procedure p() language sql as $$ delete from t where id < 0 $$;`);
    const asked = [
      "alter table t alter column v type numeric(5,0)",
      "alter table if exists only t alter v set data type numeric(5,0)",
      "alter table t add column w int, alter column v type int",
      "create or replace procedure p() language sql as $$ delete from t where id > 0 $$",
    ];
    assertEquals(await outcomes(db.write, asked), all(asked, "asked"));
    const state = async () => ({
      rows: (await db.sql`select id, v::text from t order by id`).map((r) =>
        `${r.id}:${r.v}`
      ),
      type: (await db.sql`select format_type(atttypid, atttypmod) as f
        from pg_attribute where attrelid = 't'::regclass and attname = 'v'`)[0]!
        .f,
      body: (await db.sql`select prosrc from pg_proc where proname = 'p'`)[0]!
        .prosrc,
    });
    const before = {
      rows: ["1:1.25", "2:2.75"],
      type: "numeric(10,2)",
      body: " delete from t where id < 0 ",
    };
    assertEquals(await state(), before);
    // The user is told why.
    assertEquals(
      await reasonsShown("postgres", db.url, [asked[0]!, asked[3]!]),
      [[retyped("v", "t")], [replaced("p")]],
    );
    assertEquals(await state(), before);
    // A readOnly token is refused, asking no one.
    for (const query of asked) {
      const answer = await db.read(query);
      assert(answer.startsWith(READ_ONLY), `${query} -> ${answer}`);
    }
    assertEquals(await state(), before);
    const ran = [
      "alter table t add column w int default 0",
      "alter table t alter column w set default 0",
      "alter table t alter column w set not null",
      "alter table t rename column w to type",
      "alter table t alter column type set default 1",
      "create procedure q() language sql as $$ select 1 $$",
    ];
    assertEquals(await outcomes(db.write, ran), all(ran, "ran"));
    assertEquals(await state(), before);
  },
});

Deno.test({
  name:
    "mysql: MODIFY and CHANGE of a DECIMAL(10,2) column to DECIMAL(5,0) or TINYINT and CREATE OR REPLACE PROCEDURE are asked about and leave values and body as they were; a readOnly token is refused; ADD, ALTER COLUMN SET DEFAULT, RENAME COLUMN and a new procedure run",
  ...needs("mysql"),
  async fn() {
    await using db = await myOwn();
    const t = `${db.prefix}_t`;
    const p = `${db.prefix}_p`;
    await db.root(
      `create table ${t} (id int primary key, v decimal(10,2)) engine = InnoDB`,
    );
    await db.root(`insert into ${t} values (1, 1.25), (2, 2.75)`);
    await db.root(
      `create procedure ${p}() delete from ${t} where id < 0`,
    );
    const asked = [
      `alter table ${t} modify v decimal(5,0)`,
      `alter table ${t} modify column v tinyint`,
      `alter table ${t} change v v decimal(5,0)`,
      `alter table ${t} change column v v2 tinyint`,
      `create or replace procedure ${p}() delete from ${t} where id > 0`,
    ];
    assertEquals(await outcomes(db.write, asked), all(asked, "asked"));
    const state = async () => {
      const rows = await db.root(
        `select id, cast(v as char) as v from ${t} order by id`,
      );
      const types = await db.root(
        "select column_type as c from information_schema.columns where table_schema = 'test' and table_name = ? and column_name = 'v'",
        [t],
      );
      const bodies = await db.root(
        "select routine_definition as b from information_schema.routines where routine_schema = 'test' and routine_name = ?",
        [p],
      );
      return {
        rows: (rows as { id: number; v: string }[]).map((r) =>
          `${r.id}:${r.v}`
        ),
        type: (types as { c: string }[])[0]?.c,
        body: (bodies as { b: string }[])[0]?.b,
      };
    };
    const before = {
      rows: ["1:1.25", "2:2.75"],
      type: "decimal(10,2)",
      body: `delete from ${t} where id < 0`,
    };
    assertEquals(await state(), before);
    assertEquals(
      await reasonsShown("mysql", MYSQL_URL, [asked[0]!, asked[4]!]),
      [[retyped("v", t)], [replaced(p)]],
    );
    assertEquals(await state(), before);
    for (const query of asked) {
      const answer = await db.read(query);
      assert(answer.startsWith(READ_ONLY), `${query} -> ${answer}`);
    }
    assertEquals(await state(), before);
    const ran = [
      `alter table ${t} add column w int`,
      `alter table ${t} alter column w set default 0`,
      `alter table ${t} alter w set default 1`,
      `alter table ${t} rename column w to type`,
      `create procedure ${db.prefix}_q() select 1`,
    ];
    assertEquals(await outcomes(db.write, ran), all(ran, "ran"));
    assertEquals(await state(), before);
  },
});
