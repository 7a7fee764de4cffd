/**
 * The thread that owns one SQLite file's connections (`sqlite_client.ts`
 * starts it): every open, prepare, step, busy wait and close happens here,
 * never on the event loop. Each call carries a flag in shared memory that
 * the main thread sets to stop it; a progress handler checks it (and the
 * call's deadline) every few hundred virtual-machine steps, so a statement
 * stops without anyone waiting on its lock. Read handles are `query_only`,
 * run only statements SQLite calls read-only, attach nothing, and cap a
 * value's length (`SQLITE_LIMIT_LENGTH`) so that a huge value fails inside
 * SQLite before it exists in dbport's memory.
 *
 * @module
 */

/// <reference lib="deno.worker" />

import { Budget } from "./budget.ts";
import {
  privateMatch,
  type PrivatePattern,
  privatePatterns,
} from "./private_columns.ts";
import { dmlShape } from "./dml_shape.ts";
import { cellMapper } from "./sqlite_cells.ts";
import { SQLITE_TRACK, sqliteCounts } from "./sqlite_changes.ts";
import { tokenize } from "./lexer.ts";
import { trackedWrite } from "./tracked_write.ts";
import {
  DBCONFIG_DEFENSIVE,
  DBCONFIG_ENABLE_LOAD_EXTENSION,
  execAll,
  finalize,
  LIMIT_ATTACHED,
  LIMIT_LENGTH,
  OPEN_READWRITE,
  openConnection,
  prepare,
  type Prepared,
  rowValues,
  sqlite3,
  SqliteError,
  step,
} from "./sqlite_ffi.ts";
import {
  type Limits,
  REGISTRY_SLOTS,
  type Request,
  type Response,
} from "./sqlite_protocol.ts";
import type { Cell, QueryResult } from "./types.ts";

/** Read handles kept open between calls (bench W4: eight at eight clients). */
const MAX_IDLE = 8;
/** A value may be this long whatever the answer budget (a stored value is cut, not refused). */
const MIN_VALUE_LIMIT = 16 * 1024 * 1024;
/** How long rows are read before other messages get a turn. */
const SLICE_MS = 20;

let path = "";
let idleMs = 60_000;
/**
 * Every connection this worker holds, in memory the main thread can read
 * after terminating it: the next worker closes what it left open, which would
 * otherwise keep the file's locks for the life of the process.
 */
let registry: BigInt64Array<ArrayBufferLike> = new BigInt64Array(
  REGISTRY_SLOTS,
);
const idle: { db: Deno.PointerValue; since: number }[] = [];
const writes = new Map<number, Deno.PointerValue>();
const waiting = new Map<number, (stop: boolean) => void>();

/** SQLITE_LIMIT_LENGTH as last set, per read handle. */
const lengthLimits = new Map<bigint, number>();

/** The call being stepped: its stop flag and deadline. */
let current: { flag: Int32Array; deadline: number } | null = null;
const progress = new Deno.UnsafeCallback(
  { parameters: ["pointer"], result: "i32" } as const,
  () =>
    current !== null &&
      (Atomics.load(current.flag, 0) !== 0 || Date.now() > current.deadline)
      ? 1
      : 0,
);

/**
 * PRAGMAs that take an argument and only read (what the schema queries and
 * a careful reader use); any other PRAGMA with a value sets something on the
 * pooled handle (query_only, cache_size, ...) and is denied on a read handle.
 */
const READING_PRAGMAS = new Set([
  "table_info",
  "table_xinfo",
  "table_list",
  "index_list",
  "index_info",
  "index_xinfo",
  "foreign_key_list",
  "foreign_key_check",
  "integrity_check",
  "quick_check",
]);
const SQLITE_PRAGMA = 19;
const SQLITE_READ = 20;
/** The connection's private columns (init): read handles are denied them. */
let secret: PrivatePattern[] = [];
/**
 * Virtual tables (full-text: FTS3/4/5) holding a private column, lower-cased.
 * Their hidden column named after the table (what `MATCH`, `snippet()`,
 * `highlight()`, `bm25()` read) and `rank` hand the indexed text on without
 * SQLite asking about the private column: those reads are denied too.
 */
