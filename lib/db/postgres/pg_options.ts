/**
 * How dbport opens a PostgreSQL session with postgres.js: the host given
 * apart (an IPv6 literal), a small pool, no server-side prepared statements,
 * every session read-only by default in UTC with standard strings, and the
 * types whose text dbport reads itself (dates and times as text, bound
 * values as the engine reads a literal's).
 *
 * @module
 */

import type { Duplex } from "node:stream";
import postgres from "postgres";
import type { PostgresJsAttrs } from "./pg_session_attrs.ts";
import { isStartupSetting } from "../pg_url_params.ts";
import { urlQuery } from "../url_query.ts";

/** How to reach one PostgreSQL database. */
export interface PostgresConfig {
  url: string;
  password?: string;
  /** Values redacted from every message. */
  secrets: readonly string[];
  /** Seconds before an unused pooled connection closes. */
  idleSeconds?: number;
  /**
   * Each session's socket, when it is not a TCP connection of its own: a
   * channel through an SSH tunnel (also for the protocol's cancel request).
   */
  socket?: () => Promise<Duplex>;
  /**
   * Reads through dbport's own reader on a wired socket (pg_wired.ts): on
   * unless turned off here or by `DBPORT_PG_WIRE=0` (then every read takes
   * postgres.js's path; docs/performance.md, issue 38).
   */
  wiredReads?: boolean;
  /**
   * What postgres.js checks of each server it connects to: the URL's
   * `target_session_attrs` as dbport reads it (pg_session_attrs.ts); the
   * URL given with it no longer names it.
   */
  targetSessionAttrs?: PostgresJsAttrs | null;
}

/** Connect timeout (issue: a database that cannot be reached in 10 s). */
export const CONNECT_TIMEOUT_SECONDS = 10;

/**
 * Seconds before a session is reopened after `retries` closes with an error
 * in a row: postgres.js's own backoff (10 ms, tripling, less up to half at
 * random) capped at 1 s rather than 20 s.
 */
export function reopenDelay(retries: number): number {
  return (0.5 + Math.random() / 2) * Math.min(3 ** retries / 100, 1);
}

/** postgres.js's options for a pool of `config` (over `socket`, if given). */
export function postgresOptions(
  config: PostgresConfig,
  socket?: () => Promise<Duplex> | Duplex,
): postgres.Options<Record<string, postgres.PostgresType>> {
  return {
    // postgres.js splits the host on ":", which breaks an IPv6 literal
    // ([::1]); the host and port are given on their own.
    // The typings say string; postgres.js takes a list as well.
    ...(hostOf(config.url) as unknown as { host?: string; port?: number }),
    max: 4,
    idle_timeout: config.idleSeconds ?? 60,
    connect_timeout: CONNECT_TIMEOUT_SECONDS,
    // postgres.js waits before reopening a session after one closed with an
    // error, up to 20 s by default, growing with every such close across
    // the pool: a few sessions ended in a row (an administrator, a restart)
    // made the next read wait 7-15 s for a session (outsider stop48). At
    // most 1 s here; a database that cannot be reached still fails within
    // the connect timeout.
    backoff: reopenDelay,
    // Statements vary per call: no server-side prepared statement cache.
    prepare: false,
    onnotice: () => {},
    // Every session starts read-only: a read's own BEGIN READ ONLY is
    // pipelined with its statement (below), and should that BEGIN ever fail,
    // the statement still cannot write. Writes say BEGIN READ WRITE.
    // The URL's start-up settings (application_name, options, a setting a
    // statement may change: pg_url_params.ts), then dbport's own, which
    // win; the URL given to postgres.js carries no other (pg_pools.ts).
    connection: {
      application_name: "dbport",
      ...urlStartupSettings(config.url),
      TimeZone: "UTC",
      default_transaction_read_only: true,
      // The lexer and PostgreSQL's parser read '...\' as the server does
      // only with standard strings (docs/security.md "The lexer").
      standard_conforming_strings: "on",
    },
    ...(config.password === undefined ? {} : { password: config.password }),
    ...(config.targetSessionAttrs == null
      ? {}
      : { target_session_attrs: config.targetSessionAttrs }),
    ...(socket === undefined ? {} : { socket }),
    // Dates and times stay text, converted per column (values.ts).
    types: {
      date: {
        to: 1184,
        from: [1082, 1083, 1114, 1184, 1266],
        serialize: (x: unknown) => String(x),
        parse: (x: string) => x,
      },
      // A bound text value is the engine's to read, as a literal's would be
      // (execute_query's params, saved queries): postgres.js's own
      // serializers turned "true" in a boolean slot into 'f' and
      // '{"a":1}' in a json slot into a JSON string.
      json: {
        to: 114,
        from: [114, 3802],
        serialize: (x: unknown) =>
          typeof x === "string" ? x : JSON.stringify(x),
        parse: (x: string) => JSON.parse(x),
      },
      boolean: {
        to: 16,
        from: [16],
        serialize: (x: unknown) =>
          x === true ? "t" : x === false ? "f" : String(x),
        parse: (x: string) => x === "t",
      },
      // A string in a bytea slot is bytea's text form ('\x41' is one byte,
      // as the literal is), not the hex of its UTF-8 bytes. Serializer only:
      // without `from`, postgres.js keeps its own bytea parser.
      bytea: {
        to: 17,
        serialize: (x: unknown) =>
          typeof x === "string" ? x : `\\x${
            Array.from(
              x as Uint8Array,
              (byte) => byte.toString(16).padStart(2, "0"),
            ).join("")
          }`,
      } as unknown as postgres.PostgresType,
    },
  };
}

/**
 * The URL's start-up settings (`application_name`, `options`, a setting a
 * statement may change: pg_url_params.ts `isStartupSetting`).
 */
function urlStartupSettings(url: string): Record<string, string> {
  const settings: Record<string, string> = {};
  for (const [name, value] of urlQuery(url)) {
    if (isStartupSetting(name)) settings[name] = value;
  }
  return settings;
}

/**
 * The URL's host (brackets removed) and port, for postgres.js, as one-element
 * lists: a plain string would be split at ":" (postgres.js 3.4.9, index.js).
 */
function hostOf(url: string): { host?: string[]; port?: number[] } {
  try {
    const parsed = new URL(url);
    const host = parsed.hostname.replace(/^\[|\]$/g, "");
    if (host === "" || host.includes(",")) return {};
    return { host: [host], port: [Number(parsed.port || 5432)] };
  } catch {
    return {};
  }
}
