/**
 * Rows queued in memory and written to `state.db` together: one transaction
 * shortly after the first queued row (or at once past a batch size), so
 * recording never holds up a request. Used by the activity log and the query
 * history.
 *
 * A batch is written as multi-row INSERTs of up to {@linkcode ROWS_PER_INSERT}
 * rows: SQLite prepares one statement per INSERT, and one per row was a tenth
 * of the server's CPU under load (bench W1 profile).
 *
 * @module
 */

import { messageOf } from "../base/message_of.ts";
import type { InValue } from "./state_client.ts";
import type { StateDb } from "./state_db.ts";

/** Rows per INSERT: 100 rows of <= 20 columns stay far below SQLite's 32,766 variables. */
export const ROWS_PER_INSERT = 100;

/** How a batch writer writes. */
export interface BatchOptions<T> {
  /** The table rows go to. */
  table: string;
  /** Its columns, in the order of {@linkcode BatchOptions.args}. */
  columns: readonly string[];
  /** The INSERT's arguments for one entry. */
  args(entry: T): InValue[];
  /** What the rows are, for the error message: "activity entries". */
  what: string;
  /** Told when a batch could not be written (it is dropped). */
  onError(message: string): void;
  /** Queued rows are written this long after the first (default 100 ms). */
  delayMs?: number;
  /** A batch this big is written at once (default 500). */
  flushAt?: number;
  /** Past this many unwritten rows (a stuck disk) the oldest are dropped. */
  maxQueue?: number;
}

/** A queue of rows written in batches. */
export class BatchWriter<T> {
  readonly #db: StateDb;
  readonly #options: BatchOptions<T>;
  #queue: T[] = [];
  /** INSERT texts by row count, built once each. */
  readonly #inserts = new Map<number, string>();
  #timer: ReturnType<typeof setTimeout> | undefined;
  #writing: Promise<void> = Promise.resolve();

  constructor(db: StateDb, options: BatchOptions<T>) {
    this.#db = db;
    this.#options = options;
  }

  /** Queue an entry. */
  push(entry: T): void {
    const { delayMs = 100, flushAt = 500, maxQueue = 20_000 } = this.#options;
    this.#queue.push(entry);
    if (this.#queue.length > maxQueue) {
      this.#queue.splice(0, this.#queue.length - maxQueue);
    }
    if (this.#queue.length >= flushAt) void this.flush();
    else {
      this.#timer ??= setTimeout(() => {
        this.#timer = undefined;
        void this.flush();
      }, delayMs);
    }
  }

  /** Write every queued entry now; resolves when written (or given up). */
  flush(): Promise<void> {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    const batch = this.#queue;
    this.#queue = [];
    if (batch.length === 0) return this.#writing;
    const { args, what, onError } = this.#options;
    const statements: { sql: string; args: InValue[] }[] = [];
    for (let i = 0; i < batch.length; i += ROWS_PER_INSERT) {
      const rows = batch.slice(i, i + ROWS_PER_INSERT);
      statements.push({
        sql: this.#insert(rows.length),
        args: rows.flatMap((entry) => args(entry)),
      });
    }
    this.#writing = this.#writing.then(() =>
      this.#db.client.batch(statements, "log").then(
        () => {},
        (error) =>
          onError(
            `dbport: could not write ${batch.length} ${what}: ${
              messageOf(error)
            }`,
          ),
      )
    );
    return this.#writing;
  }

  /** `INSERT INTO table (columns) VALUES (?, ...), ...` for `rows` rows. */
  #insert(rows: number): string {
    let text = this.#inserts.get(rows);
    if (text === undefined) {
      const { table, columns } = this.#options;
      const row = `(${columns.map(() => "?").join(", ")})`;
      text = `INSERT INTO ${table} (${columns.join(", ")}) VALUES ${
        Array.from({ length: rows }, () => row).join(", ")
      }`;
      this.#inserts.set(rows, text);
    }
    return text;
  }
}