let indexed = new Map<string, string>();
const VIRTUAL_COLUMNS = `SELECT m.name, p.name FROM sqlite_schema m
  JOIN pragma_table_xinfo(m.name) p
 WHERE m.type = 'table' AND m.sql LIKE 'create virtual table%'`;
const text = (pointer: Deno.PointerValue) =>
  pointer === null ? "" : Deno.UnsafePointerView.getCString(pointer);
// Called by SQLite on this thread, inside sqlite3_prepare_v2 (a synchronous
// FFI call of this worker): no other thread, nothing awaited.
const authorizer = new Deno.UnsafeCallback(
  {
    parameters: ["pointer", "i32", "pointer", "pointer", "pointer", "pointer"],
    result: "i32",
  } as const,
  (_user, action, first, second, database) => {
    if (action === SQLITE_READ) {
      if (secret.length === 0) return 0;
      // A view's or a trigger's read of a column is asked about too, with
      // the column's own table: no view can pass a private column on.
      // sqlite_stat4 (and 3) hold sampled index keys, values included (the
      // planner's own reads of them bypass the authorizer); sqlite_dbpage,
      // where built in, is the file's raw pages.
      const table = text(first);
      const column = text(second).toLowerCase();
      const lower = table.toLowerCase();
      return /^sqlite_(stat[34]|dbpage)$/i.test(table) ||
          (indexed.has(lower) && (column === lower || column === "rank")) ||
          privateMatch(
              secret,
              text(database),
              table,
              text(second),
              "sqlite",
            ) !== null
        ? 1
        : 0;
    }
    if (action !== SQLITE_PRAGMA || second === null) return 0;
    const name = first === null
      ? ""
      : Deno.UnsafePointerView.getCString(first).toLowerCase();
    return READING_PRAGMAS.has(name) ? 0 : 1;
  },
);

/** The main thread's end (sqlite_spawner.ts hands it over); self until then. */
let channel: { postMessage(message: unknown): void } = self;

function post(message: Response): void {
  channel.postMessage(message);
}

function configure(db: Deno.PointerValue, read: boolean): void {
  const lib = sqlite3();
  lib.sqlite3_progress_handler(db, 200, progress.pointer, null);
  lib.sqlite3_db_config(db, DBCONFIG_ENABLE_LOAD_EXTENSION, 0, null);
  lib.sqlite3_db_config(db, DBCONFIG_DEFENSIVE, 1, null);
  if (read) {
    lib.sqlite3_limit(db, LIMIT_ATTACHED, 0);
    execAll(db, "PRAGMA query_only = ON");
    lib.sqlite3_set_authorizer(db, authorizer.pointer, null);
  }
}

function open(read: boolean): Deno.PointerValue {
  const db = openConnection(path, OPEN_READWRITE);
  const slot = registry.indexOf(0n);
  try {
    if (slot < 0) {
      throw new SqliteError(
        "too many SQLite connections on this file at once",
        "SQLITE_BUSY",
      );
    }
    configure(db, read);
  } catch (error) {
    sqlite3().sqlite3_close_v2(db);
    throw error;
  }
  Atomics.store(registry, slot, BigInt(Deno.UnsafePointer.value(db)));
  return db;
}

/** Close a connection and forget it. */
function close(db: Deno.PointerValue): void {
  lengthLimits.delete(BigInt(Deno.UnsafePointer.value(db)));
  const slot = registry.indexOf(BigInt(Deno.UnsafePointer.value(db)));
  if (slot >= 0) Atomics.store(registry, slot, 0n);
  sqlite3().sqlite3_close_v2(db);
}

/**
 * Connections a terminated worker left open: interrupt what they run, give
 * the dead thread a moment to leave SQLite, then finalize their statements,
 * roll back their transaction and close them.
 */
