/**
 * A row another session commits while a write runs is not a row the write
 * kept (outsider stop 59, left open then): `delete from t where id > 0 and
 * pg_sleep(0.4) is not null`, with `insert into t values (100)` committed
 * meanwhile, had deleted every row t had without asking, as the count
 * after the write saw the new row. A PostgreSQL write that is judged runs
 * in REPEATABLE READ, its counts in its own snapshot (postgres.ts,
 * pg_every_row.ts `pgBefore`); MariaDB counts the fewer of the rows in a
 * snapshot taken as its transaction starts and the rows committed now
 * (mysql_write.ts, mysql_every_row.ts). Through the MCP endpoint
 * (execute_query, a readWrite token, Safe Mode silent, approvals cut at
 * 1 s), and the PostgreSQL judgment on one session.
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
import { pgBefore, pgEveryRow } from "../../lib/db/postgres/pg_every_row.ts";
import type { Engine } from "../../lib/db/types.ts";

const ASKED = "ERR user_cancelled";

/** A readWrite token (Safe Mode silent) on `url`; approvals cut at 1 s. */
async function writer(engine: Engine, url: string) {
  const saved = savedConnection({ engine, url }, "Concurrent", {
    externalAccess: "readWrite",
    safeMode: "silent",
  });
  const server = await serverWith([saved], { approvalTimeoutSeconds: 1 });
  const token = (await server.mint("readWrite")).plaintext;
  const write = async (query: string) => {
    const answer = said(
      await callTool(server, "execute_query", {
        connection_id: saved.id,
        query,
        max_rows: 50,
      }, { authorization: `Bearer ${token}` }),
    );
    return answer.startsWith(ASKED)
      ? "asked"
      : answer.startsWith("OK")
      ? "ran"
      : answer.slice(0, 160);
  };
  return { server, write };
}

/** A PostgreSQL database of the test's own, `setup` run in it. */
async function pgOwn(setup: string) {
  const name = `concurrent_${crypto.randomUUID().slice(0, 8)}`;
  const root = postgres(POSTGRES_URL, { max: 1, onnotice: () => {} });
  await root.unsafe(`create database ${name}`);
  const url = new URL(POSTGRES_URL);
  url.pathname = `/${name}`;
  const own = postgres(url.href, { max: 2, onnotice: () => {} });
  await own.unsafe(setup);
  const { server, write } = await writer("postgres", url.href);
  return {
    write,
    sql: own,
    async ids(table: string): Promise<number[]> {
      return (await own.unsafe(`select id from ${table} order by id`)).map((
        row,
      ) => Number(row.id));
    },
    async [Symbol.asyncDispose]() {
      await server[Symbol.asyncDispose]();
      await own.end();
      await root.unsafe(`drop database if exists ${name} with (force)`);
      await root.end();
    },
  };
}

/** MariaDB tables of the test's own (`$p` is their prefix). */
async function myOwn(setup: string[]) {
  const root = await mysql.createConnection(MYSQL_URL);
  const prefix = `concurrent_${crypto.randomUUID().slice(0, 6)}`;
  const named = (text: string) => text.replaceAll("$p", prefix);
  for (const step of setup) await root.query(named(step));
  const { server, write } = await writer("mysql", MYSQL_URL);
  return {
    write: (query: string) => write(named(query)),
    async root(query: string): Promise<void> {
      await root.query(named(query));
    },
    /** Until a statement holding `marker` (and this test's prefix) runs. */
    async running(marker: string): Promise<void> {
      for (let i = 0; i < 200; i++) {
        const [rows] = await root.query(
          `select count(*) as n from information_schema.processlist
            where id <> connection_id() and command = 'Query'
              and info like ? and info like ?`,
          [`%${marker}%`, `%${prefix}%`],
        );
        if (Number((rows as { n: number }[])[0]!.n) > 0) return;
        await pause(10);
      }
      throw new Error(`no statement holding ${marker} ran`);
    },
    async ids(table: string): Promise<number[]> {
      const [rows] = await root.query(
        named(`select id from ${table} order by id`),
      );
      return (rows as { id: number }[]).map((row) => Number(row.id));
    },
    async [Symbol.asyncDispose]() {
      await server[Symbol.asyncDispose]();
      const [rows] = await root.query(
        "select table_name as t from information_schema.tables where table_schema = database() and table_name like ?",
        [`${prefix}%`],
      );
      for (const row of rows as { t: string }[]) {
        await root.query(`drop table if exists \`${row.t}\``);
      }
      await root.end();
    },
  };
}

const pause = (ms: number) => new Promise((done) => setTimeout(done, ms));

/** Until a statement holding `marker` runs on this test's own database. */
async function running(sql: postgres.Sql, marker: string): Promise<void> {
  for (let i = 0; i < 200; i++) {
    const [row] = await sql`select count(*)::int as n from pg_stat_activity
      where datname = current_database() and state = 'active'
        and pid <> pg_backend_pid() and position(${marker} in query) > 0`;
    if (row!.n > 0) return;
    await pause(10);
  }
  throw new Error(`no statement holding ${marker} ran`);
}

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
    await running(db.sql, "delete from t where id > 0");
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
    await running(db.sql, "update t set v = 'x' where id");
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
    const session = await db.sql.reserve();
    const exec = (sql: string, params?: unknown[]) =>
      session.unsafe(sql, params as never[]) as Promise<
        Record<string, unknown>[]
      >;
    const judged = async (statement: string, meanwhile: string) => {
      await exec("begin isolation level repeatable read");
      try {
        const before = await pgBefore(exec);
        await exec(statement);
        await db.sql.unsafe(meanwhile);
        return await pgEveryRow(exec, before, true);
      } finally {
        await exec("rollback");
      }
    };
    try {
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
    } finally {
      session.release();
    }
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
