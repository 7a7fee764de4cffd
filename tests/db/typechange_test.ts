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
import postgres from "postgres";
import mysql from "mysql2/promise";
import { MYSQL_URL, needs, POSTGRES_URL } from "../_db.ts";
import { said } from "../_outsider.ts";
import { savedConnection, serverWith } from "../_connections.ts";
import { callTool } from "../_tool_call.ts";
import { recordingDialog } from "../_dialog.ts";
import type { Engine } from "../../lib/db/types.ts";

const ASKED = "ERR user_cancelled";
const READ_ONLY =
  'FORBIDDEN Forbidden: a statement that writes needs the scope "tools:write"';

/** readWrite and readOnly tokens (Safe Mode silent) on `url`; approvals cut at 1 s. */
async function tokens(engine: Engine, url: string) {
  const saved = savedConnection({ engine, url }, "Typechange", {
    externalAccess: "readWrite",
    safeMode: "silent",
  });
  const server = await serverWith([saved], { approvalTimeoutSeconds: 1 });
  const writer = (await server.mint("readWrite")).plaintext;
  const reader = (await server.mint("readOnly")).plaintext;
  const run = async (token: string, query: string) =>
    said(
      await callTool(server, "execute_query", {
        connection_id: saved.id,
        query,
        max_rows: 50,
      }, { authorization: `Bearer ${token}` }),
    );
  return {
    server,
    write: (query: string) => run(writer, query),
    read: (query: string) => run(reader, query),
  };
}

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
  const saved = savedConnection({ engine, url }, "Typechange", {
    externalAccess: "readWrite",
    safeMode: "silent",
  });
  const server = await serverWith([saved], { hostDialog: dialog.setting });
  try {
    const token = (await server.mint("readWrite")).plaintext;
    for (const query of queries) {
      const answer = said(
        await callTool(server, "execute_query", {
          connection_id: saved.id,
          query,
          max_rows: 50,
        }, { authorization: `Bearer ${token}` }),
      );
      assert(answer.startsWith("ERR"), `${query} -> ${answer}`);
    }
  } finally {
    await server[Symbol.asyncDispose]();
  }
  return (await dialog.asked()).map((asked) => asked.reasons);
}

const retyped = (column: string, table: string) =>
  `it changes the type of column ${column} of ${table}, which rewrites every row and may round or cut its values`;
const replaced = (routine: string) =>
  `it replaces routine ${routine}, which code already installed may call`;

/** Each statement: "asked", "ran", or the start of any other answer. */
async function outcomes(
  write: (query: string) => Promise<string>,
  steps: string[],
): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const step of steps) {
    const answer = await write(step);
    out[step] = answer.startsWith(ASKED)
      ? "asked"
      : answer.startsWith("OK")
      ? "ran"
      : answer.slice(0, 160);
  }
  return out;
}

function expect(steps: string[], outcome: string): Record<string, string> {
  return Object.fromEntries(steps.map((step) => [step, outcome]));
}

/** A PostgreSQL database of the test's own (`typechange_...`). */
async function pgOwn() {
  const name = `typechange_${crypto.randomUUID().slice(0, 8)}`;
  const root = postgres(POSTGRES_URL, { max: 1, onnotice: () => {} });
  await root.unsafe(`create database ${name}`);
  const url = new URL(POSTGRES_URL);
  url.pathname = `/${name}`;
  const own = postgres(url.href, { max: 1, onnotice: () => {} });
  const { server, write, read } = await tokens("postgres", url.href);
  return {
    write,
    read,
    url: url.href,
    sql: own,
    async [Symbol.asyncDispose]() {
      await server[Symbol.asyncDispose]();
      await own.end();
      await root.unsafe(`drop database if exists ${name} with (force)`);
      await root.end();
    },
  };
}

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
    assertEquals(await outcomes(db.write, asked), expect(asked, "asked"));
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
    assertEquals(await outcomes(db.write, ran), expect(ran, "ran"));
    assertEquals(await state(), before);
  },
});

/** MariaDB objects of the test's own (`typechange_..._`) in `test`. */
async function myOwn() {
  const prefix = `typechange_${crypto.randomUUID().slice(0, 8)}`;
  const { server, write, read } = await tokens("mysql", MYSQL_URL);
  const root = await mysql.createConnection(MYSQL_URL);
  const names = async (sql: string) =>
    ((await root.query(sql, [`${prefix}%`]))[0] as { n: string }[]).map((r) =>
      r.n
    );
  return {
    prefix,
    write,
    read,
    root,
    async [Symbol.asyncDispose]() {
      await server[Symbol.asyncDispose]();
      try {
        for (
          const n of await names(
            "select routine_name as n from information_schema.routines where routine_schema = 'test' and routine_name like ?",
          )
        ) await root.query(`drop procedure if exists \`${n}\``);
        for (
          const n of await names(
            "select table_name as n from information_schema.tables where table_schema = 'test' and table_name like ?",
          )
        ) await root.query(`drop table if exists \`${n}\``);
      } finally {
        await root.end();
      }
    },
  };
}

Deno.test({
  name:
    "mysql: MODIFY and CHANGE of a DECIMAL(10,2) column to DECIMAL(5,0) or TINYINT and CREATE OR REPLACE PROCEDURE are asked about and leave values and body as they were; a readOnly token is refused; ADD, ALTER COLUMN SET DEFAULT, RENAME COLUMN and a new procedure run",
  ...needs("mysql"),
  async fn() {
    await using db = await myOwn();
    const t = `${db.prefix}_t`;
    const p = `${db.prefix}_p`;
    await db.root.query(
      `create table ${t} (id int primary key, v decimal(10,2)) engine = InnoDB`,
    );
    await db.root.query(`insert into ${t} values (1, 1.25), (2, 2.75)`);
    await db.root.query(
      `create procedure ${p}() delete from ${t} where id < 0`,
    );
    const asked = [
      `alter table ${t} modify v decimal(5,0)`,
      `alter table ${t} modify column v tinyint`,
      `alter table ${t} change v v decimal(5,0)`,
      `alter table ${t} change column v v2 tinyint`,
      `create or replace procedure ${p}() delete from ${t} where id > 0`,
    ];
    assertEquals(await outcomes(db.write, asked), expect(asked, "asked"));
    const state = async () => {
      const [rows] = await db.root.query(
        `select id, cast(v as char) as v from ${t} order by id`,
      );
      const [types] = await db.root.query(
        "select column_type as c from information_schema.columns where table_schema = 'test' and table_name = ? and column_name = 'v'",
        [t],
      );
      const [bodies] = await db.root.query(
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
    assertEquals(await outcomes(db.write, ran), expect(ran, "ran"));
    assertEquals(await state(), before);
  },
});
