/**
 * The app's "MCP server" switch and shutdown: while `settings.enabled` is
 * false every request gets `-33006` (503); while the server stops, new
 * requests get `-33000` (503) (contract: "Protocol errors").
 *
 * @module
 */

import type { MiddlewareHandler } from "hono";
import { ErrorCode, WireError } from "../../protocol/errors.ts";
import {
  classifyMessage,
  type JsonRpcId,
  parseJsonBody,
} from "../../protocol/jsonrpc.ts";
import { HttpError } from "../http_error.ts";
import type { ServerState } from "../state.ts";
import type { BodyVariables } from "./body_limit.ts";

/**
 * The id of the refused request, so the client can match the error to its
 * request (MODERN-ERA §6). Parsed only on this refusal path.
 */
function refusedId(body: Uint8Array | undefined): JsonRpcId | null {
  if (body === undefined) return null;
  const parsed = parseJsonBody(body);
  if (!parsed.ok) return null;
  const message = classifyMessage(parsed.value);
  return message.kind === "request" ? message.id : null;
}

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
        refusedId(c.get("body")),
      );
    }
    if (!state.settings.enabled) {
      throw HttpError.wire(
        new WireError(
          ErrorCode.ServerDisabled,
          "Server disabled: the MCP server is switched off in the app's settings",
        ),
        refusedId(c.get("body")),
      );
    }
    await next();
  };
}
