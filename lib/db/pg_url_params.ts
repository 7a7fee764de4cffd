/**
 * The query parameters a PostgreSQL connection URL may carry, by
 * allowlist: libpq's that dbport reads (TLS, target_session_attrs,
 * connect_timeout, application_name, options). postgres.js passes every
 * parameter it does not know to the server as a start-up setting, after
 * dbport's own: `?standard_conforming_strings=off` had the server read
 * `'a\' , '` as one string where dbport's lexer and parser read two, and a
 * readOnly token read a server file (outsider stop 56); `?user=`,
 * `?default_transaction_read_only=off`, `?TimeZone=` would override the
 * session dbport starts. Another name is a problem of that connection
 * (target.ts `urlProblem`), named; the server does not stop.
 *
 * Loaded at start-up (target.ts): ASCII only.
 *
 * @module
 */

/** The parameters a PostgreSQL URL may carry, as libpq names them. */
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

/**
 * The query parameters of `url` (a URL of several hosts is no WHATWG URL:
 * read from the query string alone), names decoded as the drivers do.
 */
export function urlQuery(url: string): URLSearchParams {
  const at = url.indexOf("?");
  if (at < 0) return new URLSearchParams();
  const hash = url.indexOf("#", at);
  return new URLSearchParams(url.slice(at + 1, hash < 0 ? undefined : hash));
}

/** What is wrong with a PostgreSQL URL's query parameters, or null. */
export function pgUrlParamsProblem(url: string): string | null {
  const unknown = [...new Set(urlQuery(url).keys())]
    .filter((name) => !PG_URL_PARAMS.has(name));
  if (unknown.length === 0) return null;
  return `has the query parameter${unknown.length === 1 ? "" : "s"} ${
    unknown.map((name) => JSON.stringify(name)).join(", ")
  }, which dbport does not take: the server would read ${
    unknown.length === 1 ? "it" : "them"
  } as session settings over dbport's own (standard strings, read-only, UTC); dbport takes ${
    [...PG_URL_PARAMS].join(", ")
  }`;
}

/**
 * `url` with only the parameters postgres.js reads as its own options:
 * nothing left for it to pass to the server as a start-up setting
 * (application_name and options are given in `connection`, under dbport's
 * own: pg_options.ts).
 */
export function urlForPostgresJs(url: string): string {
  const params = urlQuery(url);
  const at = url.indexOf("?");
  if (at < 0) return url;
  const kept = new URLSearchParams();
  for (const [name, value] of params) {
    if (FOR_POSTGRES_JS.has(name)) kept.append(name, value);
  }
  const hash = url.indexOf("#", at);
  const rest = kept.toString();
  return url.slice(0, at) + (rest === "" ? "" : `?${rest}`) +
    (hash < 0 ? "" : url.slice(hash));
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
