/**
 * A tool that fails in-band (docs/wire.md "Tool errors"): a `ToolFailure` becomes
 * `isError: true` with one text item `code: message`. Driver errors map here
 * too, except a statement timeout (`-33003`) and a cancellation (`-33002`),
 * which the wire reference's "Request lifecycle" makes protocol errors.
 *
 * @module
 */

import { cliCommand } from "../../app/cli_command.ts";
import { DbError } from "../../db/errors.ts";
import { type ToolErrorCode, wire, WireError } from "../../protocol/errors.ts";

/**
 * A tool failure the client sees as a tool error.
 *
 * @example
 * ```ts
 * import { ToolFailure } from "./failure.ts";
 *
 * throw new ToolFailure(
 *   "not_found",
 *   `no connection you can use has the id or name "shop"; list_connections shows them`,
 * );
 * ```
 */
export class ToolFailure extends Error {
  override name = "ToolFailure";
  readonly code: ToolErrorCode;

  constructor(code: ToolErrorCode, message: string) {
    super(message);
    this.code = code;
  }
}

/** Shorthand for an `invalid_argument` failure. */
export function invalidArgument(message: string): ToolFailure {
  return new ToolFailure("invalid_argument", message);
}

/** A driver error as what the client sees; `where` names the connection. */
export function fromDbError(
  error: DbError,
  where: string,
): ToolFailure | WireError {
  switch (error.kind) {
    case "connect":
      return new ToolFailure(
        "not_connected",
        `cannot reach ${where}: ${error.message}${nextStep(where)}`,
      );
    case "connect_timeout":
      return new ToolFailure(
        "timeout",
        `cannot reach ${where}: ${error.message}`,
      );
    case "read_only":
      return new ToolFailure(
        "denied",
        `the database refused to write (dbport runs this statement read-only): ${error.message}`,
      );
    case "timeout":
      return wire.requestTimeout(`Request timed out: ${error.message}`);
    case "cancelled":
      return wire.requestCancelled(`Request cancelled: ${error.message}`);
    case "query":
      return new ToolFailure("query_failed", error.message);
    case "ambiguous":
      return new ToolFailure("invalid_argument", error.message);
    case "no_transaction":
      return new ToolFailure("query_failed", error.message);
    case "changed":
      return new ToolFailure("denied", error.message);
    case "held":
    case "uncounted":
      // A dry run's own signals; they never end a call.
      return new ToolFailure("query_failed", error.message);
  }
}

/**
 * What the user can do about a connection that cannot be reached, said so
 * that a model can pass it on. `where` is the connection's name as JSON
 * (`"Shop"`), or a phrase when no connection is named.
 */
export function nextStep(where: string): string {
  const named = where.startsWith('"');
  return `; ask the user to run \`${cliCommand()} connections test${
    named ? ` ${where}` : ""
  }\`${named ? "" : " with the connection's name"}, which says what to fix`;
}

/** Re-throw a driver error in the client's terms; other errors pass through. */
export function rethrow(error: unknown, where: string): never {
  if (error instanceof DbError) throw fromDbError(error, where);
  throw error;
}
