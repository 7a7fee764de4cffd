// deno-lint-ignore-file no-console
/**
 * Answer sizes on a large catalog: dbport's discovery tools on a PostgreSQL
 * schema of 3,000 tables, beside MCP Toolbox's `postgres-list-tables`, its
 * equivalent (Toolbox has no search). Bytes of the JSON-RPC response body,
 * what a client receives and a model may be given.
 *
 * @module
 */

import postgres from "postgres";
import { POSTGRES_URL } from "../tests/_db.ts";
import { callOnce, closeConnections } from "./mcp_request.ts";
import type { Target } from "./targets.ts";

/** Tables of the wide schema. */
export const WIDE_TABLES = 3_000;
const SCHEMA = "dbport_bench_wide";

/** Make (again) the schema of 3,000 tables of five columns, a few commented. */
export async function createWideSchema(): Promise<() => Promise<void>> {
  const sql = postgres(POSTGRES_URL, { onnotice: () => {}, max: 1 });
  await dropSchema(sql);
  await sql.unsafe(`create schema ${SCHEMA}`);
  // In batches: one transaction creating 3,000 tables runs out of lock
  // slots (max_locks_per_transaction).
  for (let from = 0; from < WIDE_TABLES; from += 500) {
    await sql.unsafe(
      `do $$ begin for i in ${from}..${
        Math.min(WIDE_TABLES, from + 500) - 1
      } loop
      execute format('create table ${SCHEMA}.%I (id bigint primary key,
        customer_id bigint, created_at timestamptz, amount numeric(12, 2),
        note text)', 'table_' || lpad(i::text, 4, '0'));
    end loop; end $$`,
    );
  }
  await sql.unsafe(
    `create table ${SCHEMA}.customers (id bigint primary key, email text, name text)`,
  );
  await sql.unsafe(
    `comment on column ${SCHEMA}.customers.email is 'where invoices are sent'`,
  );
  return async () => {
    await dropSchema(sql);
    await sql.end();
  };
}

/** Drop the wide schema, 500 tables a transaction (as it was made). */
async function dropSchema(sql: postgres.Sql): Promise<void> {
  for (;;) {
    const [row] = await sql.unsafe(
      `select count(*)::int as n from pg_tables where schemaname = '${SCHEMA}'`,
    );
    if (Number(row?.n ?? 0) === 0) break;
    await sql.unsafe(`do $$ declare t record; begin
      for t in select tablename from pg_tables where schemaname = '${SCHEMA}'
        limit 500 loop
        execute format('drop table ${SCHEMA}.%I cascade', t.tablename);
      end loop; end $$`);
  }
  await sql.unsafe(`drop schema if exists ${SCHEMA} cascade`);
}

/** Bytes of one tools/call answer. */
async function answerBytes(
  target: Target,
  name: string,
  args: Record<string, unknown>,
): Promise<number> {
  const text = await callOnce(target, "tools/call", { name, arguments: args });
  if (!text.includes('"result"') || text.includes('"isError":true')) {
    throw new Error(`${name} failed: ${text.slice(0, 300)}`);
  }
  return new TextEncoder().encode(text).length;
}

/** The sizes, as report lines (a markdown table). */
export async function measureDiscovery(
  dbport: Target,
  toolbox: Target,
  connectionId: string,
): Promise<{ lines: string[]; largestDbport: number }> {
  const args = { connection_id: connectionId };
  const rows: [string, string, number][] = [
    [
      "dbport",
      "list_tables (schema, defaults: 200 a page)",
      await answerBytes(dbport, "list_tables", { ...args, schema: SCHEMA }),
    ],
    [
      "dbport",
      'list_tables (schema, pattern "table_29")',
      await answerBytes(dbport, "list_tables", {
        ...args,
        schema: SCHEMA,
        pattern: "table_29",
      }),
    ],
    [
      "dbport",
      'search_schema "customer email"',
      await answerBytes(dbport, "search_schema", {
        ...args,
        query: "customer email",
      }),
    ],
    [
      "dbport",
      'search_schema "amount" (50 of 3,000 columns)',
      await answerBytes(dbport, "search_schema", { ...args, query: "amount" }),
    ],
    ["dbport", "list_schemas", await answerBytes(dbport, "list_schemas", args)],
  ];
  let toolboxBytes: number | string;
  try {
    toolboxBytes = await answerBytes(toolbox, "pg_list_tables", {});
  } catch (error) {
    toolboxBytes = `failed: ${String(error).slice(0, 80)}`;
  }
  closeConnections();
  const lines = [
    "| server | call | answer bytes |",
    "|---|---|---:|",
    ...rows.map(([who, what, bytes]) =>
      `| ${who} | ${what} | ${bytes.toLocaleString("en-US")} |`
    ),
    `| MCP Toolbox | postgres-list-tables (every table, no paging) | ${
      typeof toolboxBytes === "number"
        ? toolboxBytes.toLocaleString("en-US")
        : toolboxBytes
    } |`,
  ];
  console.log(lines.join("\n"));
  return {
    lines,
    largestDbport: Math.max(...rows.map(([, , bytes]) => bytes)),
  };
}
