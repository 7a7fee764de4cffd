/**
 * PostgreSQL through postgres.js: a small lazily-connecting pool, reads inside
 * `BEGIN READ ONLY` that is always rolled back (so even `set_config` leaves no
 * trace on the pooled session), rows read through a portal and cut at the cap,
 * and stopping by the protocol's cancel request. Writes run in their own
 * transaction and leave nothing behind on the pooled session (`DISCARD ALL`).
 *
 * @module
 */

import postgres from "postgres";
import { DbError } from "./errors.ts";
import { assembleOverview } from "./overview.ts";
import {
  describePostgresTable,
  listPostgresTables,
  postgresColumns,
  postgresFingerprint,
} from "./postgres_schema.ts";
import { redact } from "./redact.ts";
import { ROLLED_BACK, stoppable, throwIfAborted } from "./stoppable.ts";
import type {
  CallOptions,
  Cell,
  Driver,
  QueryOptions,
  QueryResult,
} from "./types.ts";
import {
  binaryCell,
  cellsInPlace,
  floatCell,
  isoDateTime,
  plainCell,
} from "./values.ts";

/** How to reach one PostgreSQL database. */
export interface PostgresConfig {
  url: string;
  password?: string;
  /** Values redacted from every message. */
  secrets: readonly string[];
  /** Seconds before an unused pooled connection closes. */
  idleSeconds?: number;
}

/** Connect timeout (issue: a database that cannot be reached in 10 s). */
export const CONNECT_TIMEOUT_SECONDS = 10;

// Statements a portal can stream; utility statements (SHOW, EXPLAIN) return
// no rows through a postgres.js cursor, so they are read whole (they are small).
const STREAMABLE = new Set(["SELECT", "WITH", "VALUES", "TABLE"]);
const FETCH_SIZE = 500;

type Sql = ReturnType<typeof postgres>;
type Column = { name: string; type: number };

/** Open a PostgreSQL driver; nothing connects until the first call. */
export function openPostgres(config: PostgresConfig): Driver {
  const sql: Sql = postgres(config.url, {
    max: 4,
    idle_timeout: config.idleSeconds ?? 60,
    connect_timeout: CONNECT_TIMEOUT_SECONDS,
    // Statements vary per call: no server-side prepared statement cache.
    prepare: false,
    onnotice: () => {},
    // Every session starts read-only: a read's own BEGIN READ ONLY is
    // pipelined with its statement (below), and should that BEGIN ever fail,
    // the statement still cannot write. Writes say BEGIN READ WRITE.
    connection: {
      application_name: "dbport",
      TimeZone: "UTC",
      default_transaction_read_only: true,
    },
    ...(config.password === undefined ? {} : { password: config.password }),
    // Dates and times stay text, converted per column (values.ts).
    types: {
      date: {
        to: 1184,
        from: [1082, 1083, 1114, 1184, 1266],
        serialize: (x: unknown) => String(x),
        parse: (x: string) => x,
      },
    },
  });
  const fail = (error: unknown) => toDbError(error, config.secrets);
  /** Our own catalog statements, with the caller's limits. */
  const catalog =
    (options: CallOptions) => (text: string, params?: unknown[]) =>
      run(
        () => sql.unsafe(text, params as postgres.ParameterOrJSON<never>[]),
        options,
        config.secrets,
      );

  return {
    engine: "postgres",
    async version(options) {
      const rows = await run(
        () => sql.unsafe("show server_version"),
        options,
        config.secrets,
      );
      return `PostgreSQL ${String(rows[0]?.server_version ?? "")}`.trim();
    },
    listTables: (options) => listPostgresTables(catalog(options), options),
    describeTable: (table, options) =>
      describePostgresTable(catalog(options), table, options.schema),
    async overview(options) {
      const exec = catalog(options);
      const tables = await listPostgresTables(exec, {
        rowCounts: false,
        ...(options.schema === undefined ? {} : { schema: options.schema }),
      });
      const last = tables[Math.min(tables.length, options.maxTables) - 1];
      const columns = await postgresColumns(exec, options.schema, last ?? null);
      return assembleOverview(tables, options.maxTables, columns);
    },
    fingerprint: (options) => postgresFingerprint(catalog(options)),
    query: (text, options) =>
      (options.mode === "write" ? writeQuery : readQuery)(sql, text, options)
        .catch((error) => {
          throw fail(error);
        }),
    async close() {
      await sql.end({ timeout: 1 });
    },
  };
}