function reap(orphans: bigint[]): void {
  const lib = sqlite3();
  const handles = orphans.map((value) => Deno.UnsafePointer.create(value));
  if (handles.length === 0) return;
  for (const db of handles) lib.sqlite3_interrupt(db);
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 500);
  for (const db of handles) {
    let statement = lib.sqlite3_next_stmt(db, null);
    while (statement !== null) {
      lib.sqlite3_finalize(statement);
      statement = lib.sqlite3_next_stmt(db, null);
    }
    if (lib.sqlite3_get_autocommit(db) === 0) execQuiet(db, "ROLLBACK");
    lib.sqlite3_close_v2(db);
  }
}

function acquire(): Deno.PointerValue {
  const db = idle.pop()?.db ?? open(true);
  try {
    if (secret.length > 0) indexed = indexedPrivate(db);
  } catch (error) {
    release(db);
    throw error;
  }
  return db;
}

/**
 * A full-text table holding a private column, called as a table-valued
 * function (`notes('ada*')`): SQLite turns the argument into a MATCH on the
 * hidden column without asking the authorizer, so it is refused here, in
 * the authorizer's words (the read path names the column from them).
 */
function refuseTableValued(sql: string): void {
  if (indexed.size === 0) return;
  const tokens = tokenize(sql, "sqlite");
  tokens.forEach((token, i) => {
    const name = token.kind === "word"
      ? token.text.toLowerCase()
      : token.kind === "quoted"
      ? token.text.slice(1, -1).toLowerCase()
      : null;
    if (
      name !== null && indexed.has(name) && tokens[i + 1]?.text === "("
    ) {
      throw new SqliteError(
        `access to ${indexed.get(name)} is prohibited`,
        "SQLITE_AUTH",
      );
    }
  });
}

/** The virtual tables holding a private column (to one of them), read afresh before each read. */
function indexedPrivate(db: Deno.PointerValue): Map<string, string> {
  const found = new Map<string, string>();
  run(db, VIRTUAL_COLUMNS, [], false, (prepared) => {
    while (step(db, prepared.handle)) {
      const [table, column] = rowValues(prepared.handle, 2).map(String);
      if (privateMatch(secret, "main", table!, column!, "sqlite") !== null) {
        found.set(table!.toLowerCase(), `${table}.${column}`);
      }
    }
  });
  return found;
}

function release(db: Deno.PointerValue): void {
  if (idle.length < MAX_IDLE) idle.push({ db, since: Date.now() });
  else close(db);
}

setInterval(() => {
  const now = Date.now();
  for (let i = idle.length - 1; i >= 0; i--) {
    if (now - idle[i]!.since > idleMs) {
      close(idle.splice(i, 1)[0]!.db);
    }
  }
}, 10_000);

/** Run `work` with the call's flag and deadline watched, the busy wait bounded by it. */
function watched<T>(
  db: Deno.PointerValue,
  call: { flag: Int32Array; deadline: number; maxBytes?: number },
  work: () => T,
): T {
  start(db, call);
  try {
    return work();
  } finally {
    current = null;
  }
}

/**
 * {@linkcode watched} for work that awaits only promises its own synchronous
 * steps settled: they settle before the worker takes its next message, so
 * `current` is this call's throughout.
 */
async function watchedAsync<T>(
  db: Deno.PointerValue,
  call: { flag: Int32Array; deadline: number; maxBytes?: number },
  work: () => Promise<T>,
): Promise<T> {
  start(db, call);
  try {
    return await work();
  } finally {
    current = null;
  }
}

/** Set up `db` for a call: not started if stopped or late, the busy wait and the value limit bounded. */
function start(
  db: Deno.PointerValue,
  call: { flag: Int32Array; deadline: number; maxBytes?: number },
): void {
  if (Atomics.load(call.flag, 0) !== 0 || Date.now() > call.deadline) {
    // Stopped or late while it waited its turn: never started.
    throw new SqliteError("interrupted", "SQLITE_INTERRUPT");
  }
  const lib = sqlite3();
  lib.sqlite3_busy_timeout(db, Math.max(0, call.deadline - Date.now()));
  if (call.maxBytes !== undefined) {
    const limit = Math.max(
      MIN_VALUE_LIMIT,
      Math.min(call.maxBytes, 1_000_000_000),
    );
    const key = BigInt(Deno.UnsafePointer.value(db));
    if (lengthLimits.get(key) !== limit) {
      lib.sqlite3_limit(db, LIMIT_LENGTH, limit);
      lengthLimits.set(key, limit);
    }
  }
  current = call;
}

