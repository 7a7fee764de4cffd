/**
 * The app's "MCP server" switch and shutdown: while `settings.enabled` is
 * false every request gets `-33006` (503); while the server stops, new
 * requests get `-33000` (503) (docs/wire.md "Protocol errors").
 *
 * @module
 */

import type { MiddlewareHandler } from "hono";
import { ErrorCode, WireError } from "../../protocol/errors.ts";
import { HttpError } from "../http_error.ts";
import { peekRequest } from "../peek.ts";
import type { ServerState } from "../state.ts";
import type { BodyVariables } from "./body_limit.ts";

/** Refuse requests while the server is switched off or stopping. */
export function availabilityGuard(
  state: ServerState,
): MiddlewareHandler<{ Variables: BodyVariables }> {
  return async function availabilityGuard(c, next) {
    if (state.stopping) {
      throw HttpError.wire(
        new WireError(
          ErrorCode.ServiceUnavailable,
          "Service unavailable: the server is shutting down",
          undefined,
          { "retry-after": "5" },
        ),
        peekRequest(c.get("body")).id,
      );
    }
    if (!state.settings.enabled) {
      throw HttpError.wire(
        new WireError(
          ErrorCode.ServerDisabled,
          "Server disabled: the MCP server is switched off in the app's settings",
        ),
        peekRequest(c.get("body")).id,
      );
    }
    await next();
  };
}