type Row = Record<string, unknown>;

/** Run one of our own metadata statements with the caller's limits. */
async function run(
  start: () => postgres.PendingQuery<postgres.Row[]>,
  options: { signal: AbortSignal; timeoutMs: number },
  secrets: readonly string[],
): Promise<Row[]> {
  let pending: postgres.PendingQuery<postgres.Row[]> | null = null;
  try {
    return await stoppable(
      async () => {
        pending = start();
        return [...(await pending)] as Row[];
      },
      options,
      () => pending?.cancel(),
    );
  } catch (error) {
    throw toDbError(error, secrets);
  }
}

async function readQuery(
  sql: Sql,
  text: string,
  options: QueryOptions,
): Promise<QueryResult> {
  throwIfAborted(options.signal);
  const reserved = await sql.reserve();
  try {
    // Sent with the statement in one write rather than a round trip ahead of
    // it (a third of the driver's CPU per read, bench W1): the session's
    // read-only default covers the statement should BEGIN fail. SET LOCAL is
    // a server-side net under our own timer, should a cancel request be lost.
    const begin = reserved.unsafe(
      `BEGIN READ ONLY; SET LOCAL statement_timeout = ${
        options.timeoutMs + 5_000
      }`,
    ).simple();
    begin.catch(() => {});
    const result = await runStatement(reserved, text, options);
    await begin;
    return result;
  } finally {
    await reserved.unsafe("ROLLBACK").catch(() => {});
    reserved.release();
  }
}

/** SQLSTATE 25001: the statement cannot run inside a transaction block. */
const NOT_IN_TRANSACTION = "25001";

/**
 * Run a write in a transaction (VACUUM, CREATE INDEX CONCURRENTLY and the
 * like refuse one and run on their own). A stop before COMMIT rolls it back;
 * once COMMIT is sent it finishes, so the answer never hides a change.
 */
async function writeQuery(
  sql: Sql,
  text: string,
  options: QueryOptions,
): Promise<QueryResult> {
  throwIfAborted(options.signal);
  const reserved = await sql.reserve();
  const timeout = `statement_timeout = ${options.timeoutMs + 5_000}`;
  const statement = () => runStatement(reserved, text, options);
  let open = false;
  try {
    await reserved.unsafe(`BEGIN READ WRITE; SET LOCAL ${timeout}`).simple();
    open = true;
    let result: QueryResult;
    try {
      result = await statement();
    } catch (error) {
      if ((error as { code?: string }).code !== NOT_IN_TRANSACTION) throw error;
      await reserved.unsafe("ROLLBACK");
      open = false;
      // Outside a transaction block the session's read-only default would
      // refuse it; DISCARD ALL below restores both settings.
      await reserved.unsafe(
        `SET ${timeout}; SET default_transaction_read_only = off`,
      ).simple();
      return await statement();
    }
    throwIfAborted(options.signal, ROLLED_BACK);
    open = false;
    options.onCommit?.();
    await reserved.unsafe("COMMIT");
    return result;
  } finally {
    if (open) await reserved.unsafe("ROLLBACK").catch(() => {});
    // SET ROLE, temporary tables, prepared statements, advisory locks: none
    // of it may follow the session back into the pool.
    await reserved.unsafe("DISCARD ALL").catch(() => {});
    reserved.release();
  }
}

