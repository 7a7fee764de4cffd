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
 * @module
 */

import { messageOf } from "../base/message_of.ts";
import { DbError, noTransaction } from "./errors.ts";
import { assembleOverview, digest } from "./overview.ts";
import { redact } from "./redact.ts";
import { type Call, SqliteClient, WorkerError } from "./sqlite_client.ts";
import { toDbError } from "./sqlite_cells.ts";
import type { Limits, WriteAnswer } from "./sqlite_protocol.ts";
import {
  describeSqliteTable,
  listSqliteSchemas,
  listSqliteTables,
  searchSqlite,
  sqliteColumns,
  sqliteSchemaText,
} from "./sqlite_schema.ts";
import { ROLLED_BACK, stoppable, throwIfAborted } from "./stoppable.ts";
import {
  type CallOptions,
  type Cell,
  type Driver,
  type EngineCheck,
  NO_OPINION,
  type QueryOptions,
  type QueryResult,
} from "./types.ts";

export { cellMapper, toDbError } from "./sqlite_cells.ts";

/** How to open one SQLite file. */
export interface SqliteConfig {
  path: string;
  secrets: readonly string[];
  idleMs?: number;
  /** Columns AI reads may not read: the read handles' authorizer denies them. */
  privateColumns?: readonly string[];
}

type Row = Record<string, unknown>;

/** A stream's batches: at most this many rows, about this many bytes. */
const BATCH_ROWS = 1_000;
const BATCH_BYTES = 1024 * 1024;
/**
 * Worker threads per file: a long read on one leaves the other serving (two
 * heavy reads ran side by side on libSQL's threads before).
 */
const WORKERS = 2;
/** A worker silent this long with calls in hand is inside a long statement. */
const STUCK_MS = 10;
/** How long a COMMIT may wait for readers (it is never stopped). */
const COMMIT_MS = 5_000;

/**
 * The calls' stop flags: slots of one shared buffer, one per call in flight,
 * rather than a SharedArrayBuffer (a backing store of its own, freed only when
 * both threads have collected it) per call.
 */
const FLAG_SLOTS = 4096;
const flagBuffer = new SharedArrayBuffer(4 * FLAG_SLOTS);
const freeFlags: number[] = Array.from({ length: FLAG_SLOTS }, (_, i) => i);

function takeFlag(): { flag: Int32Array; slot: number | null } {
  const slot = freeFlags.pop();
  if (slot === undefined) {
    return { flag: new Int32Array(new SharedArrayBuffer(4)), slot: null };
  }
  const flag = new Int32Array(flagBuffer, slot * 4, 1);
  Atomics.store(flag, 0, 0);
  return { flag, slot };
}

function freeFlag(slot: number | null): void {
  if (slot !== null) freeFlags.push(slot);
}

