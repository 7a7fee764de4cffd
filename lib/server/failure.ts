/**
 * What a request that failed is answered, for the Hono app and the
 * `POST /mcp` fast path alike. Apart from app.ts so that the fast path (and
 * an idle server) does not load Hono: the app is built at the first request
 * the fast path leaves to it (lib/serve/endpoint.ts).
 *
 * @module
 */

import { thrown } from "../base/thrown.ts";
import type { Logger } from "../base/log.ts";
import { HttpError } from "./http_error.ts";

/** Whether `error` is only the client closing its connection mid-request. */
export function clientWentAway(error: unknown): boolean {
  const e = thrown(error);
  return e.message === "aborted" || e.code === "ECONNRESET" ||
    e.code === "ERR_STREAM_PREMATURE_CLOSE" || e.name === "AbortError";
}

/**
 * What a request that failed is answered: its own refusal, `client_gone`
 * for a client that hung up, or a logged `internal_error` (the Hono app and
 * the `POST /mcp` fast path alike).
 */
export function failure(error: unknown, log: Logger): HttpError {
  if (error instanceof HttpError) return error;
  // A client that hung up mid-request is expected, not an error: nothing
  // goes to the terminal where approval questions appear.
  if (clientWentAway(error)) {
    return HttpError.plain(400, "client_gone", "The client went away");
  }
  log(
    `dbport: unexpected error: ${
      error instanceof Error ? error.stack : String(error)
    }`,
  );
  return HttpError.plain(500, "internal_error", "Internal error");
}