type Reserved = Awaited<ReturnType<Sql["reserve"]>>;
type Pending = ReturnType<ReturnType<Reserved["unsafe"]>["values"]>;

/** Run the client's statement on a reserved session, stoppable. */
function runStatement(
  reserved: Reserved,
  text: string,
  options: QueryOptions,
): Promise<QueryResult> {
  let pending: { cancel(): void } | null = null;
  return stoppable(
    async () => {
      const query = reserved.unsafe(text).values();
      pending = query;
      return await readRows(query, text, options.maxRows);
    },
    options,
    () => pending?.cancel(),
  );
}

/**
 * Read a statement's rows, keeping `maxRows` (one more tells it was cut).
 * SELECT-like statements stream through a portal; utility statements and
 * writes (RETURNING) are read whole.
 */
async function readRows(
  query: Pending,
  text: string,
  maxRows: number,
): Promise<QueryResult> {
  const keyword = /^[\s(]*([A-Za-z]+)/.exec(text)?.[1]?.toUpperCase() ?? "";
  const limit = maxRows + 1;
  const kept: unknown[][] = [];
  let columns: Column[] | undefined;
  let rowsAffected = 0;
  if (STREAMABLE.has(keyword)) {
    for await (const chunk of query.cursor(FETCH_SIZE)) {
      columns ??= (chunk as unknown as { columns?: Column[] }).columns;
      for (const row of chunk) {
        if (kept.length < limit) kept.push(row as unknown[]);
      }
      if (kept.length >= limit) break;
    }
    columns ??= (query as unknown as { statement?: { columns?: Column[] } })
      .statement?.columns;
  } else {
    const all = await query;
    const info = all as unknown as {
      columns?: Column[];
      count?: number | null;
      command?: string;
    };
    columns = info.columns;
    if (info.command !== "SELECT" && typeof info.count === "number") {
      rowsAffected = info.count;
    }
    kept.push(...(all.slice(0, limit) as unknown[][]));
  }
  const truncated = kept.length > maxRows;
  if (truncated) kept.length = maxRows;
  const types = (columns ?? []).map((column) => column.type);
  return {
    columns: (columns ?? []).map((column) => column.name),
    rows: cellsInPlace(
      kept,
      types.map((type) => (value: unknown) => pgCell(value, type)),
    ),
    rowsAffected,
    truncated,
  };
}

/** One PostgreSQL value as JSON (values.ts). */
function pgCell(value: unknown, type: number | undefined): Cell {
  if (value === null || value === undefined) return null;
  switch (type) {
    case 1114:
      return isoDateTime(String(value), false);
    case 1184:
      return isoDateTime(String(value), true);
    case 700:
    case 701:
      return floatCell(Number(value));
    case 17:
      return binaryCell(value as Uint8Array);
  }
  return plainCell(value);
}

/** A postgres.js failure as a redacted DbError. */
export function toDbError(error: unknown, secrets: readonly string[]): DbError {
  if (error instanceof DbError) return error;
  const e = error as {
    code?: string;
    message?: string;
    detail?: string;
    hint?: string;
  };
  const code = e.code ?? "";
  let message = e.message ?? String(error);
  if (e.detail) message += ` (${e.detail})`;
  if (e.hint) message += ` Hint: ${e.hint}`;
  if (/^[0-9A-Z]{5}$/.test(code)) message += ` [SQLSTATE ${code}]`;
  const text = redact(message, secrets);
  if (code === "CONNECT_TIMEOUT") {
    return new DbError(
      "connect_timeout",
      `the database did not answer within ${CONNECT_TIMEOUT_SECONDS} s`,
    );
  }
  if (code === "25006") return new DbError("read_only", text);
  if (code === "57014") return new DbError("timeout", text);
  if (
    /^(08|28|3D|53|57P)/.test(code) ||
    /^(E[A-Z]+|CONNECTION_[A-Z]+)$/.test(code)
  ) {
    return new DbError("connect", text);
  }
  return new DbError("query", text);
}
