/**
 * SQLite files through libSQL's asynchronous engine (`libsql/promise`, the
 * engine beneath `@libsql/client`). `@libsql/client` itself steps a local
 * statement synchronously: a long query would stall the whole server and
 * could never be interrupted. Here the first step runs off the event loop,
 * `interrupt()` stops it, and rows stream in batches with the event loop
 * served between them. Handles are read-only (`PRAGMA query_only`), pooled
 * and closed when idle. Remote libSQL URLs go through `libsql_remote.ts`.
 *
 * @module
 */

import { messageOf } from "../protocol/message_of.ts";
import { thrown } from "../protocol/thrown.ts";
import Database from "libsql/promise";
import { Budget } from "./budget.ts";
import { dmlShape } from "./dml_shape.ts";
import { SQLITE_TRACK, sqliteCounts } from "./sqlite_changes.ts";
import { trackedWrite } from "./tracked_write.ts";
import { DbError, noTransaction, permissionProblem } from "./errors.ts";
import { assembleOverview, digest } from "./overview.ts";
import {
  describeSqliteTable,
  listSqliteSchemas,
  listSqliteTables,
  searchSqlite,
  sqliteColumns,
  sqliteSchemaText,
} from "./sqlite_schema.ts";
import { redact } from "./redact.ts";
import { ROLLED_BACK, stoppable, throwIfAborted } from "./stoppable.ts";
import {
  type Cell,
  type Driver,
  type EngineCheck,
  NO_OPINION,
  type QueryOptions,
  type QueryResult,
} from "./types.ts";
import {
  binaryCell,
  floatCell,
  integerCell,
  isoDateTime,
  jsonCell,
  plainCell,
} from "./values.ts";

/** How to open one SQLite file. */
export interface SqliteConfig {
  path: string;
  secrets: readonly string[];
  idleMs?: number;
}

interface Handle {
  db: Database;
  idleSince: number;
}

type Row = Record<string, unknown>;
type Column = { name: string; type: string | null };

/**
 * Read handles kept open between calls. A read holds its handle across its
 * awaits, so eight clients at once hold eight: with four kept, every other
 * read opened and closed a handle (bench W4 SQLite: 175 -> 114 µs CPU a call
 * with eight kept).
 */
const MAX_HANDLES = 8;
const BUSY_TIMEOUT_MS = 5_000;
/** How long rows are read before the event loop gets a turn. */
const SLICE_MS = 20;

