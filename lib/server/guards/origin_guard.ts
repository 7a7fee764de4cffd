/**
 * Pre-dispatch check 2 (docs/wire.md "HTTP surface"): an `Origin`, when present,
 * must be one of the allowed web origins. Native clients send none. Allowed
 * origins get CORS headers on every answer and a preflight at `OPTIONS /mcp`.
 *
 * @module
 */

import type { MiddlewareHandler } from "hono";
import { HttpError } from "../http_error.ts";
import type { ServerState } from "../state.ts";

/** Request headers a browser client may send (the `Mcp-Param-*` family too). */
const ALLOWED_REQUEST_HEADERS = [
  "accept",
  "authorization",
  "content-type",
  "last-event-id",
  "mcp-method",
  "mcp-name",
  "mcp-protocol-version",
  "mcp-session-id",
];

/** Response headers a browser client may read. */
const EXPOSED_HEADERS = "Mcp-Session-Id, WWW-Authenticate, Retry-After";

/** Refuse foreign origins; add CORS headers for allowed ones. */
export function originGuard(state: ServerState): MiddlewareHandler {
  return async function originGuard(c, next) {
    const origin = c.req.header("origin");
    if (origin === undefined) return await next();
    if (!state.settings.allowedOrigins.includes(origin)) {
      throw HttpError.plain(
        403,
        "forbidden_origin",
        `Origin "${origin}" is not allowed: allowed are ${
          state.settings.allowedOrigins.join(", ") || "none"
        }`,
      );
    }
    await next();
    c.res.headers.set("access-control-allow-origin", origin);
    c.res.headers.append("vary", "Origin");
    c.res.headers.set("access-control-expose-headers", EXPOSED_HEADERS);
  };
}

/** `OPTIONS /mcp`: 204, with the CORS grant when an allowed origin asks. */
export function preflight(): MiddlewareHandler {
  return function preflight(c) {
    const headers = new Headers();
    if (c.req.header("origin") !== undefined) {
      const asked = (c.req.header("access-control-request-headers") ?? "")
        .split(",").map((name) => name.trim().toLowerCase()).filter((name) =>
          ALLOWED_REQUEST_HEADERS.includes(name) ||
          name.startsWith("mcp-param-")
        );
      headers.set("access-control-allow-methods", "POST, OPTIONS");
      headers.set(
        "access-control-allow-headers",
        [...new Set([...ALLOWED_REQUEST_HEADERS, ...asked])].join(", "),
      );
      headers.set("access-control-max-age", "600");
    }
    headers.set("allow", "POST, OPTIONS");
    return Promise.resolve(new Response(null, { status: 204, headers }));
  };
}
