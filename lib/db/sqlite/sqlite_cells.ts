/**
 * What SQLite's values become (the JSON mapping of values.ts by a column's
 * declared type) and what its failures become (a redacted DbError), shared by
 * the local SQLite worker and the remote libSQL driver.
 *
 * @module
 */

import type { DbError } from "../errors.ts";
import {
  type ErrorReading,
  messageWithCode,
  toDbError as readDbError,
} from "../to_db_error.ts";
import type { Cell } from "../types.ts";
import {
  binaryCell,
  floatCell,
  integerCell,
  isoDateTime,
  jsonCell,
  plainCell,
} from "../values.ts";

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
  return readDbError(error, secrets, SQLITE_ERRORS);
}

/** SQLite's and libSQL's failures: by their codes and, remote, their words. */
const SQLITE_ERRORS: ErrorReading = {
  text: messageWithCode,
  sort({ code, message }) {
    if (code.startsWith("SQLITE_READONLY")) return "read_only";
    // A remote libSQL server that cannot be reached (@libsql/client's fetch or
    // WebSocket failing) is a connection problem, as on the other engines.
    if (
      /^HRANA_(WEBSOCKET|HTTP)|^SERVER_ERROR$|^ECONN|^ENOTFOUND$/.test(code) ||
      /^Fetch failed|fetch failed|error sending request|ECONNREFUSED/i.test(
        message,
      )
    ) {
      return "connect";
    }
    // Extended codes (SQLITE_CANTOPEN_ISDIR) belong to their primary code.
    if (
      [...CONNECT_CODES].some((c) => code === c || code.startsWith(`${c}_`))
    ) {
      return "connect";
    }
    return "query";
  },
};
