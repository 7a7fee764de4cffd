/**
 * Real databases for tests: the same fixture schema on PostgreSQL, MariaDB
 * and a SQLite file, each in a namespace of its own that is dropped after.
 * A server that cannot be reached has its tests registered as ignored, with a
 * loud SKIPPED line ({@linkcode needs}), except under CI, where they fail.
 *
 * @module
 */

import Database from "libsql/promise";
import mysql from "mysql2/promise";
import postgres from "postgres";
import type { Engine } from "../lib/db/types.ts";

import { MYSQL_URL, POSTGRES_URL } from "./_db_urls.ts";

export { MYSQL_URL, POSTGRES_URL };

/** A fixture database: the URL a saved connection uses, and how to drop it. */
export interface Fixture extends AsyncDisposable {
  engine: Engine;
  /** The URL of the fixture (its own database, schema or file). */
  url: string;
  /** The schema tools should name (PostgreSQL schema, MySQL database, "main"). */
  schema: string;
  /** Run admin SQL on the fixture (outside dbport). */
  admin(sql: string): Promise<unknown[]>;
}

/** The fixture's index and view: the same SQL on every engine. */
const SHARED_SCHEMA = [
  `create index books_author_idx on books(author_id)`,
  `create view book_titles as select b.title, a.name from books b join authors a on a.id = b.author_id`,
];
/** The fixture's authors and books: the same SQL on every engine. */
const SHARED_ROWS = [
  `insert into authors (name, born) values ('Ada', '1815-12-10'), ('Alan', '1912-06-23')`,
  `insert into books (author_id, title, price) values (1, 'Notes', 12.50), (2, 'Computing Machinery', 20.00)`,
];

const FIXTURE: Record<Engine, string[]> = {
  postgres: [
    `create table authors (id serial primary key, name text not null, born date)`,
    `create table books (id bigserial primary key,
       author_id integer not null references authors(id) on delete cascade,
       title varchar(200) not null unique, price numeric(10,2) default 9.99,
       in_print boolean not null default true)`,
    ...SHARED_SCHEMA,
    `create table kinds (id integer primary key, big bigint, dec numeric(20,5), flag boolean,
       day date, at timestamptz, doc jsonb, bytes bytea, missing text, words text)`,
    ...SHARED_ROWS,
    `insert into kinds values (1, 9007199254740993, 12345.67891, true, '2024-02-29',
       '2024-02-29 13:14:15.123456+00', '{"a": [1, 2.5, "x"]}', '\\x00ff10', null, 'héllo wörld ✓ 日本')`,
  ],
  mysql: [
    `create table authors (id int auto_increment primary key, name varchar(100) not null, born date)`,
    `create table books (id bigint auto_increment primary key,
       author_id int not null, title varchar(200) not null unique,
       price decimal(10,2) default 9.99, in_print boolean not null default true,
       constraint books_author_fk foreign key (author_id) references authors(id) on delete cascade)`,
    ...SHARED_SCHEMA,
    `create table kinds (id int primary key, big bigint, \`dec\` decimal(20,5), flag boolean,
       day date, at timestamp(6) null, doc json, bytes varbinary(16), missing text, words text)
       default charset utf8mb4`,
    ...SHARED_ROWS,
    `insert into kinds values (1, 9007199254740993, 12345.67891, true, '2024-02-29',
       '2024-02-29 13:14:15.123456', '{"a": [1, 2.5, "x"]}', x'00ff10', null, 'héllo wörld ✓ 日本')`,
  ],
  sqlite: [
    `create table authors (id integer primary key, name text not null, born date)`,
    `create table books (id integer primary key,
       author_id integer not null references authors(id) on delete cascade,
       title varchar(200) not null unique, price decimal(10,2) default 9.99,
       in_print boolean not null default 1)`,
    ...SHARED_SCHEMA,
    `create table kinds (id integer primary key, big bigint, dec decimal(20,5), flag boolean,
       day date, at timestamptz, doc json, bytes blob, missing text, words text)`,
    ...SHARED_ROWS,
    `insert into kinds values (1, 9007199254740993, '12345.67891', 1, '2024-02-29',
       '2024-02-29 13:14:15.123456+00', '{"a": [1, 2.5, "x"]}', x'00ff10', null, 'héllo wörld ✓ 日本')`,
  ],
};