/** Open a SQLite driver; the file is opened on first use. */
export function openSqlite(config: SqliteConfig): Driver {
  const idle: Handle[] = [];
  let open = 0;
  let sweeper: ReturnType<typeof setInterval> | undefined;
  const idleMs = config.idleMs ?? 60_000;

  const sweep = () => {
    const now = Date.now();
    for (let i = idle.length - 1; i >= 0; i--) {
      if (now - idle[i]!.idleSince > idleMs) {
        idle.splice(i, 1)[0]!.db.close();
        open--;
      }
    }
    if (open === 0 && sweeper !== undefined) {
      clearInterval(sweeper);
      sweeper = undefined;
    }
  };

  const acquire = async (): Promise<Database> => {
    const handle = idle.pop();
    if (handle !== undefined) return handle.db;
    try {
      const info = await Deno.stat(config.path);
      if (!info.isFile) throw new Error("not a regular file");
    } catch (error) {
      throw new DbError(
        "connect",
        redact(
          `cannot open the SQLite file ${config.path}: ${
            error instanceof Deno.errors.NotFound
              ? "it does not exist"
              : messageOf(error)
          }`,
          config.secrets,
        ),
      );
    }
    const db = new Database(config.path, { timeout: BUSY_TIMEOUT_MS });
    open++;
    try {
      await db.exec("PRAGMA query_only = ON");
    } catch (error) {
      db.close();
      open--;
      throw toDbError(error, config.secrets);
    }
    if (sweeper === undefined) {
      const timer = setInterval(sweep, Math.min(idleMs, 10_000));
      Deno.unrefTimer(timer);
      sweeper = timer;
    }
    return db;
  };
  const release = (db: Database) => {
    if (idle.length < MAX_HANDLES) idle.push({ db, idleSince: Date.now() });
    else {
      db.close();
      open--;
    }
  };

  const withDb = async <T>(
    options: { signal: AbortSignal; timeoutMs: number },
    work: (db: Database) => Promise<T>,
  ): Promise<T> => {
    const db = await acquire();
    try {
      return await stoppable(() => work(db), options, () => db.interrupt());
    } catch (error) {
      throw toDbError(error, config.secrets);
    } finally {
      release(db);
    }
  };

  /**
   * A write: a handle of its own with `query_only` off, `BEGIN IMMEDIATE`,
   * the statement (VACUUM and a few pragmas refuse a transaction and run on
   * their own), COMMIT. The handle is closed afterwards, so no pragma or
   * temporary table it set reaches a pooled one. A stop before COMMIT
   * interrupts and rolls back; COMMIT itself is never stopped.
   */
  const write = async (
    text: string,
    options: QueryOptions,
  ): Promise<QueryResult> => {
    const db = await acquire();
    const run = (text: string, limits: Partial<QueryOptions> = {}) =>
      stoppable(
        () => readRows(db, text, { ...options, ...limits }, true),
        options,
        () => db.interrupt(),
      );
    let before = 0;
    const track = options.track;
    const statement = track === undefined
      ? () => run(text)
      : () =>
        trackedWrite(text, track, options.maxRows, {
          shape: dmlShape(text, "sqlite"),
          ...SQLITE_TRACK,
          keyColumns: (target) => sqliteKeyColumns(db, target),
          run: (text, maxRows, maxBytes) => run(text, { maxRows, maxBytes }),
          counted: async () =>
            sqliteCounts(
              dmlShape(text, "sqlite").target,
              await scalar(db, "select changes()"),
              (await totalChanges(db)) - before,
            ),
        });
    let inTransaction = false;
    try {
      await db.exec("PRAGMA query_only = OFF");
      before = await totalChanges(db);
      await db.exec("BEGIN IMMEDIATE");
      inTransaction = true;
      let result: QueryResult;
      try {
        result = await statement();
      } catch (error) {
        if (!/within a transaction/i.test(messageOf(error))) {
          throw error;
        }
        if (options.beforeCommit !== undefined || track !== undefined) {
          throw noTransaction();
        }
        await db.exec("ROLLBACK");
        inTransaction = false;
        result = await statement();
      }
      throwIfAborted(options.signal, ROLLED_BACK);
      // Counted before COMMIT: the changes of this handle, committed or not.
      const done = {
        ...result,
        rowsAffected: (await totalChanges(db)) - before,
      };
      if (inTransaction) options.beforeCommit?.(done);
      options.onCommit?.();
      if (inTransaction) {
        inTransaction = false;
        await db.exec("COMMIT");
      }
      return done;
    } catch (error) {
      if (inTransaction) await db.exec("ROLLBACK").catch(() => {});
      throw toDbError(error, config.secrets);
    } finally {
      db.close();
      open--;
    }
  };

  const exec =
    (options: { signal: AbortSignal; timeoutMs: number }) =>
    (text: string, params: unknown[] = []) =>
      withDb(options, async (db) => {
        const statement = await db.prepare(text);
        const rows: Row[] = [];
        for (const row of await statement.iterate(...params)) rows.push(row);
        return rows;
      });

  /**
   * SQLite's own parser on a statement that is not a read: preparing it
   * compiles without running, so a syntax error or a missing table is found
   * before anyone is asked to approve it.
   */
  const check = async (
    text: string,
    tier: string,
    options: { signal: AbortSignal; timeoutMs: number },
  ): Promise<EngineCheck> => {
    if (tier === "read") return NO_OPINION;
    try {
      await withDb(options, async (db) => {
        await db.prepare(text);
      });
      return NO_OPINION;
    } catch (error) {
      const message = messageOf(error);
      if (
        /syntax error|no such (table|column)|incomplete input|unrecognized token/i
          .test(message)
      ) {
        return { ok: false, message };
      }
      return NO_OPINION;
    }
  };

  return {
    engine: "sqlite",
    // A SQLite file has no logins: the file's permissions and query_only are
    // what there is.
    loginRisks: () => Promise.resolve([]),
    check,
    async version(options) {
      const [row] = await exec(options)("select sqlite_version() as v");
      return `SQLite ${String(row?.v ?? "")}`;
    },
    listSchemas: (options) => listSqliteSchemas(exec(options)),
    listTables: (options) => listSqliteTables(exec(options), options),
    searchSchema: (options) => searchSqlite(exec(options), options),
    describeTable: (table, options) =>
      describeSqliteTable(exec(options), table, options.schema),
    async overview(options) {
      const run = exec(options);
      const schema = options.schema === undefined
        ? {}
        : { schema: options.schema };
      const page = await listSqliteTables(run, {
        rowCounts: false,
        limit: options.maxTables,
        ...schema,
      });
      const columns = await sqliteColumns(run, options.schema);
      return assembleOverview(page, options.maxTables, columns);
    },
    fingerprint: async (options) =>
      digest(await sqliteSchemaText(exec(options))),
    query: (text, options) =>
      options.mode === "write"
        ? write(text, options)
        : withDb(options, (db) => readRows(db, text, options)),
    close() {
      if (sweeper !== undefined) clearInterval(sweeper);
      sweeper = undefined;
      for (const handle of idle.splice(0)) handle.db.close();
      open = 0;
      return Promise.resolve();
    },
  };
}

