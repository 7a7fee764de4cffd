/**
 * Pre-dispatch check 1 (docs/wire.md "HTTP surface"): the `Host` header must name
 * a loopback host and, when it carries a port, the bound port. This is the
 * DNS-rebinding defence: a page on evil.example resolving to 127.0.0.1 still
 * sends `Host: evil.example`.
 *
 * @module
 */

import type { MiddlewareHandler } from "hono";
import { HttpError } from "../http_error.ts";
import type { ServerState } from "../state.ts";

const LOOPBACK_NAMES = new Set(["localhost", "127.0.0.1", "[::1]"]);

/** Split a Host header into name and port; null when it is malformed. */
export function parseHost(
  value: string,
): { name: string; port: number | null } | null {
  const match = /^(\[[0-9a-fA-F:.]+\]|[^:[\]]+)(?::(\d{1,5}))?$/.exec(
    value.trim(),
  );
  if (match === null) return null;
  const name = match[1]!.toLowerCase();
  const port = match[2] === undefined ? null : Number(match[2]);
  if (port !== null && (port < 1 || port > 65535)) return null;
  return { name, port };
}

/** Whether a Host header value is acceptable for a server bound to `port`. */
export function isAllowedHost(
  value: string | undefined,
  port: number,
): boolean {
  if (value === undefined) return false;
  const host = parseHost(value);
  if (host === null || !LOOPBACK_NAMES.has(host.name)) return false;
  return host.port === null || host.port === port;
}

/**
 * The refusal for a request whose Host is not this server's loopback
 * address, or null: the one decision the Hono middleware and the `POST /mcp`
 * fast path (`mcp_post.ts`) both ask.
 */
export function hostRefusal(
  host: string | undefined,
  port: number,
): HttpError | null {
  if (isAllowedHost(host, port)) return null;
  return HttpError.plain(
    403,
    "forbidden_host",
    `Host ${
      host === undefined ? "(missing)" : `"${host}"`
    } is not allowed: use 127.0.0.1, localhost or [::1]${
      port ? ` with port ${port}` : ""
    }`,
  );
}

/** Refuse any request whose Host is not this server's loopback address. */
export function hostGuard(state: ServerState): MiddlewareHandler {
  return async function hostGuard(c, next) {
    const refused = hostRefusal(c.req.header("host"), state.port);
    if (refused !== null) throw refused;
    await next();
  };
}