/** A read handle refuses what SQLite itself calls a write (a PRAGMA that sets, a temp table). */
function readOnly(db: Deno.PointerValue, prepared: Prepared): void {
  const lib = sqlite3();
  // EXPLAIN of a write plans it and runs nothing; SQLite calls it read-only
  // only when the statement explained is.
  if (
    lib.sqlite3_stmt_readonly(prepared.handle) === 0 &&
    lib.sqlite3_stmt_isexplain(prepared.handle) === 0
  ) {
    finalize(prepared.handle);
    throw new SqliteError(
      "attempt to write a readonly database (a read runs only statements SQLite calls read-only)",
      "SQLITE_READONLY",
    );
  }
  void db;
}

const EMPTY: QueryResult = {
  columns: [],
  rows: [],
  rowsAffected: 0,
  truncated: false,
  truncation: { rows: false, bytes: false, cells: 0 },
};

/** Step a statement, keeping the rows the budget lets through. */
function readRows(
  db: Deno.PointerValue,
  prepared: Prepared,
  limits: { maxRows: number; maxBytes: number; maxCellChars: number },
  drain: boolean,
): QueryResult {
  const { handle, columns } = prepared;
  if (columns.length === 0) {
    while (step(db, handle)) { /* no rows */ }
    return EMPTY;
  }
  const budget = new Budget(limits);
  const mappers = columns.map((column) => cellMapper(column.type));
  while (step(db, handle)) {
    if (budget.open) {
      const cells = rowValues(handle, columns.length);
      for (let i = 0; i < cells.length; i++) cells[i] = mappers[i]!(cells[i]);
      budget.add(cells as Cell[]);
    }
    if (!budget.open && !drain) break;
  }
  return {
    columns: columns.map((column) => column.name),
    columnTypes: columns.map((column) => column.type),
    rows: budget.rows,
    rowsAffected: 0,
    truncated: budget.truncation.rows || budget.truncation.bytes,
    truncation: budget.truncation,
  };
}

function run<T>(
  db: Deno.PointerValue,
  text: string,
  params: readonly unknown[],
  read: boolean,
  work: (prepared: Prepared) => T,
): T {
  if (read) refuseTableValued(text);
  const prepared = prepare(db, text, params);
  if (read) readOnly(db, prepared);
  try {
    return work(prepared);
  } finally {
    finalize(prepared.handle);
  }
}

function withRead<T>(work: (db: Deno.PointerValue) => T): T {
  const db = acquire();
  try {
    return work(db);
  } finally {
    release(db);
  }
}

function totalChanges(db: Deno.PointerValue): number {
  return sqlite3().sqlite3_total_changes(db);
}

/**
 * A write on a handle of its own: `BEGIN IMMEDIATE`, the statement (VACUUM
 * and a few pragmas refuse a transaction and run on their own), and the
 * result sent back while the transaction stays open; the main thread answers
 * `finish` with commit or rollback. A tracked write (a preview's dry run, a
 * write held to it) also counts what it changed and returns its keys, inside
 * the same transaction (tracked_write.ts).
 */
