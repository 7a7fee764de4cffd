/**
 * mysql2's failures as redacted DbErrors: MySQL's reading of the one
 * {@linkcode readDbError} (lib/db/to_db_error.ts), by mysql2's codes and
 * MySQL's error numbers.
 *
 * @module
 */

import { DbError } from "../errors.ts";
import {
  type ErrorReading,
  messageWithCode,
  toDbError as readDbError,
} from "../to_db_error.ts";

/** How long a session may take to connect (mysql2's `connectTimeout`). */
export const CONNECT_TIMEOUT_MS = 10_000;

const CONNECT_CODES = new Set([
  "ECONNREFUSED",
  "ENOTFOUND",
  "EHOSTUNREACH",
  "ECONNRESET",
  "EPIPE",
  "PROTOCOL_CONNECTION_LOST",
  "ER_ACCESS_DENIED_ERROR",
  "ER_BAD_DB_ERROR",
  "ER_CON_COUNT_ERROR",
  "ER_DBACCESS_DENIED_ERROR",
  "ER_HOST_NOT_PRIVILEGED",
]);

/** A mysql2 failure as a redacted DbError. */
export function toDbError(error: unknown, secrets: readonly string[]): DbError {
  return readDbError(error, secrets, MYSQL_ERRORS);
}

/** mysql2's failures: by their codes and MySQL's error numbers. */
const MYSQL_ERRORS: ErrorReading = {
  text: messageWithCode,
  sort({ code, errno }, text) {
    if (code === "ETIMEDOUT") {
      return new DbError(
        "connect_timeout",
        `the database did not answer within ${CONNECT_TIMEOUT_MS / 1000} s`,
      );
    }
    if (code === "HANDSHAKE_NO_SSL_SUPPORT") {
      return new DbError(
        "connect",
        `the server does not support SSL/TLS, which the URL's ssl option requires (dbport never falls back to plain text): ${text}`,
      );
    }
    if (errno === 1792) return "read_only";
    if (errno === 3024 || errno === 1969) return "timeout";
    if (CONNECT_CODES.has(code)) return "connect";
    return "query";
  },
};
