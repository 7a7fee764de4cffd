/**
 * A connection URL's `target_session_attrs` (libpq's: which of several
 * servers a session may use), read by dbport rather than passed on.
 *
 * postgres.js decides `read-write` and `read-only` by the session's
 * `default_transaction_read_only`, which dbport sets `on` in every session's
 * startup message (pg_options.ts): every server looked read-only, so
 * `read-write` refused them all and each call failed ("CONNECTION_DESTROYED")
 * after reconnecting in a loop. It refuses libpq's default `any` by throwing,
 * and its `prefer-standby` refuses the only host of a one-host URL. Here:
 *
 * - `any` (libpq's default) and, on one host, `prefer-standby` ask for
 *   nothing: whichever server answers is the one there is.
 * - `read-write` is a server not in recovery (`primary`): dbport's own
 *   sessions start read-only, so the server's own default cannot be read.
 * - `read-only` is a server in recovery (`standby`): the same reason; a
 *   primary whose `default_transaction_read_only` is on is not chosen.
 * - On several hosts dbport opens the sockets and picks the host
 *   (pg_hosts.ts: by the server's reported `in_hot_standby`, libpq's
 *   fallback to any host for `prefer-standby`); postgres.js, given one
 *   host, still checks `primary` and `standby` itself (a server too old
 *   to report `in_hot_standby`, or TLS postgres.js negotiates), which
 *   fails a mismatched session rather than loop.
 * - Any other value is refused before anything connects, naming it.
 *
 * @module
 */

import { DbError } from "../errors.ts";
import { urlQuery, withQuery } from "../url_query.ts";

/** libpq's values. */
const KNOWN = [
  "any",
  "read-write",
  "read-only",
  "primary",
  "standby",
  "prefer-standby",
] as const;

/** What postgres.js is told. */
export type PostgresJsAttrs = "primary" | "standby";

/** What the host of a several-host URL must be (pg_hosts.ts). */
export type HostAttrs = "primary" | "standby" | "prefer-standby" | null;

/** A URL without the parameter, and what postgres.js is to check. */
export interface SessionAttrs {
  url: string;
  attrs: PostgresJsAttrs | null;
  /** What dbport's host picker checks on several hosts. */
  hosts: HostAttrs;
}

/**
 * `url`'s `target_session_attrs` for postgres.js, and `url` without it; a
 * `DbError` naming a value libpq does not know.
 */
export function sessionAttrs(url: string): SessionAttrs {
  const params = urlQuery(url);
  const value = params.get("target_session_attrs");
  if (value === null) return { url, attrs: null, hosts: null };
  if (!(KNOWN as readonly string[]).includes(value)) {
    throw new DbError(
      "connect",
      `the URL's target_session_attrs=${JSON.stringify(value)} is not one of ${
        KNOWN.join(", ")
      }: correct the connection's URL`,
    );
  }
  params.delete("target_session_attrs");
  // The fragment goes too.
  const without = withQuery(url, params.toString(), false);
  const hosts = forHosts(value);
  // postgres.js's `prefer-standby` refuses the only host it is given.
  const attrs = hosts === "prefer-standby" ? null : hosts;
  return { url: without, attrs, hosts };
}

function forHosts(value: string): HostAttrs {
  switch (value) {
    case "read-write":
    case "primary":
      return "primary";
    case "read-only":
    case "standby":
      return "standby";
    case "prefer-standby":
      return "prefer-standby";
    default:
      return null;
  }
}
