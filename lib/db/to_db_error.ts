/**
 * One way from what a driver threw to the {@linkcode DbError} a tool sees:
 * a DbError passes as it is, a permission the process lacks is said as
 * such, and anything else is redacted and sorted by the engine's own
 * {@linkcode ErrorReading} (its codes; its words for a failure that needs
 * more than the driver's message).
 *
 * @module
 */

import { type Thrown, thrown } from "../base/thrown.ts";
import { DbError, type DbErrorKind, permissionProblem } from "./errors.ts";
import { redact } from "./redact.ts";

/** How one engine reads its driver's failures. */
export interface ErrorReading {
  /** The text shown, before redaction: the message and what the driver adds to it. */
  text(error: Thrown): string;
  /**
   * The kind of failure `error` is, or the whole DbError where the kind
   * needs its own words (a connect timeout, TLS refused); `text` is redacted.
   */
  sort(error: Thrown, text: string): DbErrorKind | DbError;
}

/**
 * What a driver threw, as a redacted DbError read the engine's way.
 *
 * @example An engine's reading, and its driver's failure through it
 * ```ts
 * import { type ErrorReading, messageWithCode, toDbError } from "./to_db_error.ts";
 *
 * const reading: ErrorReading = {
 *   text: messageWithCode,
 *   sort: ({ code }) => code === "SQLITE_BUSY" ? "timeout" : "query",
 * };
 * const error = toDbError(
 *   Object.assign(new Error("no such table: t"), { code: "SQLITE_ERROR" }),
 *   [],
 *   reading,
 * );
 * error.kind; // "query"; error.message: "no such table: t [SQLITE_ERROR]"
 * ```
 */
export function toDbError(
  error: unknown,
  secrets: readonly string[],
  reading: ErrorReading,
): DbError {
  if (error instanceof DbError) return error;
  const denied = permissionProblem(error);
  if (denied !== null) return denied;
  const e = thrown(error);
  const text = redact(reading.text(e), secrets);
  const sorted = reading.sort(e, text);
  return sorted instanceof DbError ? sorted : new DbError(sorted, text);
}

/** The message with the driver's code: `… [SQLITE_BUSY]`, `… [ER_PARSE_ERROR]`. */
export function messageWithCode(error: Thrown): string {
  return `${error.message}${error.code ? ` [${error.code}]` : ""}`;
}