async function write(
  request: Extract<Request, { type: "write" }>,
): Promise<void> {
  const db = open(false);
  let keep = false;
  try {
    await watchedAsync(db, { ...request }, async () => {
      let inTransaction = false;
      let result: QueryResult;
      const before = totalChanges(db);
      const statement = (text: string, limits = request.limits) =>
        // The client's statement, or the tracked form built around it
        // (the same placeholders in the same places): its values bind.
        run(
          db,
          text,
          request.params ?? [],
          false,
          (prepared) => readRows(db, prepared, limits, true),
        );
      const once = request.track === undefined
        ? () => Promise.resolve(statement(request.sql))
        : () => tracked(db, request, before, statement);
      execAll(db, "BEGIN IMMEDIATE");
      inTransaction = true;
      try {
        result = await once();
      } catch (error) {
        if (!/within a transaction/i.test((error as Error).message)) {
          throw error;
        }
        execAll(db, "ROLLBACK");
        inTransaction = false;
        if (request.needsTransaction) {
          throw new SqliteError("no_transaction", "DBPORT_NO_TRANSACTION");
        }
        result = statement(request.sql);
      }
      result = { ...result, rowsAffected: totalChanges(db) - before };
      if (inTransaction) {
        writes.set(request.id, db);
        keep = true;
      }
      post({ id: request.id, ok: true, value: { result, inTransaction } });
    });
  } catch (error) {
    sqlite3().sqlite3_get_autocommit(db) || execQuiet(db, "ROLLBACK");
    post(failure(request.id, error));
  } finally {
    if (!keep) close(db);
  }
}

/** A tracked write's statement on the open transaction: counts and keys. */
function tracked(
  db: Deno.PointerValue,
  request: Extract<Request, { type: "write" }>,
  before: number,
  statement: (text: string, limits?: Limits) => QueryResult,
): Promise<QueryResult> {
  const shape = dmlShape(request.sql, "sqlite");
  return trackedWrite(request.sql, request.track!, request.limits.maxRows, {
    shape,
    ...SQLITE_TRACK,
    keyColumns: (target) =>
      Promise.resolve(
        run(
          db,
          "select name from pragma_table_info(?, ?) where pk > 0 order by pk",
          [target.name, target.schema ?? "main"],
          false,
          (prepared) => {
            const columns: string[] = [];
            while (step(db, prepared.handle)) {
              columns.push(String(rowValues(prepared.handle, 1)[0]));
            }
            return columns;
          },
        ),
      ),
    run: (text, maxRows, maxBytes) =>
      Promise.resolve(
        statement(text, { ...request.limits, maxRows, maxBytes }),
      ),
    counted: () =>
      Promise.resolve(
        sqliteCounts(
          shape.target,
          sqlite3().sqlite3_changes(db),
          totalChanges(db) - before,
        ),
      ),
  });
}

function execQuiet(db: Deno.PointerValue, text: string): void {
  try {
    execAll(db, text);
  } catch { /* the connection is closed next */ }
}

function finish(request: Extract<Request, { type: "finish" }>): void {
  const db = writes.get(request.id);
  writes.delete(request.id);
  if (db === undefined) {
    post({ id: request.id, ok: true, value: null });
    return;
  }
  try {
    // COMMIT is never stopped: it waits for readers within the busy timeout.
    sqlite3().sqlite3_busy_timeout(db, 5_000);
    execAll(db, request.commit ? "COMMIT" : "ROLLBACK");
    post({ id: request.id, ok: true, value: null });
  } catch (error) {
    execQuiet(db, "ROLLBACK");
    post(failure(request.id, error));
  } finally {
    close(db);
  }
}

/**
 * Stream every row of a read in batches; after each batch wait for the main
 * thread's `more` (backpressure), serving other calls meanwhile.
 */
