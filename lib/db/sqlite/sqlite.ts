/**
 * SQLite files, every call off the event loop: one worker thread per file
 * (`sqlite_worker.ts`, through `sqlite_client.ts`) owns the connections and
 * runs open, prepare, step, busy waits and close; this thread only posts
 * calls and awaits answers. A call past its timeout is stopped by a flag the
 * worker's progress handler reads (no lock is waited on to stop it); a worker
 * that still does not answer is terminated and replaced. Read handles are
 * `query_only`, pooled and closed when idle, and cap a value's length at the
 * answer budget. Remote libSQL URLs go through `libsql_remote.ts`.
 *
 * The parts: the file and its calls (`sqlite_call.ts`), stop flags
 * (`sqlite_flags.ts`), writes (`sqlite_write.ts`), the catalog
 * (`sqlite_schema.ts`); the worker's side is `sqlite_worker*.ts`.
 *
 * @module
 */

import { messageOf } from "../../base/message_of.ts";
import {
  callSqlite,
  catalog,
  firstClient,
  type SqliteConfig,
  type SqliteFile,
  sqliteFile,
} from "./sqlite_call.ts";
import type { SqliteClient } from "./sqlite_client.ts";
import { sqliteCatalog } from "./sqlite_schema.ts";
import { limitsOf, writeSqlite } from "./sqlite_write.ts";
import {
  type CallOptions,
  type Cell,
  type Driver,
  type EngineCheck,
  NO_OPINION,
  type QueryOptions,
  type QueryResult,
} from "../types.ts";

export { cellMapper, toDbError } from "./sqlite_cells.ts";
export type { SqliteConfig };

/** A stream's batches: at most this many rows, about this many bytes. */
const BATCH_ROWS = 1_000;
const BATCH_BYTES = 1024 * 1024;

/** A SQLite driver whose worker starts on first use; `client` is for tests. */
export function openSqlite(
  config: SqliteConfig,
): Driver & { client: SqliteClient } {
  const file = sqliteFile(config);
  return {
    engine: "sqlite",
    client: firstClient(file),
    // A SQLite file has no logins: the file's permissions and query_only are
    // what there is.
    loginRisks: () => Promise.resolve([]),
    check: (text, tier, options) => check(file, text, tier, options),
    version: (options) => version(file, options),
    ...sqliteCatalog((options) => catalog(file, options)),
    query: (text, options) => query(file, text, options),
    streamRead: (text, options, onBatch) =>
      streamRead(file, text, options, onBatch),
    close: async () => {
      await Promise.all(file.clients.map((each) => each.dispose()));
    },
  };
}

async function version(
  file: SqliteFile,
  options: CallOptions,
): Promise<string> {
  const [row] = await catalog(file, options)("select sqlite_version() as v");
  return `SQLite ${String(row?.v ?? "")}`;
}

/**
 * SQLite's own parser on a statement that is not a read: preparing it
 * compiles without running, so a syntax error or a missing table is found
 * before anyone is asked to approve it.
 */
async function check(
  file: SqliteFile,
  text: string,
  tier: string,
  options: CallOptions,
): Promise<EngineCheck> {
  if (tier === "read") return NO_OPINION;
  try {
    await callSqlite(file, options, { type: "prepare", sql: text });
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
}

/** A read within the answer budget, or a write (`sqlite_write.ts`). */
function query(
  file: SqliteFile,
  text: string,
  options: QueryOptions,
): Promise<QueryResult> {
  if (options.mode === "write") return writeSqlite(file, text, options);
  return callSqlite(file, options, {
    type: "query",
    sql: text,
    ...(options.params?.length ? { params: options.params } : {}),
    limits: limitsOf(options),
    maxBytes: options.maxBytes,
  });
}

/** Every row of a read, in batches handed to `onBatch` one at a time. */
function streamRead(
  file: SqliteFile,
  text: string,
  options: QueryOptions,
  onBatch: (columns: string[], rows: Cell[][]) => Promise<void>,
): Promise<{ rows: number }> {
  return callSqlite<{ rows: number }>(
    file,
    options,
    {
      type: "stream",
      sql: text,
      batchRows: BATCH_ROWS,
      batchBytes: BATCH_BYTES,
      maxBytes: options.maxBytes,
    },
    (batch) => onBatch(batch.columns, batch.rows),
  );
}
