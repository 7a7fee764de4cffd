/**
 * The app's "MCP server" switch and shutdown: while `settings.enabled` is
 * false every request gets `-33006` (503); while the server stops, new
 * requests get `-33000` (503) (contract: "Protocol errors").
 *
 * @module
 */

import type { MiddlewareHandler } from "hono";
import { ErrorCode, WireError } from "../../protocol/errors.ts";
import { HttpError } from "../http_error.ts";
import type { ServerState } from "../state.ts";

/** Refuse requests while the server is switched off or stopping. */
export function availabilityGuard(state: ServerState): MiddlewareHandler {
  return async function availabilityGuard(_c, next) {
    if (state.stopping) {
      throw HttpError.wire(
        new WireError(
          ErrorCode.ServiceUnavailable,
          "Service unavailable: the server is shutting down",
          undefined,
          { "retry-after": "5" },
        ),
      );
    }
    if (!state.settings.enabled) {
      throw HttpError.wire(
        new WireError(
          ErrorCode.ServerDisabled,
          "Server disabled: the MCP server is switched off in the app's settings",
        ),
      );
    }
    await next();
  };
}
