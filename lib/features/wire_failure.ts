/**
 * A tool failure where no tool answers: `resources/read` and `prompts/get`
 * cannot return `isError`, so the shared connection and schema code's
 * failures become protocol errors there (docs/wire.md "Protocol errors").
 *
 * @module
 */

import { DbError } from "../db/errors.ts";
import { wire, WireError } from "../protocol/errors.ts";
import { fromDbError, ToolFailure } from "./tools/failure.ts";

/**
 * `error` as a protocol error: a bad or unknown name is `-32602`, a refusal
 * or a declined approval `-33007`, a database that cannot be reached `-32602`
 * (the thing asked for cannot be read), a failed catalog query `-32603` with
 * its redacted message. Anything else passes through unchanged.
 */
export function asWireError(error: unknown, what: string): unknown {
  const failure = error instanceof DbError
    ? fromDbError(error, "the database")
    : error;
  if (!(failure instanceof ToolFailure)) return failure;
  const message = `Cannot ${what}: ${failure.message}`;
  switch (failure.code) {
    case "invalid_argument":
    case "not_found":
    case "not_connected":
    case "timeout":
      return wire.invalidParams(message);
    case "denied":
    case "user_cancelled":
      return wire.forbidden(message);
    default:
      return new WireError(-32603, message);
  }
}
