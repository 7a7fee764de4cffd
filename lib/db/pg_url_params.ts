/**
 * The query parameters a PostgreSQL connection URL may carry, by
 * allowlist: libpq's that dbport reads (TLS, target_session_attrs,
 * connect_timeout, application_name, options), and the server settings a
 * statement may change too (pg_settings.ts: `?search_path=app`,
 * `?statement_timeout=5s`), which the session starts with. postgres.js
 * passed every parameter it does not know to the server as a start-up
 * setting, after dbport's own: `?standard_conforming_strings=off` had the
 * server read `'a\' , '` as one string where dbport's lexer and parser
 * read two, and a readOnly token read a server file (outsider stop 56);
 * `?user=`, `?default_transaction_read_only=off` would override the session
 * dbport starts. Another name is a problem of that connection (target.ts
 * `urlProblem`), named; the server does not stop. dbport's own start-up
 * settings (UTC, read-only, standard strings) always win (pg_options.ts).
 *
 * Loaded at start-up (target.ts): ASCII only.
 *
 * @module
 */

import { settingRefusal } from "./pg_settings.ts";
import { urlQuery, withQuery } from "./url_query.ts";

/** libpq's parameters dbport reads, as libpq names them. */
export const PG_URL_PARAMS: ReadonlySet<string> = new Set([
  "sslmode",
  // postgres.js's own spelling of sslmode's on/off (pg_tls.ts reads it).
  "ssl",
  "sslrootcert",
  "sslcert",
  "sslkey",
  "sslpassword",
  "sslnegotiation",
  "target_session_attrs",
  // dbport's own connect timeout holds (pg_options.ts); accepted as libpq's.
  "connect_timeout",
  "application_name",
  // Server switches: only `-c name=value` of an allowed setting
  // (pg_settings.ts `startupOptionsRefusal`, checked as the pool opens).
  "options",
]);

/** Settings dbport starts every session with itself (pg_options.ts). */
const DBPORT_SETS = new Set(["timezone"]);

/**
 * Whether a URL parameter is a start-up setting for the server (one a
 * statement may change, not one dbport sets itself): given in the start-up
 * packet under dbport's own.
 */
export function isStartupSetting(name: string): boolean {
  return name === "application_name" || name === "options" ||
    (!PG_URL_PARAMS.has(name) && !DBPORT_SETS.has(name.toLowerCase()) &&
      settingRefusal(name) === null);
}

/** What is wrong with a PostgreSQL URL's query parameters, or null. */
export function pgUrlParamsProblem(url: string): string | null {
  const names = [...new Set(urlQuery(url).keys())];
  const own = names.find((name) => DBPORT_SETS.has(name.toLowerCase()));
  if (own !== undefined) {
    return `has the query parameter ${
      JSON.stringify(own)
    }: dbport starts every session with ${own} UTC itself (dates and times are read as UTC); set a column's zone with AT TIME ZONE`;
  }
  const unknown = names.filter((name) =>
    !PG_URL_PARAMS.has(name) && !isStartupSetting(name)
  );
  if (unknown.length === 0) return null;
  return `has the query parameter${unknown.length === 1 ? "" : "s"} ${
    unknown.map((name) => JSON.stringify(name)).join(", ")
  }, which dbport does not take: neither a connection parameter dbport reads (${
    [...PG_URL_PARAMS].join(", ")
  }) nor a setting a statement may change (docs/security.md "Settings"); the server would start the session with ${
    unknown.length === 1 ? "it" : "them"
  } over dbport's own`;
}

/**
 * `url` with only the parameters postgres.js reads as its own options:
 * nothing left for it to pass to the server as a start-up setting
 * (`isStartupSetting`'s are given in `connection`, under dbport's own:
 * pg_options.ts).
 */
export function urlForPostgresJs(url: string): string {
  const kept = new URLSearchParams();
  for (const [name, value] of urlQuery(url)) {
    if (FOR_POSTGRES_JS.has(name)) kept.append(name, value);
  }
  return withQuery(url, kept.toString());
}

/** What postgres.js reads of a URL's query as options of its own. */
const FOR_POSTGRES_JS: ReadonlySet<string> = new Set([
  "sslmode",
  "ssl",
  "sslnegotiation",
  "sslrootcert",
  "sslcert",
  "sslkey",
  "sslpassword",
  "target_session_attrs",
  "connect_timeout",
]);
