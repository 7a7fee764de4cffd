/**
 * Pre-dispatch check 1 (docs/wire.md "HTTP surface"): the `Host` header must name
 * one of the listener's loopback names and its bound port. This is the
 * DNS-rebinding defence: a page on evil.example resolving to 127.0.0.1 still
 * sends `Host: evil.example`.
 *
 * One guard serves both listeners, each with its own hosts: the MCP endpoint
 * ({@linkcode MCP_HOSTS}, through {@linkcode hostGuard}) and the console
 * (lib/console/guards.ts `CONSOLE_HOSTS`).
 *
 * @module
 */

import type { MiddlewareHandler } from "hono";
import { HttpError } from "../http_error.ts";
import type { ServerState } from "../state.ts";

/** The Host headers a listener answers to. */
export interface AllowedHosts {
  /** Its lower-case names, in the order the refusal lists them. */
  names: readonly string[];
  /**
   * Whether a Host without a port is taken: an MCP client may leave it
   * out; the console's own pages always send it.
   */
  portOptional: boolean;
}

/** The MCP endpoint's: any loopback name, the port optional. */
export const MCP_HOSTS: AllowedHosts = {
  names: ["127.0.0.1", "localhost", "[::1]"],
  portOptional: true,
};

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

/**
 * The last Host taken, for which hosts and port: a client sends the same
 * one with each request, so it is parsed once, not at every request.
 */
let lastTaken: { value: string; hosts: AllowedHosts; port: number } = {
  value: "",
  hosts: MCP_HOSTS,
  port: -1,
};

/** Whether `value` is one of `hosts` at `port`. */
export function isHostOf(
  value: string | undefined,
  hosts: AllowedHosts,
  port: number,
): boolean {
  if (value === undefined) return false;
  const last = lastTaken;
  if (value === last.value && hosts === last.hosts && port === last.port) {
    return true;
  }
  const host = parseHost(value);
  if (host === null || !hosts.names.includes(host.name)) return false;
  const taken = host.port === null ? hosts.portOptional : host.port === port;
  if (taken) lastTaken = { value, hosts, port };
  return taken;
}

/** Whether a Host header value is acceptable for a server bound to `port`. */
export function isAllowedHost(
  value: string | undefined,
  port: number,
): boolean {
  return isHostOf(value, MCP_HOSTS, port);
}

/**
/**
 * The refusal for a request whose Host is not one of `hosts` at `port`, or
 * null: the one decision the Hono middleware and the `POST /mcp` fast path
 * (`mcp_post.ts`) both ask.
 */
export function hostRefusal(
  host: string | undefined,
  port: number,
  hosts: AllowedHosts = MCP_HOSTS,
): HttpError | null {
  if (isHostOf(host, hosts, port)) return null;
  return HttpError.plain(
    403,
    "forbidden_host",
    `Host ${
      host === undefined ? "(missing)" : `"${host}"`
    } is not allowed: use ${listed(hosts.names)}${
      port ? ` with port ${port}` : ""
    }`,
  );
}

/**
 * Refuse, before anything is read, any request whose Host is not one of
 * `hosts` at the port `port()` (read at each request: 0 until bound).
 */
export function allowedHostsGuard(
  hosts: AllowedHosts,
  port: () => number,
): MiddlewareHandler {
  return async function hostGuard(c, next) {
    const refused = hostRefusal(c.req.header("host"), port(), hosts);
    if (refused !== null) throw refused;
    await next();
  };
}

/** Refuse any request whose Host is not this server's loopback address. */
export function hostGuard(state: ServerState): MiddlewareHandler {
  return allowedHostsGuard(MCP_HOSTS, () => state.port);
}

/** `a, b or c`. */
function listed(names: readonly string[]): string {
  return names.length < 2
    ? names.join("")
    : `${names.slice(0, -1).join(", ")} or ${names.at(-1)}`;
}