/** Rows changed on this handle so far (triggers and cascades included). */
function totalChanges(db: Database): Promise<number> {
  return scalar(db, "select total_changes()");
}

/** One number a query of dbport's own answers. */
async function scalar(db: Database, text: string): Promise<number> {
  const statement = await db.prepare(text);
  statement.raw(true);
  for (const row of await statement.iterate()) {
    return Number((row as unknown[])[0]);
  }
  return 0;
}

/** The primary key columns of a table, in key order. */
async function sqliteKeyColumns(
  db: Database,
  target: { schema: string | null; name: string },
): Promise<string[]> {
  const statement = await db.prepare(
    "select name from pragma_table_info(?, ?) where pk > 0 order by pk",
  );
  statement.raw(true);
  const columns: string[] = [];
  for (
    const row of await statement.iterate(target.name, target.schema ?? "main")
  ) {
    columns.push(String((row as unknown[])[0]));
  }
  return columns;
}

/**
 * Read a statement's rows, keeping `maxRows` (one more tells it was cut). A
 * write (`drain`) is stepped to its end, its RETURNING rows past the cap
 * dropped, so that all of it is done.
 */
async function readRows(
  db: Database,
  text: string,
  options: QueryOptions,
  drain = false,
): Promise<QueryResult> {
  const statement = await db.prepare(text);
  if (!statement.reader) {
    // A statement that returns no rows: on a read-only handle the engine
    // refuses it if it writes (SQLITE_READONLY), and it is run for that.
    for (const _ of await statement.iterate()) { /* no rows */ }
    return {
      columns: [],
      rows: [],
      rowsAffected: 0,
      truncated: false,
      truncation: { rows: false, bytes: false, cells: 0 },
    };
  }
  statement.safeIntegers(true);
  statement.raw(true);
  const columns = (statement.columns() as Column[]) ?? [];
  const budget = new Budget(options);
  const mappers = columns.map((column) => cellMapper(column.type));
  // The first step, where a sort or an aggregate does its work, runs off the
  // event loop; interrupt() reaches it.
  const rows = await statement.iterate();
  let sliceStart = performance.now();
  for (const row of rows) {
    if (budget.open) {
      const cells = row as unknown[];
      for (let i = 0; i < cells.length; i++) {
        cells[i] = (mappers[i] ?? plainCell)(cells[i]);
      }
      budget.add(cells as Cell[]);
    }
    if (!budget.open && !drain) break;
    if (performance.now() - sliceStart > SLICE_MS) {
      // Let the timeout and an abort fire between batches.
      await new Promise((resolve) => setTimeout(resolve, 0));
      if (options.signal.aborted) db.interrupt();
      sliceStart = performance.now();
    }
  }
  return {
    columns: columns.map((column) => column.name),
    rows: budget.rows,
    rowsAffected: 0,
    truncated: budget.truncation.rows || budget.truncation.bytes,
    truncation: budget.truncation,
  };
}

