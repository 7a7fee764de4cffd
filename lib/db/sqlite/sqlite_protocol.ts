/**
 * The messages between the main thread and a SQLite worker
 * (`sqlite_client.ts` ↔ `sqlite_worker.ts`). Every call that runs SQL
 * carries `flag` (shared memory the main thread sets to stop it) and
 * `deadline` (epoch ms, the worker's own backstop).
 *
 * @module
 */

import type { Limits } from "../budget.ts";
import type { Cell, EveryRow, QueryResult } from "../types.ts";

/** How many connections one worker may hold at once. */
export const REGISTRY_SLOTS = 256;

/** The answer budget a read keeps to (budget.ts). */
export type { Limits };

/** What every statement call carries. */
export interface Watch {
  id: number;
  flag: Int32Array;
  deadline: number;
  /** The longest value SQLite may build (SQLITE_LIMIT_LENGTH), from the budget. */
  maxBytes?: number;
}

/** Main thread → worker. */
export type Request =
  | {
    type: "init";
    id: number;
    path: string;
    idleMs: number;
    /** Where the worker notes each connection it holds (REGISTRY_SLOTS). */
    registry: BigInt64Array;
    /** Connections a terminated worker left open: stopped and closed first. */
    orphans: bigint[];
    /** Columns read handles may not read (db/private_columns.ts entries). */
    privateColumns?: readonly string[];
  }
  | Watch & { type: "rows"; sql: string; params: readonly unknown[] }
  | Watch & { type: "prepare"; sql: string }
  | Watch & {
    type: "query";
    sql: string;
    limits: Limits;
    /** Values bound to the statement's placeholders (sqlite3_bind_*). */
    params?: readonly unknown[];
  }
  | Watch & {
    type: "write";
    sql: string;
    /** Values bound to the statement's placeholders (sqlite3_bind_*). */
    params?: readonly unknown[];
    limits: Limits;
    /** A statement that refuses a transaction is refused, not run alone. */
    needsTransaction: boolean;
    /** Count what it changes and bind its keys (QueryOptions.track). */
    track?: { sampleRows: number };
    /** Judge whether it changed every row of its table (every_row.ts). */
    everyRow?: true;
  }
  | { type: "finish"; id: number; commit: boolean }
  | Watch & {
    type: "stream";
    sql: string;
    batchRows: number;
    batchBytes: number;
  }
  | { type: "more"; id: number; stop: boolean }
  | { type: "stall"; id: number; ms: number }
  | { type: "close"; id: number };

/** Worker → main thread: a batch of a stream, an answer, or a failure. */
export type Response =
  | { id: number; ok: true; batch: { columns: string[]; rows: Cell[][] } }
  | { id: number; ok: true; value: unknown }
  | { id: number; ok: false; error: { message: string; code: string } };

/** A write's answer before its COMMIT. */
export interface WriteAnswer {
  result: QueryResult;
  inTransaction: boolean;
  /** The tables it changed every row of, when asked (`everyRow`). */
  everyRow?: EveryRow[];
}
