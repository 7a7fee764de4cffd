/**
 * One MySQL/MariaDB statement's answer, streamed: its rows counted as they
 * arrive and cut at the row cap or the byte budget, each value mapped to
 * JSON by its column's wire type (values.ts), and what it changed counted.
 *
 * @module
 */

import mysql from "mysql2";
import { Budget } from "../budget.ts";
import { DbError } from "../errors.ts";
import { rowGuardOf, rowLimit } from "./mysql_row_guard.ts";
import type { Cell, QueryOptions, QueryResult } from "../types.ts";
import { isoDateTime, jsonCell, plainCell } from "../values.ts";

/** What a query's `fields` event tells about one column. */
export interface Field {
  name: string;
  columnType: number;
  columnLength: number;
  /** MariaDB's extended metadata: "json" for a JSON column. */
  extendedFormat?: string;
}

/** mysql2's protocol type codes by number (`3: "LONG"`). */
const MYSQL_TYPES = (mysql as unknown as { Types: Record<number, unknown> })
  .Types;

/** A column's type by its protocol code (mysql2's `Types`). */
function mysqlTypeName(field: Field): string | null {
  if (field.extendedFormat === "json") return "json";
  const name = MYSQL_TYPES[field.columnType];
  return typeof name === "string" ? name.toLowerCase() : null;
}

/**
 * An INSERT, DELETE or REPLACE, whose returned rows (RETURNING) are the rows
 * it changed (a REPLACE: the rows it wrote).
 */
// After the signature's comment, if any (signature.ts: it holds no "*").
const RETURNS_CHANGED =
  /^(?:\s*\/\*[^*]*\*\/)?[\s(]*(insert|delete|replace)\b/i;

/**
 * Stream one statement's rows, keeping at most `maxRows + 1`. Once past the
 * cap the rest is not wanted: `cut` kills the query, and the interruption
 * that follows ends the stream as a truncated result, not an error. A write
 * (`cut` null) is never cut: its RETURNING rows past the cap are dropped.
 */
export function streamRows(
  connection: mysql.Connection,
  text: string,
  options: QueryOptions,
  cut: (() => Promise<void>) | null,
): Promise<QueryResult> {
  return new Promise((answer, fail) => {
    const { resolve, reject } = settledOnLoss(connection, answer, fail);
    const rows = new StreamedRows(options);
    let cutting = false;
    const { query, unprepare } = sendStatement(connection, text, options);
    // A row larger than a read can hold is never read whole: the guard
    // stops handing bytes to mysql2 at its header (mysql_row_guard.ts).
    const guard = cut === null ? undefined : rowGuardOf(connection);
    guard?.limit(rowLimit(options.maxBytes), (bytes) => {
      cutting = true;
      cut!().catch(() => {});
      if (rows.budget.rows.length === 0) {
        reject(tooLarge(rows.budget.rows.length + 1, bytes));
      } else {
        rows.budget.truncation.bytes = true;
        finish();
      }
    });
    query.on("fields", (list: Field[] | undefined) => rows.setFields(list));
    query.on("result", (row: unknown) => {
      if (!rows.add(row) && !cutting && cut !== null) {
        // Past the budget the rest is not wanted: answer now, read no more
        // of it, and stop it on the server (`cut` marks the session to be
        // destroyed, never pooled again).
        cutting = true;
        connection.pause();
        cut().catch(() => {});
        finish();
      }
    });
    const finish = () => {
      guard?.clear();
      unprepare();
      resolve(rows.result(text));
    };
    query.on("error", (error: { errno?: number }) => {
      guard?.clear();
      unprepare();
      // 1317: query execution was interrupted, by our own cut.
      if (cutting && error.errno === 1317) finish();
      else reject(error);
    });
    query.on("end", finish);
  });
}

/**
 * `answer` and `fail`, settling a read that also fails when its connection
 * is lost. A fatal error of the connection (the server closed it: KILL, a
 * restart, the network) goes to the connection, not to a streamed query,
 * which would never settle: the read waited for its timeout and the stop's
 * grace (outsider stop48). Watched while the read lasts.
 */
function settledOnLoss(
  connection: mysql.Connection,
  answer: (result: QueryResult) => void,
  fail: (error: unknown) => void,
): {
  resolve: (result: QueryResult) => void;
  reject: (error: unknown) => void;
} {
  const lost = (error?: unknown) =>
    reject(error instanceof Error ? error : connectionLost());
  const ended = () => lost();
  connection.on("error", lost);
  connection.on("end", ended);
  const unwatch = () => {
    connection.off("error", lost);
    connection.off("end", ended);
  };
  const resolve = (result: QueryResult) => {
    unwatch();
    answer(result);
  };
  const reject = (error: unknown) => {
    unwatch();
    fail(error);
  };
  return { resolve, reject };
}

/**
 * The statement sent, its rows as arrays, and how to unprepare it once
 * read. Bound values go by MariaDB's prepared statements
 * (COM_STMT_EXECUTE, the binary protocol), never into the text; the
 * statement is closed once read (unbound), so mysql2's cache never
 * outlives a RESET.
 */
function sendStatement(
  connection: mysql.Connection,
  text: string,
  options: QueryOptions,
): { query: mysql.Query; unprepare: () => void } {
  const bound = options.params !== undefined && options.params.length > 0;
  const query = bound
    ? connection.execute({
      sql: text,
      values: options.params as unknown[],
      rowsAsArray: true,
    })
    : connection.query({ sql: text, rowsAsArray: true });
  const unprepare = () => {
    if (bound) {
      try {
        // mysql2 caches a statement by its text and its row shape: the
        // text alone finds nothing, and the statement stayed prepared on
        // a session a plain read gives back without RESET CONNECTION.
        (connection as unknown as { unprepare(key: object): unknown })
          .unprepare({ sql: text, rowsAsArray: true });
      } catch { /* the session is destroyed or recycled anyway */ }
    }
  };
  return { query, unprepare };
}

/** What a statement's stream answered so far: columns, rows, changes. */
class StreamedRows {
  readonly budget: Budget;
  #fields: Field[] = [];
  #mappers: ((value: unknown) => Cell)[] = [];
  #rowsAffected = 0;
  // A MariaDB INSERT/DELETE … RETURNING answers rows and no OK packet:
  // each returned row is one it changed.
  #returned = 0;

  constructor(options: QueryOptions) {
    this.budget = new Budget(options);
  }

  /** A statement without a result set reports undefined fields. */
  setFields(list: Field[] | undefined): void {
    this.#fields = list ?? [];
    this.#mappers = this.#fields.map(cellMapper);
  }

  /**
   * One `result` event: a row (kept while the budget is open) or an OK
   * packet (its changed rows counted). False once the budget was passed.
   */
  add(row: unknown): boolean {
    if (!Array.isArray(row)) {
      this.#rowsAffected += Number(
        (row as { affectedRows?: number }).affectedRows ?? 0,
      );
      return true;
    }
    this.#returned++;
    if (!this.budget.open) return true;
    const mappers = this.#mappers;
    for (let i = 0; i < row.length; i++) row[i] = mappers[i]!(row[i]);
    return this.budget.add(row as Cell[]);
  }

  /** The answer to `text`, as it stands. */
  result(text: string): QueryResult {
    const { budget } = this;
    return {
      columns: this.#fields.map((field) => field.name),
      columnTypes: this.#fields.map((field) => mysqlTypeName(field)),
      rows: budget.rows,
      rowsAffected: this.#rowsAffected === 0 && RETURNS_CHANGED.test(text)
        ? this.#returned
        : this.#rowsAffected,
      truncated: budget.truncation.rows || budget.truncation.bytes,
      truncation: budget.truncation,
    };
  }
}