async function stream(
  request: Extract<Request, { type: "stream" }>,
): Promise<void> {
  const db = acquire();
  let prepared: Prepared | null = null;
  let count = 0;
  try {
    prepared = watched(db, request, () => {
      refuseTableValued(request.sql);
      const p = prepare(db, request.sql);
      readOnly(db, p);
      return p;
    });
    const names = prepared.columns.map((column) => column.name);
    const mappers = prepared.columns.map((column) => cellMapper(column.type));
    let done = false;
    while (!done) {
      const batch: Cell[][] = [];
      let bytes = 0;
      const started = performance.now();
      done = watched(db, request, () => {
        while (
          batch.length < request.batchRows && bytes < request.batchBytes &&
          performance.now() - started < SLICE_MS * 5
        ) {
          if (!step(db, prepared!.handle)) return true;
          const cells = rowValues(prepared!.handle, names.length);
          for (let i = 0; i < cells.length; i++) {
            const value = cells[i];
            bytes += typeof value === "string"
              ? value.length
              : value instanceof Uint8Array
              ? value.length * 2
              : 8;
            cells[i] = mappers[i]!(value);
          }
          batch.push(cells as Cell[]);
        }
        return false;
      });
      if (batch.length === 0 && done) break;
      count += batch.length;
      post({
        id: request.id,
        ok: true,
        batch: { columns: names, rows: batch },
      });
      const stop = await new Promise<boolean>((resolve) =>
        waiting.set(request.id, resolve)
      );
      waiting.delete(request.id);
      if (stop) break;
    }
    post({ id: request.id, ok: true, value: { rows: count } });
  } catch (error) {
    post(failure(request.id, error));
  } finally {
    if (prepared !== null) finalize(prepared.handle);
    release(db);
  }
}

function failure(id: number, error: unknown): Response {
  const e = error as { message?: string; code?: string };
  return {
    id,
    ok: false,
    error: {
      message: String(e.message ?? error),
      code: typeof e.code === "string" ? e.code : "",
    },
  };
}

function handle(request: Request): void {
  try {
    switch (request.type) {
      case "init":
        path = request.path;
        idleMs = request.idleMs;
        secret = privatePatterns(request.privateColumns);
        registry = request.registry;
        reap(request.orphans);
        post({ id: request.id, ok: true, value: null });
        return;
      case "rows":
        post({
          id: request.id,
          ok: true,
          value: withRead((db) =>
            watched(
              db,
              request,
              () =>
                run(db, request.sql, request.params, true, (prepared) => {
                  const rows: Record<string, unknown>[] = [];
                  while (step(db, prepared.handle)) {
                    const values = rowValues(
                      prepared.handle,
                      prepared.columns.length,
                    );
                    const row: Record<string, unknown> = {};
                    prepared.columns.forEach((column, i) => {
                      row[column.name] = values[i];
                    });
                    rows.push(row);
                  }
                  return rows;
                }),
            )
          ),
        });
        return;
      case "prepare":
        post({
          id: request.id,
          ok: true,
          value: withRead((db) =>
            watched(db, request, () => {
              finalize(prepare(db, request.sql).handle);
              return null;
            })
          ),
        });
        return;
      case "query":
        post({
          id: request.id,
          ok: true,
          value: withRead((db) =>
            watched(
              db,
              request,
              () =>
                run(db, request.sql, request.params ?? [], true, (prepared) =>
                  readRows(db, prepared, request.limits, false)),
            )
          ),
        });
        return;
      case "write":
        write(request).catch((error) => post(failure(request.id, error)));
        return;
      case "finish":
        finish(request);
        return;
      case "stream":
        void stream(request);
        return;
      case "more":
        waiting.get(request.id)?.(request.stop);
        return;
      case "stall":
        // For tests only: a worker that stops answering.
        Atomics.wait(
          new Int32Array(new SharedArrayBuffer(4)),
          0,
          0,
          request.ms,
        );
        post({ id: request.id, ok: true, value: null });
        return;
      case "close":
        for (const handle of idle.splice(0)) close(handle.db);
        for (const db of writes.values()) {
          execQuiet(db, "ROLLBACK");
          close(db);
        }
        writes.clear();
        post({ id: request.id, ok: true, value: null });
        return;
    }
  } catch (error) {
    post(failure(request.id, error));
  }
}

// The spawner thread that started this worker sends the main thread's port
// first; every call comes through it.
self.onmessage = (
  event: MessageEvent<Request | { type: "port"; port: MessagePort }>,
) => {
  const message = event.data;
  if (message.type !== "port") return handle(message);
  channel = message.port;
  message.port.onmessage = (event: MessageEvent<Request>) => handle(event.data);
};
