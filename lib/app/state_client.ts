/**
 * The state database's client: SQLite as Deno builds it in (`node:sqlite`),
 * with the two calls the app's stores make - `execute` and a `batch` in one
 * write transaction. The engine is the one libSQL wraps, but `@libsql/client`
 * loaded its native library and its network stack into every process (about
 * 25 MiB resident) only for this file; an idle `serve` now loads none
 * (docs/performance.md "Memory").
 *
 * Calls are synchronous underneath, as libSQL's local client was: each is one
 * short indexed statement, and the server's writes are batched off the
 * request path (batch_writer.ts). SQLite's own busy wait would sleep on the
 * event loop while another process (a second dbport, a DB browser) holds the
 * file's write lock: the connection waits for no lock (`timeout: 0`), and a
 * call refused as busy is tried again after an asynchronous pause, until
 * `timeoutMs` has passed.
 *
 * @module
 */

import {
  DatabaseSync,
  type SQLInputValue,
  type StatementSync,
} from "node:sqlite";

/** A value a statement binds. */
export type InValue = string | number | bigint | boolean | null | Uint8Array;

/** A statement: its text, or its text and the values of its `?`s. */
export type InStatement = string | { sql: string; args?: readonly InValue[] };

/** One result row, by column name. */
export type Row = Record<string, unknown>;

/** What a statement answers. */
export interface ResultSet {
  rows: Row[];
}

/** Prepared statements kept per text; the stores' texts are few and fixed. */
const MAX_PREPARED = 256;

/** An open state database file. */
export class StateClient {
  readonly #db: DatabaseSync;
  // The token poll, activity and history writes repeat the same texts: each
  // is parsed once rather than at every call.
  readonly #prepared = new Map<string, StatementSync>();

  /** Open `path`; a writer waits up to `timeoutMs` for another process's lock. */
  constructor(path: string, readonly timeoutMs: number) {
    this.#db = new DatabaseSync(path, { timeout: 0 });
  }

  /** Run one statement; rows for a query, none for anything else. */
  execute(statement: InStatement): Promise<ResultSet> {
    return this.#whenFree(() => ({ rows: this.#run(statement) }));
  }

  /** `work`, tried again after a pause while another connection holds the lock. */
  async #whenFree<T>(work: () => T): Promise<T> {
    const started = Date.now();
    for (let pause = 5;; pause = Math.min(pause * 2, 100)) {
      try {
        return work();
      } catch (error) {
        if (!busy(error) || Date.now() - started >= this.timeoutMs) throw error;
      }
      await new Promise((resolve) => setTimeout(resolve, pause));
    }
  }

  /**
   * Run statements in one transaction (`BEGIN IMMEDIATE`: the write lock is
   * taken first, so two writers wait rather than fail half-way); all or none.
   *
   * A `"write"` is on disk when it resolves (the WAL is synced at COMMIT).
   * A `"log"` batch (the activity log, the query history, written every
   * 100 ms under load) is not synced at its COMMIT: it survives the process
   * crashing, and the database stays whole if the machine loses power, but
   * the last such batches before a power loss may be lost with it. A sync
   * held the event loop for 1-5 ms a batch (bench W1 profile).
   */
  async batch(
    statements: readonly InStatement[],
    mode: "write" | "log",
  ): Promise<void> {
    // BEGIN to COMMIT in one synchronous step: an await between them let a
    // second batch of this connection BEGIN inside the first ("cannot start
    // a transaction within a transaction": two tokens made at once).
    await this.#whenFree(() => {
      // Safety is set outside a transaction only.
      if (mode === "log") this.#db.exec("PRAGMA synchronous = NORMAL");
      try {
        this.#transaction(statements);
      } finally {
        if (mode === "log") this.#db.exec("PRAGMA synchronous = FULL");
      }
    });
  }

  #transaction(statements: readonly InStatement[]): void {
    this.#db.exec("BEGIN IMMEDIATE");
    try {
      for (const statement of statements) this.#run(statement);
      this.#db.exec("COMMIT");
    } catch (error) {
      if (this.#db.isTransaction) this.#db.exec("ROLLBACK");
      throw error;
    }
  }

  close(): void {
    if (this.#db.isOpen) this.#db.close();
  }

  #prepare(sql: string): StatementSync {
    let prepared = this.#prepared.get(sql);
    if (prepared === undefined) {
      if (this.#prepared.size >= MAX_PREPARED) this.#prepared.clear();
      prepared = this.#db.prepare(sql);
      this.#prepared.set(sql, prepared);
    }
    return prepared;
  }

  #run(statement: InStatement): Row[] {
    const { sql, args = [] } = typeof statement === "string"
      ? { sql: statement }
      : statement;
    const prepared = this.#prepare(sql);
    // node:sqlite binds no booleans (libSQL bound them as 1 and 0).
    const values: SQLInputValue[] = args.map((value) =>
      typeof value === "boolean" ? (value ? 1 : 0) : value
    );
    if (prepared.columns().length === 0) {
      prepared.run(...values);
      return [];
    }
    return prepared.all(...values) as Row[];
  }
}

/**
 * SQLITE_BUSY or SQLITE_LOCKED: another connection holds the lock. Deno's
 * node:sqlite gives these no code of their own (`ERR_SQLITE_ERROR`), only
 * SQLite's message for them.
 */
function busy(error: unknown): boolean {
  return /^database (table )?is locked/.test(
    String((error as { message?: unknown }).message),
  );
}
