/**
 * What the tests of "Every row, by effect" (docs/security.md) share: a
 * server with a readWrite token (Safe Mode silent, approvals cut at 1 s)
 * whose writes come back as "asked" (`ERR user_cancelled`), "ran" or the
 * start of any other answer; a PostgreSQL database, MariaDB tables (`$p` is
 * their prefix) or a MariaDB database of the test's own; a second session;
 * a wait until a statement holding a marker runs.
 *
 * A test file names its objects once: `const { pgOwn, myOwn } =
 * everyRow({ tag: "attack61", name: "Stop61" })`.
 *
 * @module
 */

import postgres from "postgres";
import mysql from "mysql2/promise";
import type { Engine } from "../lib/db/types.ts";
import type { JsonObject } from "../lib/protocol/jsonrpc.ts";
import { savedConnection, serverWith } from "./_connections.ts";
import { MYSQL_URL, POSTGRES_URL } from "./_db.ts";
import { sender } from "./_outsider.ts";
import { waitUntil } from "./_wait.ts";

/** What an approval that timed out answers: the write was asked about. */
export const ASKED = "ERR user_cancelled";

/** A write's outcome: "asked", "ran", or the first `cut` characters. */
export function outcomeOf(answer: string, cut = 200): string {
  return answer.startsWith(ASKED)
    ? "asked"
    : answer.startsWith("OK")
    ? "ran"
    : answer.slice(0, cut);
}

/** Each statement's outcome, in order (`write` gives outcomes). */
export async function outcomes(
  write: (query: string) => Promise<string>,
  steps: string[],
): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const step of steps) out[step] = await write(step);
  return out;
}

/** Every one of `steps` with the outcome `what`. */
export function all(steps: string[], what: string): Record<string, string> {
  return Object.fromEntries(steps.map((step) => [step, what]));
}

/** Wait `ms` milliseconds (for a lock to be waited on, not for a result). */
export const pause = (ms: number) =>
  new Promise((done) => setTimeout(done, ms));

/** How a test file names what it makes. */
export interface Naming {
  /** The start of its databases' and tables' names (`attack61`). */
  tag: string;
  /** The saved connection's name. */
  name: string;
  /** How much of an answer that is neither asked nor ran is kept (200). */
  cut?: number;
}

/** The server's settings unless a test gives its own. */
const APPROVALS_CUT = { approvalTimeoutSeconds: 1 };

/**
 * A server over `url` (readWrite, Safe Mode silent): `write` (a readWrite
 * token's outcome), `said` (its answer in one line) and `read` (a readOnly
 * token's answer in one line).
 */
export async function writer(
  engine: Engine,
  url: string,
  naming: Pick<Naming, "name" | "cut">,
  settings: JsonObject = APPROVALS_CUT,
) {
  const saved = savedConnection({ engine, url }, naming.name, {
    externalAccess: "readWrite",
    safeMode: "silent",
  });
  const server = await serverWith([saved], settings);
  const said = sender(
    server,
    saved.id,
    (await server.mint("readWrite")).plaintext,
    50,
  );
  let reader: ((query: string) => Promise<string>) | undefined;
  return {
    server,
    said,
    write: async (query: string) => outcomeOf(await said(query), naming.cut),
    async read(query: string): Promise<string> {
      reader ??= sender(
        server,
        saved.id,
        (await server.mint("readOnly")).plaintext,
        50,
      );
      return reader(query);
    },
    [Symbol.asyncDispose]: () => server[Symbol.asyncDispose](),
  };
}

/** Rows as strings, a row's values joined by ":". */
function joined(rows: readonly Record<string, unknown>[]): string[] {
  return rows.map((row) => Object.values(row).map(String).join(":"));
}

/** `url` with the database `name`. */
function withDatabase(base: string, name: string): string {
  const url = new URL(base);
  url.pathname = `/${name}`;
  return url.href;
}

/** A unique name starting with `tag`. */
const unique = (tag: string, length = 8) =>
  `${tag}_${crypto.randomUUID().slice(0, length)}`;

/** A PostgreSQL database of the test's own, `setup` run in it. */
async function pgOwn(naming: Naming, setup: string) {
  const name = unique(naming.tag);
  const root = postgres(POSTGRES_URL, { max: 1, onnotice: () => {} });
  await root.unsafe(`create database ${name}`);
  const url = withDatabase(POSTGRES_URL, name);
  const sql = postgres(url, { max: 3, onnotice: () => {} });
  if (setup.trim() !== "") await sql.unsafe(setup);
  const server = await writer("postgres", url, naming);
  return {
    write: server.write,
    read: server.read,
    sql,
    url,
    /** A second session of the tester's own, released at the scope's end. */
    async session() {
      const reserved = await sql.reserve();
      return Object.assign(reserved, {
        [Symbol.asyncDispose]: () => Promise.resolve(reserved.release()),
      });
    },
    async ids(table: string): Promise<number[]> {
      return (await sql.unsafe(`select id from ${table} order by id`)).map((
        row,
      ) => Number(row.id));
    },
    async rows(query: string): Promise<string[]> {
      return joined(await sql.unsafe(query));
    },
    /** Until a statement holding `marker` runs on this database. */
    async running(marker: string): Promise<void> {
      await waitUntil(`a statement holding ${marker}`, async () => {
        const [row] = await sql`select count(*)::int as n
          from pg_stat_activity
          where datname = current_database() and state = 'active'
            and pid <> pg_backend_pid() and position(${marker} in query) > 0`;
        return row!.n > 0;
      });
    },
    async [Symbol.asyncDispose]() {
      await server[Symbol.asyncDispose]();
      await sql.end();
      await root.unsafe(`drop database if exists ${name} with (force)`);
      await root.end();
    },
  };
}