/** A SQLite driver whose worker starts on first use; `client` is for tests. */
export function openSqlite(
  config: SqliteConfig,
): Driver & { client: SqliteClient } {
  const idleMs = config.idleMs ?? 60_000;
  // The first worker takes every write and every read while it answers; a
  // read arriving while it is inside a long statement goes to the other.
  const clients = Array.from(
    { length: WORKERS },
    () => new SqliteClient(config.path, idleMs, config.privateColumns),
  );
  const client = clients[0]!;
  const forRead = () =>
    client.stuckFor < STUCK_MS
      ? client
      : clients.reduce((best, next) =>
        next.stuckFor < best.stuckFor ? next : best
      );
  let checked = false;

  const fail = (error: unknown) => {
    if (
      error instanceof WorkerError && error.code === "DBPORT_NO_TRANSACTION"
    ) {
      return noTransaction();
    }
    // The read handle's authorizer (a PRAGMA that sets, load_extension).
    if (error instanceof WorkerError && error.code === "SQLITE_AUTH") {
      return new DbError("read_only", redact(error.message, config.secrets));
    }
    return toDbError(error, config.secrets);
  };

  /** The file must exist before the first worker opens it. */
  const exists = async () => {
    if (checked) return;
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
    checked = true;
  };

  /** One call that runs SQL, stoppable by its flag. */
  const statement = async <T>(
    options: CallOptions,
    request: Call,
    onBatch?: Parameters<SqliteClient["call"]>[2],
    on: SqliteClient = request.type === "write" ? client : forRead(),
  ): Promise<T> => {
    throwIfAborted(options.signal);
    await exists();
    const { flag, slot } = takeFlag();
    const deadline = Date.now() + options.timeoutMs;
    let stopped = false;
    try {
      return await stoppable(
        () =>
          on.call<T>(
            { ...request, flag, deadline: deadline + 250 },
            deadline,
            onBatch,
          ),
        options,
        () => {
          stopped = true;
          Atomics.store(flag, 0, 1);
        },
      );
    } catch (error) {
      throw fail(error);
    } finally {
      // A stopped call's worker may still hold its flag: never handed out again.
      if (!stopped) freeFlag(slot);
    }
  };

  const limits = (options: QueryOptions): Limits => ({
    maxRows: options.maxRows,
    maxBytes: options.maxBytes,
    maxCellChars: options.maxCellChars,
  });

  /**
   * A write: a handle of its own with `query_only` off, `BEGIN IMMEDIATE`,
   * the statement (VACUUM and a few pragmas refuse a transaction and run on
   * their own), COMMIT. The worker answers before COMMIT, so the preview's
   * `beforeCommit` can still hold it back; COMMIT itself is never stopped.
   */
  /**
   * One write at a time: the worker holds a write's transaction open until
   * `finish`, and a second write's busy wait there would keep `finish`
   * from ever being read.
   */
  let writing: Promise<unknown> = Promise.resolve();
  const write = (text: string, options: QueryOptions) => {
    const turn = writing.then(() => writeNow(text, options));
    writing = turn.catch(() => {});
    return turn;
  };

  const writeNow = async (
    text: string,
    options: QueryOptions,
  ): Promise<QueryResult> => {
    const id = client.nextId();
    const answer = await statement<WriteAnswer>(options, {
      type: "write",
      id,
      sql: text,
      ...(options.params?.length ? { params: options.params } : {}),
      limits: limits(options),
      needsTransaction: options.beforeCommit !== undefined ||
        options.track !== undefined,
      ...(options.track === undefined ? {} : { track: options.track }),
    });
    const finish = (commit: boolean) =>
      client.call<null>(
        { type: "finish", id, commit },
        Date.now() + COMMIT_MS,
      ).catch((error) => {
        throw fail(error);
      });
    const done = answer.result;
    try {
      throwIfAborted(options.signal, ROLLED_BACK);
      if (answer.inTransaction) options.beforeCommit?.(done);
      options.onCommit?.();
    } catch (error) {
      if (answer.inTransaction) await finish(false).catch(() => {});
      throw error;
    }
    if (answer.inTransaction) await finish(true);
    return done;
  };

  const exec =
    (options: CallOptions) => (text: string, params: unknown[] = []) =>
      statement<Row[]>(options, {
        type: "rows",
        sql: text,
        params,
      });

  /**
   * SQLite's own parser on a statement that is not a read: preparing it
   * compiles without running, so a syntax error or a missing table is found
   * before anyone is asked to approve it.
   */
  const check = async (
    text: string,
    tier: string,
    options: CallOptions,
  ): Promise<EngineCheck> => {
    if (tier === "read") return NO_OPINION;
    try {
      await statement(options, {
        type: "prepare",
        sql: text,
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
    client,
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
      options.mode === "write" ? write(text, options) : statement(options, {
        type: "query",
        sql: text,
        ...(options.params?.length ? { params: options.params } : {}),
        limits: limits(options),
        maxBytes: options.maxBytes,
      }),
    async streamRead(
      text: string,
      options: QueryOptions,
      onBatch: (columns: string[], rows: Cell[][]) => Promise<void>,
    ): Promise<{ rows: number }> {
      return await statement<{ rows: number }>(
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
    },
    close: async () => {
      await Promise.all(clients.map((each) => each.dispose()));
    },
  };
}