/** A read whose connection closed under it with no error said. */
function connectionLost(): Error {
  return Object.assign(
    new Error("Connection lost: The server closed the connection."),
    { code: "PROTOCOL_CONNECTION_LOST", fatal: true },
  );
}

/** A row past the guard's limit, before any row was kept. */
function tooLarge(row: number, bytes: number): DbError {
  return new DbError(
    "query",
    `row ${row} of the result is larger than ${
      Math.floor(bytes / 1024 / 1024)
    } MiB on the wire, more than an answer can hold: dbport stopped reading it and stopped the query. Select shorter values (e.g. LEFT(column, 1000) or LENGTH(column))`,
  );
}

const JSON_TYPE = 245;
const TINY = 1;
const LONGLONG = 8;
const NEWDECIMAL = 246;
const TIMESTAMP = 7;
const DATETIME = 12;
const BIT = 16;

/** The JSON mapping for one column (values.ts), by its wire type. */
export function cellMapper(field: Field): (value: unknown) => Cell {
  // MySQL's JSON type, and MariaDB's JSON (text marked format=json).
  if (field.columnType === JSON_TYPE || field.extendedFormat === "json") {
    return (value) => value === null ? null : jsonCell(value);
  }
  if (field.columnType === TINY && field.columnLength === 1) {
    // BOOLEAN is TINYINT(1).
    return (value) => value === null ? null : Number(value) !== 0;
  }
  if (field.columnType === LONGLONG || field.columnType === NEWDECIMAL) {
    // 64-bit integers and decimals are text, whatever their size.
    return (value) => value === null ? null : String(value);
  }
  if (field.columnType === DATETIME) {
    return (value) => value === null ? null : isoDateTime(String(value), false);
  }
  if (field.columnType === TIMESTAMP) {
    return (value) => value === null ? null : isoDateTime(String(value), true);
  }
  if (field.columnType === BIT) {
    return (value) => {
      if (!(value instanceof Uint8Array)) return plainCell(value);
      let number = 0n;
      for (const byte of value) number = (number << 8n) | BigInt(byte);
      return field.columnLength === 1 ? number === 1n : plainCell(number);
    };
  }
  return plainCell;
}
