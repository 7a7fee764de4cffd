/**
 * What a saved connection's URL points at: the parts `list_connections` may
 * show (host, port, database - never a user or password) and the secrets a
 * driver message must never echo.
 *
 * @module
 */

import { type Engine, ENGINES } from "./engines.ts";

/** Where a connection goes, and what must stay secret about it. */
export interface Target {
  host: string | null;
  port: number | null;
  database: string | null;
  /** Values redacted from every message about this connection. */
  secrets: string[];
  /**
   * What `list_connections` shows of it (host, port, `host:port`, database),
   * which its messages to a client may keep.
   */
  visible: string[];
}

/** Read a connection URL; `null` when it cannot be read at all. */
export function describeTarget(
  engine: Engine,
  url: string,
  password?: string,
): Target | null {
  const extra = password === undefined ? [] : [password];
  if (ENGINES[engine].filePaths) {
    const path = sqlitePath(url);
    if (path !== null) {
      const name = path.split(/[\\/]/).at(-1) ?? path;
      return {
        host: null,
        port: null,
        database: name,
        secrets: [path, url, ...extra],
        visible: [],
      };
    }
  }
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return null;
  }
  const host = parsed.hostname.replace(/^\[|\]$/g, "") || null;
  const port = parsed.port === ""
    ? ENGINES[engine].defaultPort
    : Number(parsed.port);
  const database = decodeURIComponent(parsed.pathname.replace(/^\//, "")) ||
    null;
  const secrets = [
    decodeURIComponent(parsed.username),
    decodeURIComponent(parsed.password),
    ...queryStringSecrets(url),
    ...queryStringPaths(url),
    ...extra,
  ].filter((value) => value !== "");
  const visible = [
    host === null || port === null ? "" : `${host}:${port}`,
    host ?? "",
    port === null ? "" : String(port),
    database ?? "",
  ].filter((value) => value !== "");
  return { host, port, database, secrets, visible };
}

/**
 * Query parameters whose values are secrets: a libSQL `authToken`, and a
 * PostgreSQL client key's passphrase (`sslpassword`, libpq's name).
 */
const SECRET_PARAMS = ["authToken", "sslpassword"];

/**
 * Whether a query parameter's name, as written, names a secret: decoded as
 * the drivers decode it - `ssl%70assword=` is the passphrase dbport uses,
 * and went unredacted and shown by the console (outsider stop 53).
 */
export function isSecretParam(raw: string): boolean {
  return SECRET_PARAMS.includes(decodedName(raw));
}

/**
 * The secret values of a URL's query string (`SECRET_PARAMS`), as given and
 * decoded, read from the query string alone: a URL of several hosts
 * (`h1:5432,h2:5432`) is no WHATWG URL, and its secrets are secrets still.
 */
export function queryStringSecrets(url: string): string[] {
  return queryValues(url, SECRET_PARAMS);
}

/**
 * Query parameters whose values are local files: a PostgreSQL client
 * certificate, its key and a CA (libpq's `sslcert`, `sslkey`,
 * `sslrootcert`). Their paths name the owner's directories: redacted from
 * what AI clients see, never from the owner's own terminal (which needs
 * them to fix the file).
 */
const PATH_PARAMS = ["sslcert", "sslkey", "sslrootcert"];

/**
 * The file paths a URL's query string names (`PATH_PARAMS`), as given and
 * decoded - not `sslrootcert=system`, a word rather than a file.
 */
export function queryStringPaths(url: string): string[] {
  return queryValues(url, PATH_PARAMS).filter((value) => value !== "system");
}

/**
 * The values of `names` in a URL's query string, as given and decoded (a
 * name percent-encoded too), read from the query string alone: a URL of
 * several hosts (`h1:5432,h2:5432`) is no WHATWG URL.
 */
function queryValues(url: string, names: readonly string[]): string[] {
  const at = url.indexOf("?");
  if (at < 0) return [];
  const hash = url.indexOf("#", at);
  const query = url.slice(at + 1, hash < 0 ? undefined : hash);
  const values: string[] = [];
  for (const part of query.split("&")) {
    const eq = part.indexOf("=");
    if (eq < 0 || !names.includes(decodedName(part.slice(0, eq)))) continue;
    const raw = part.slice(eq + 1);
    values.push(raw);
    try {
      values.push(decodeURIComponent(raw.replaceAll("+", " ")));
    } catch { /* not percent-encoded as it should be: the raw value only */ }
  }
  return [...new Set(values)].filter((value) => value !== "");
}

/**
 * A query parameter's name as URLSearchParams reads it (pg_tls.ts does):
 * `%73slcert` is `sslcert`.
 */
export function decodedName(name: string): string {
  try {
    return decodeURIComponent(name.replaceAll("+", " "));
  } catch {
    return name;
  }
}

/**
 * The local file of a SQLite URL: a plain path or a `file:` URL. Null for a
 * remote libSQL URL (`libsql://`, `http(s)://`, `ws(s)://`).
 */
export function sqlitePath(url: string): string | null {
  const scheme = /^([a-z][a-z0-9+.-]*):/i.exec(url)?.[1]?.toLowerCase();
  if (scheme !== undefined && ENGINES.sqlite.urlSchemes.includes(scheme)) {
    return null;
  }
  if (/^file:/i.test(url)) {
    const rest = url.slice(5).replace(/[?#].*$/, "");
    // file:///abs, file:/abs and file:relative all name a path.
    return decodeURIComponent(rest.replace(/^\/\/(?=\/)/, ""));
  }
  return url;
}
