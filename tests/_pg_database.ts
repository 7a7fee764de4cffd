/**
 * A PostgreSQL database of a test's own (not a schema in the shared `test`
 * database): for what acts on a whole database, such as `harden`, which
 * grants on every schema in it. Schema `shop` holds `authors` (2 rows) and a
 * view; the database is dropped, with its sessions, after.
 */

import postgres from "postgres";
import type { Fixture } from "./_db.ts";
import { POSTGRES_URL } from "./_db.ts";

/** A database `dbp_db_<random>` with the `shop` schema. */
export async function openPostgresDatabase(): Promise<Fixture> {
  const name = `dbp_db_${crypto.randomUUID().replaceAll("-", "").slice(0, 12)}`;
  const server = postgres(POSTGRES_URL, { max: 1, onnotice: () => {} });
  await server.unsafe(`create database ${name}`);
  const url = new URL(POSTGRES_URL);
  url.pathname = `/${name}`;
  const sql = postgres(url.toString(), { max: 1, onnotice: () => {} });
  for (
    const statement of [
      "create schema shop",
      "create table shop.authors (id serial primary key, name text not null)",
      "insert into shop.authors (name) values ('Ada'), ('Alan')",
      "create view shop.author_names as select name from shop.authors",
    ]
  ) await sql.unsafe(statement);
  return {
    engine: "postgres",
    url: url.toString(),
    schema: "shop",
    admin: async (text) => [...await sql.unsafe(text)],
    async [Symbol.asyncDispose]() {
      await sql.end();
      await server.unsafe(`drop database if exists ${name} with (force)`);
      await server.end();
    },
  };
}
