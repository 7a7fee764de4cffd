/**
 * A SQLite worker's connections (`sqlite_worker.ts`): opening one (read
 * handles `query_only`, attaching nothing, with the read guard's
 * authorizer), noting it where the main thread can find it after a kill,
 * closing it, reaping what a terminated worker left open, and running a
 * statement under its call's stop flag and deadline. Worker side only.
 *
 * @module
 */

import { Budget } from "../budget.ts";
import { cellMapper } from "./sqlite_cells.ts";
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
import { type Limits, REGISTRY_SLOTS, type Watch } from "./sqlite_protocol.ts";
import {
  authorizer,
  readOnly,
  refuseTableValued,
} from "./sqlite_read_guard.ts";
import type { Cell, QueryResult } from "../types.ts";

/** A value may be this long whatever the answer budget (a stored value is cut, not refused). */
const MIN_VALUE_LIMIT = 16 * 1024 * 1024;

/** The file this worker serves (init). */
export const file: {
  path: string;
  idleMs: number;
  /**
   * Every connection this worker holds, in memory the main thread can read
   * after terminating it: the next worker closes what it left open, which
   * would otherwise keep the file's locks for the life of the process.
   */
  registry: BigInt64Array<ArrayBufferLike>;
} = { path: "", idleMs: 60_000, registry: new BigInt64Array(REGISTRY_SLOTS) };

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

/** Open a connection to the file: a read handle, or a write's own. */
export function open(read: boolean): Deno.PointerValue {
  const db = openConnection(file.path, OPEN_READWRITE);
  const slot = file.registry.indexOf(0n);
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
  Atomics.store(file.registry, slot, BigInt(Deno.UnsafePointer.value(db)));
  return db;
}

/** Close a connection and forget it. */
export function close(db: Deno.PointerValue): void {
  lengthLimits.delete(BigInt(Deno.UnsafePointer.value(db)));
  const slot = file.registry.indexOf(BigInt(Deno.UnsafePointer.value(db)));
  if (slot >= 0) Atomics.store(file.registry, slot, 0n);
  sqlite3().sqlite3_close_v2(db);
}

/**
 * Connections a terminated worker left open: interrupt what they run, give
 * the dead thread a moment to leave SQLite, then finalize their statements,
 * roll back their transaction and close them.
 */
export function reap(orphans: bigint[]): void {
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

/** Run `text`, ignoring a failure (the connection is closed next). */
export function execQuiet(db: Deno.PointerValue, text: string): void {
  try {
    execAll(db, text);
  } catch { /* the connection is closed next */ }
}

/** Run `work` with the call's flag and deadline watched, the busy wait bounded by it. */
export function watched<T>(
  db: Deno.PointerValue,
  call: Watch,
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
export async function watchedAsync<T>(
  db: Deno.PointerValue,
  call: Watch,
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
function start(db: Deno.PointerValue, call: Watch): void {
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

/**
 * Prepare `text` with `params` bound, hand it to `work`, finalize it; on a
 * read handle (`read`) the read guard's checks come first.
 */
export function run<T>(
  db: Deno.PointerValue,
  text: string,
  params: readonly unknown[],
  read: boolean,
  work: (prepared: Prepared) => T,
): T {
  if (read) refuseTableValued(text);
  const prepared = prepare(db, text, params);
  if (read) readOnly(prepared);
  try {
    return work(prepared);
  } finally {
    finalize(prepared.handle);
  }
}

const EMPTY: QueryResult = {
  columns: [],
  rows: [],
  rowsAffected: 0,
  truncated: false,
  truncation: { rows: false, bytes: false, cells: 0 },
};

/** Step a statement, keeping the rows the budget lets through. */
export function readRows(
  db: Deno.PointerValue,
  prepared: Prepared,
  limits: Limits,
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
