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

/**
 * The refusal for a foreign `Origin`, or null (none sent, or an allowed
 * one): the decision the Hono middleware and the `POST /mcp` fast path
 * (`mcp_post.ts`) both ask.
 */
export function originRefusal(
  origin: string | undefined,
  allowedOrigins: readonly string[],
): HttpError | null {
  if (origin === undefined || allowedOrigins.includes(origin)) return null;
  return HttpError.plain(
    403,
    "forbidden_origin",
    `Origin "${origin}" is not allowed: allowed are ${
      allowedOrigins.join(", ") || "none"
    }`,
  );
}

/** The CORS headers every answer to an allowed origin carries. */
export function corsHeaders(origin: string): Record<string, string> {
  return {
    "access-control-allow-origin": origin,
    "vary": "Origin",
    "access-control-expose-headers": EXPOSED_HEADERS,
  };
}

/** Refuse foreign origins; add CORS headers for allowed ones. */
export function originGuard(state: ServerState): MiddlewareHandler {
  return async function originGuard(c, next) {
    const origin = c.req.header("origin");
    if (origin === undefined) return await next();
    const refused = originRefusal(origin, state.settings.allowedOrigins);
    if (refused !== null) throw refused;
    await next();
    for (const [name, value] of Object.entries(corsHeaders(origin))) {
      if (name === "vary") c.res.headers.append(name, value);
      else c.res.headers.set(name, value);
    }
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
