/**
 * postgres.js's failures read as dbport's errors: by SQLSTATE, with the
 * server's DETAIL and HINT, redacted of the connection's secrets.
 *
 * @module
 */

import { DbError } from "../errors.ts";
import { type ErrorReading, toDbError as readDbError } from "../to_db_error.ts";
import { CONNECT_TIMEOUT_SECONDS } from "./pg_options.ts";

/** A postgres.js failure as a redacted DbError. */
export function toDbError(error: unknown, secrets: readonly string[]): DbError {
  return readDbError(error, secrets, POSTGRES_ERRORS);
}

/** postgres.js's failures: by SQLSTATE, with DETAIL and HINT shown. */
const POSTGRES_ERRORS: ErrorReading = {
  text({ message, detail, hint, code }) {
    let text = message;
    if (detail) text += ` (${detail})`;
    if (hint) text += ` Hint: ${hint}`;
    if (/^[0-9A-Z]{5}$/.test(code)) text += ` [SQLSTATE ${code}]`;
    return text;
  },
  sort({ code, message }, text) {
    if (code === "CONNECT_TIMEOUT") {
      return new DbError(
        "connect_timeout",
        `the database did not answer within ${CONNECT_TIMEOUT_SECONDS} s`,
      );
    }
    if (
      /before secure TLS connection was established|\(TLS refused\)$/.test(
        message,
      )
    ) {
      // TLS asked for (pg_tls.ts, or postgres.js's own) and refused: never
      // a fall back to plain text.
      return new DbError(
        "connect",
        `the server does not support SSL/TLS, which the URL's sslmode requires (dbport never falls back to plain text): ${text}`,
      );
    }
    if (code === "25006") return "read_only";
    if (code === "57014") return "timeout";
    if (
      /^(08|28|3D|53|57P)/.test(code) ||
      /^(E[A-Z]+|CONNECTION_[A-Z]+)$/.test(code)
    ) {
      return "connect";
    }
    return "query";
  },
};
