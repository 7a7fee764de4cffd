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

/** Refuse any request whose Host is not this server's loopback address. */
export function hostGuard(state: ServerState): MiddlewareHandler {
  return async function hostGuard(c, next) {
    const host = c.req.header("host");
    if (!isAllowedHost(host, state.port)) {
      throw HttpError.plain(
        403,
        "forbidden_host",
        `Host ${
          host === undefined ? "(missing)" : `"${host}"`
        } is not allowed: use 127.0.0.1, localhost or [::1]${
          state.port ? ` with port ${state.port}` : ""
        }`,
      );
    }
    await next();
  };
}