/** The JSON mapping of one column by its declared type (values.ts). */
export function cellMapper(declared: string | null): (value: unknown) => Cell {
  const type = (declared ?? "").toUpperCase();
  const or = (map: (value: unknown) => Cell) => (value: unknown): Cell =>
    value === null || value === undefined ? null : map(value);
  if (/BOOL/.test(type)) {
    return or((value) =>
      typeof value === "bigint" || typeof value === "number"
        ? Number(value) !== 0
        : plainCell(value)
    );
  }
  if (/^(BIGINT|INT8|UNSIGNED BIG INT)/.test(type)) {
    return or((value) =>
      typeof value === "bigint" ? value.toString() : plainCell(value)
    );
  }
  if (/DECIMAL|NUMERIC|MONEY/.test(type)) {
    return or((value) =>
      typeof value === "bigint" || typeof value === "number"
        ? String(value)
        : plainCell(value)
    );
  }
  if (/JSON/.test(type)) return or(jsonCell);
  if (/TIMESTAMPTZ|WITH TIME ZONE/.test(type)) {
    return or((value) =>
      typeof value === "string" ? isoDateTime(value, true) : plainCell(value)
    );
  }
  if (/DATETIME|TIMESTAMP/.test(type)) {
    return or((value) =>
      typeof value === "string" ? isoDateTime(value, false) : plainCell(value)
    );
  }
  return or((value) => {
    if (typeof value === "bigint") return integerCell(value);
    if (typeof value === "number") return floatCell(value);
    if (value instanceof ArrayBuffer || value instanceof Uint8Array) {
      return binaryCell(value);
    }
    return plainCell(value);
  });
}

const CONNECT_CODES = new Set([
  "SQLITE_CANTOPEN",
  "SQLITE_NOTADB",
  "SQLITE_CORRUPT",
  "SQLITE_PERM",
  "SQLITE_AUTH",
]);

/** A libSQL failure as a redacted DbError. */
export function toDbError(error: unknown, secrets: readonly string[]): DbError {
  if (error instanceof DbError) return error;
  const denied = permissionProblem(error);
  if (denied !== null) return denied;
  const e = thrown(error);
  const code = e.code;
  const text = redact(
    `${e.message}${code ? ` [${code}]` : ""}`,
    secrets,
  );
  if (code.startsWith("SQLITE_READONLY")) return new DbError("read_only", text);
  // A remote libSQL server that cannot be reached (@libsql/client's fetch or
  // WebSocket failing) is a connection problem, as on the other engines.
  if (
    /^HRANA_(WEBSOCKET|HTTP)|^SERVER_ERROR$|^ECONN|^ENOTFOUND$/.test(code) ||
    /^Fetch failed|fetch failed|error sending request|ECONNREFUSED/i.test(
      e.message,
    )
  ) {
    return new DbError("connect", text);
  }
  // Extended codes (SQLITE_CANTOPEN_ISDIR) belong to their primary code.
  if ([...CONNECT_CODES].some((c) => code === c || code.startsWith(`${c}_`))) {
    return new DbError("connect", text);
  }
  return new DbError("query", text);
}