const suffix = () => crypto.randomUUID().slice(0, 8);

/**
 * Why a database server cannot be used here, per engine: probed once per
 * test file, before its tests are registered, so a test that needs it is
 * registered as ignored (with the reason on stderr) instead of passing
 * without having run. Under CI nothing is excused: the tests run and fail.
 */
export const UNREACHABLE: Readonly<Partial<Record<Engine, string>>> =
  Deno.env.get("CI") ? {} : await probeServers();

async function probeServers(): Promise<Partial<Record<Engine, string>>> {
  const found: Partial<Record<Engine, string>> = {};
  await Promise.all(
    ([["postgres", POSTGRES_URL], ["mysql", MYSQL_URL]] as const).map(
      async ([engine, url]) => {
        const { hostname, port } = new URL(url);
        const where = {
          hostname: hostname.replace(/^\[|\]$/g, ""),
          port: Number(port || (engine === "postgres" ? 5432 : 3306)),
        };
        try {
          const conn = await Deno.connect(where);
          conn.close();
        } catch (error) {
          found[engine] = `${where.hostname}:${where.port}: ${
            error instanceof Error ? error.message : String(error)
          }`;
        }
      },
    ),
  );
  return found;
}

const announced = new Set<Engine>();

/**
 * The `Deno.test` options of a test that needs `engine`'s server: ignored,
 * with a loud SKIPPED line, where the server cannot be reached (never in CI).
 */
export function needs(...engines: Engine[]): { ignore: boolean } {
  let ignore = false;
  for (const engine of engines) {
    const reason = UNREACHABLE[engine];
    if (reason === undefined) continue;
    ignore = true;
    if (!announced.has(engine)) {
      announced.add(engine);
      // deno-lint-ignore no-console
      console.error(
        `SKIPPED: the ${engine} tests of this file are ignored: ${reason} (set DBPORT_TEST_${engine.toUpperCase()}_URL; CI never skips)`,
      );
    }
  }
  return { ignore };
}

/**
 * A fixture on `engine`. A test that needs a server declares it with
 * {@linkcode needs}, so an unreachable one never gets here but under CI,
 * where the failure is the point.
 */
export async function openFixture(
  engine: Engine,
  { ownDatabase = false } = {},
): Promise<Fixture> {
  // A SQLite file is always possible: only a database server may be absent.
  if (engine === "sqlite") return await sqliteFixture();
  return engine === "postgres"
    ? await postgresFixture({ ownDatabase, statements: FIXTURE.postgres })
    : await mysqlFixture();
}

/** What `openPostgresDatabase` holds: two authors and a view, in `shop`. */
const SHOP = [
  "create table authors (id serial primary key, name text not null)",
  "insert into authors (name) values ('Ada'), ('Alan')",
  "create view author_names as select name from authors",
];

/**
 * A PostgreSQL database `dbp_db_<random>` of a test's own whose schema
 * `shop` holds `authors` (2 rows) and a view: for what acts on a whole
 * database, such as `harden`, which grants on every schema in it.
 */
export function openPostgresDatabase(): Promise<Fixture> {
  return postgresFixture({
    ownDatabase: true,
    schema: "shop",
    statements: SHOP,
  });
}

/**
 * `statements` in a schema of its own (`schema`, or `dbp_<random>`) in
 * `test`, or with `ownDatabase` in a database of its own, dropped with its
 * sessions after: what reads the whole database (the schema fingerprint)
 * must not see other test runs' schemas come and go. (MariaDB's and SQLite's
 * fixtures are their own database already.)
 */
