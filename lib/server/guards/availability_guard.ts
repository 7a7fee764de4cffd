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

/**
 * The refusal while the server is switched off or stopping, or null: the
 * decision the Hono middleware and the `POST /mcp` fast path
 * (`mcp_post.ts`) both ask. `body` names the request id in the answer.
 */
export function unavailable(
  state: ServerState,
  body: Uint8Array | undefined,
): HttpError | null {
  if (state.stopping) {
    return HttpError.wire(
      new WireError(
        ErrorCode.ServiceUnavailable,
        "Service unavailable: the server is shutting down",
        undefined,
        { "retry-after": "5" },
      ),
      peekRequest(body).id,
    );
  }
  if (!state.settings.enabled) {
    return HttpError.wire(
      new WireError(
        ErrorCode.ServerDisabled,
        "Server disabled: the MCP server is switched off in the app's settings",
      ),
      peekRequest(body).id,
    );
  }
  return null;
}

/** Refuse requests while the server is switched off or stopping. */
export function availabilityGuard(
  state: ServerState,
): MiddlewareHandler<{ Variables: BodyVariables }> {
  return async function availabilityGuard(c, next) {
    const refused = unavailable(state, c.get("body"));
    if (refused !== null) throw refused;
    await next();
  };
}