/** MariaDB sessions on `url`: `root` and, once asked for, `other`. */
async function mySessions(url: string, named: (text: string) => string) {
  const root = await mysql.createConnection({
    uri: url,
    multipleStatements: true,
  });
  let second: mysql.Connection | undefined;
  const query = async (
    on: mysql.Connection,
    text: string,
    params?: unknown[],
  ) => (await on.query(named(text), params))[0] as Record<string, unknown>[];
  return {
    /** `text` (its `$p` named) on the first session; its rows. */
    root: (text: string, params?: unknown[]) => query(root, text, params),
    /** A second session, for a statement that may wait on the first. */
    async other(text: string): Promise<void> {
      second ??= await mysql.createConnection(url);
      await query(second, text);
    },
    async rows(text: string): Promise<string[]> {
      return joined(await query(root, text));
    },
    async ids(table: string): Promise<number[]> {
      return (await query(root, `select id from ${table} order by id`)).map((
        row,
      ) => Number(row.id));
    },
    async end() {
      await second?.end();
      await root.end();
    },
  };
}

/**
 * MariaDB tables (and routines) of the test's own in the test database:
 * `$p` in any statement given stands for their prefix, `setup` is run
 * first. Dropped at the end.
 */
async function myOwn(naming: Naming, setup: string | string[]) {
  const prefix = unique(naming.tag);
  const named = (text: string) => text.replaceAll("$p", prefix);
  const my = await mySessions(MYSQL_URL, named);
  for (const step of [setup].flat()) await my.root(step);
  const server = await writer("mysql", MYSQL_URL, naming);
  const like = [`${prefix}%`];
  return {
    ...my,
    prefix,
    write: (query: string) => server.write(named(query)),
    read: (query: string) => server.read(named(query)),
    /** Until a statement holding `marker` (and the prefix) runs. */
    async running(marker: string): Promise<void> {
      await waitUntil(`a statement holding ${marker}`, async () => {
        const [row] = await my.root(
          `select count(*) as n from information_schema.processlist
            where id <> connection_id() and command = 'Query'
              and info like ? and info like ?`,
          [`%${marker}%`, `%${prefix}%`],
        );
        return Number(row!.n) > 0;
      });
    },
    async [Symbol.asyncDispose]() {
      await server[Symbol.asyncDispose]();
      try {
        const routines = await my.root(
          "select routine_name as n from information_schema.routines where routine_schema = database() and routine_type = 'PROCEDURE' and routine_name like ?",
          like,
        );
        for (const { n } of routines) {
          await my.root(`drop procedure if exists \`${n}\``);
        }
        const tables = await my.root(
          "select table_name as n from information_schema.tables where table_schema = database() and table_name like ?",
          like,
        );
        await my.root("set foreign_key_checks = 0");
        for (const { n } of tables) {
          await my.root(`drop table if exists \`${n}\``);
        }
      } finally {
        await my.end();
      }
    },
  };
}

/** A MariaDB database of the test's own, `setup` run in it. */
async function myDatabase(naming: Naming, setup: string) {
  const name = unique(naming.tag);
  const root = await mysql.createConnection(MYSQL_URL);
  await root.query(`create database ${name}`);
  const url = withDatabase(MYSQL_URL, name);
  const my = await mySessions(url, (text) => text);
  if (setup.trim() !== "") await my.root(setup);
  const server = await writer("mysql", url, naming);
  return {
    ...my,
    write: server.write,
    async [Symbol.asyncDispose]() {
      await server[Symbol.asyncDispose]();
      await my.end();
      await root.query(`drop database if exists ${name}`);
      await root.end();
    },
  };
}

/** A SQLite file of the test's own, `setup` run in it. */
async function liteOwn(naming: Naming, setup: string) {
  const dir = await Deno.makeTempDir({ prefix: `${naming.tag}_` });
  const file = `${dir}/${naming.tag}.db`;
  const { DatabaseSync } = await import("node:sqlite");
  const db = new DatabaseSync(file);
  db.exec(setup);
  const server = await writer("sqlite", file, naming);
  return {
    write: server.write,
    db,
    rows(query: string): string[] {
      return joined(db.prepare(query).all() as Record<string, unknown>[]);
    },
    async [Symbol.asyncDispose]() {
      db.close();
      await server[Symbol.asyncDispose]();
      await Deno.remove(dir, { recursive: true });
    },
  };
}

/** The harness, naming what it makes as `naming` says. */
export function everyRow(naming: Naming) {
  return {
    writer: (engine: Engine, url: string, settings?: JsonObject) =>
      writer(engine, url, naming, settings),
    pgOwn: (setup = "") => pgOwn(naming, setup),
    myOwn: (setup: string | string[] = []) => myOwn(naming, setup),
    myDatabase: (setup = "") => myDatabase(naming, setup),
    liteOwn: (setup: string) => liteOwn(naming, setup),
  };
}