async function postgresFixture(
  { ownDatabase, schema = `dbp_${suffix()}`, statements }: {
    ownDatabase: boolean;
    schema?: string;
    statements: readonly string[];
  },
): Promise<Fixture> {
  const url = new URL(POSTGRES_URL);
  const server = ownDatabase
    ? postgres(POSTGRES_URL, { max: 1, onnotice: () => {} })
    : null;
  const database = `dbp_db_${
    crypto.randomUUID().replaceAll("-", "").slice(0, 12)
  }`;
  if (server !== null) {
    await server.unsafe(`create database ${database} template template0`);
    url.pathname = `/${database}`;
  }
  const sql = postgres(url.toString(), { max: 1, onnotice: () => {} });
  await sql.unsafe(`create schema ${schema}`);
  await sql.unsafe(`set search_path = ${schema}`);
  for (const statement of statements) await sql.unsafe(statement);
  return {
    engine: "postgres",
    url: url.toString(),
    schema,
    admin: async (text) => [...await sql.unsafe(text)],
    async [Symbol.asyncDispose]() {
      // A database of its own goes whole, its sessions ended with it.
      if (server === null) await sql.unsafe(`drop schema ${schema} cascade`);
      await sql.end();
      if (server !== null) {
        await server.unsafe(`drop database if exists ${database} with (force)`);
        await server.end();
      }
    },
  };
}

async function mysqlFixture(): Promise<Fixture> {
  const schema = `dbp_${suffix()}`;
  const connection = await mysql.createConnection({ uri: MYSQL_URL });
  await connection.query(`create database ${schema}`);
  await connection.query(`use ${schema}`);
  for (const statement of FIXTURE.mysql) await connection.query(statement);
  const url = new URL(MYSQL_URL);
  url.pathname = `/${schema}`;
  return {
    engine: "mysql",
    url: url.toString(),
    schema,
    admin: async (text) => (await connection.query(text))[0] as unknown[],
    async [Symbol.asyncDispose]() {
      await connection.query(`drop database ${schema}`);
      await connection.end();
    },
  };
}

async function sqliteFixture(): Promise<Fixture> {
  const dir = await Deno.makeTempDir({ prefix: "dbport-sqlite-" });
  const path = `${dir}/fixture.db`;
  const db = new Database(path, {});
  for (const statement of FIXTURE.sqlite) await db.exec(statement);
  return {
    engine: "sqlite",
    url: path,
    schema: "main",
    admin: async (text) => {
      const statement = await db.prepare(text);
      return statement.reader
        ? [...await statement.iterate()]
        : (await db.exec(text), []);
    },
    async [Symbol.asyncDispose]() {
      db.close();
      await Deno.remove(dir, { recursive: true });
    },
  };
}

/** The engines, for tests that run on each. */
export const ENGINES: readonly Engine[] = ["postgres", "mysql", "sqlite"];

/**
 * How many statements containing `marker` run on the fixture's server now
 * (other than the asking one). Always 0 for SQLite, which has no server.
 */
export async function runningCount(
  fixture: Fixture,
  marker: string,
): Promise<number> {
  if (fixture.engine === "postgres") {
    const rows = await fixture.admin(
      `select pid from pg_stat_activity where state = 'active' and query like '%${marker}%' and pid <> pg_backend_pid()`,
    );
    return rows.length;
  }
  if (fixture.engine === "mysql") {
    const rows = await fixture.admin(
      `select id from information_schema.processlist where info like '%${marker}%' and id <> connection_id()`,
    );
    return rows.length;
  }
  return 0;
}

/** Options of a driver-level read in tests: generous limits, no deadline worry. */
export const READ_OPTIONS = {
  mode: "read" as const,
  signal: new AbortController().signal,
  timeoutMs: 10_000,
  maxRows: 10,
  maxBytes: 10_000_000,
  maxCellChars: 1_000_000,
};
