/**
 * What a saved connection's URL points at: the parts `list_connections` may
 * show (host, port, database - never a user or password) and the secrets a
 * driver message must never echo.
 *
 * @module
 */

import { type Engine, ENGINES } from "./engines.ts";
import { pgUrlParamsProblem } from "./pg_url_params.ts";
import { decodedName, queryValues } from "./url_query.ts";

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
  // libpq's several hosts (`h1:5432,h2:5433`, `h1,h2:5432`): each host
  // with its port, read apart (no WHATWG URL takes a port per host).
  const several = engine === "postgres" ? hostList(url, 5432) : null;
  let parsed: URL;
  try {
    parsed = new URL(several === null ? url : several.url);
  } catch {
    return null;
  }
  let host = parsed.hostname.replace(/^\[|\]$/g, "") || null;
  let port = parsed.port === ""
    ? ENGINES[engine].defaultPort
    : Number(parsed.port);
  const hostsVisible: string[] = [];
  if (several !== null) {
    const shared = several.hosts.every((one) =>
      one.port === several.hosts[0]!.port
    );
    host = several.hosts.map((one) =>
      shared ? one.written : `${one.written}:${one.port}`
    ).join(",");
    port = shared ? several.hosts[0]!.port : null;
    for (const one of several.hosts) {
      hostsVisible.push(`${one.written}:${one.port}`, one.host);
    }
  }
  // Decoded where it can be, never throwing: a '%' not followed by two hex
  // digits (a password "50%off" as typed) is `urlProblem`'s to name; one
  // such URL stopped the server's start, every healthy connection with it
  // (outsider stop 55).
  const database = lenientDecode(parsed.pathname.replace(/^\//, "")) ||
    null;
  const secrets = [
    lenientDecode(parsed.username),
    lenientDecode(parsed.password),
    ...queryStringSecrets(url),
    ...queryStringPaths(url),
    ...extra,
  ].filter((value) => value !== "");
  const visible = [
    host === null || port === null ? "" : `${host}:${port}`,
    host ?? "",
    port === null ? "" : String(port),
    ...hostsVisible,
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
    // SQLite's reading of a file: URI: a '%' not followed by two hex
    // digits is itself (never a throw).
    return lenientDecode(rest.replace(/^\/\/(?=\/)/, ""));
  }
  return url;
}

/** One host of a URL's host list, with its port. */
export interface ListedHost {
  /** The name or address (an IPv6 literal without its brackets). */
  host: string;
  /** As written in the URL (an IPv6 literal in brackets). */
  written: string;
  port: number;
}

/**
 * A URL's `scheme://`, user info (before the authority's last `@`, or
 * null), host list and the rest (path, query, fragment); null without an
 * authority.
 */
export function urlParts(
  url: string,
):
  | { scheme: string; userinfo: string | null; hosts: string; rest: string }
  | null {
  const found = /^([A-Za-z][A-Za-z0-9+.-]*:\/\/)([^/?#]*)(.*)$/s.exec(url);
  if (found === null) return null;
  const authority = found[2]!;
  const at = authority.lastIndexOf("@");
  return {
    scheme: found[1]!,
    userinfo: at < 0 ? null : authority.slice(0, at),
    hosts: at < 0 ? authority : authority.slice(at + 1),
    rest: found[3]!,
  };
}

/**
 * The hosts of a URL that names several, as libpq reads them
 * (`postgres://u@h1:5432,h2:5433/db`, `h1,h2:5432`, `[::1]:5432,h2`): each
 * with its own port, `defaultPort` where it names none (libpq's and
 * postgres.js's rule). `url` is the same URL naming the first host alone,
 * which a WHATWG URL reads (user, password, path and query). Null for a URL
 * of one host, or a host list that is not one (a port that is no port).
 */
export function hostList(
  url: string,
  defaultPort: number,
): { hosts: ListedHost[]; url: string } | null {
  const parts = urlParts(url);
  if (parts === null || !parts.hosts.includes(",")) return null;
  const hosts: ListedHost[] = [];
  for (const entry of parts.hosts.split(",")) {
    const found = /^(\[[0-9A-Fa-f:.]+\]|[^:[\]]*)(?::(\d{0,5}))?$/.exec(entry);
    if (found === null) return null;
    const written = found[1]!;
    const port = found[2] === undefined || found[2] === ""
      ? defaultPort
      : Number(found[2]);
    if (port > 65535) return null;
    let host = written.replace(/^\[|\]$/g, "");
    try {
      host = decodeURIComponent(host);
    } catch {
      return null;
    }
    hosts.push({ host, written, port });
  }
  const first = hosts[0]!;
  return {
    hosts,
    url: `${parts.scheme}${
      parts.userinfo === null ? "" : `${parts.userinfo}@`
    }${first.written || "localhost"}:${first.port}${parts.rest}`,
  };
}

/**
 * The password of a URL's user info (`user:password@`) as written and as
 * decoded (`lenientDecode`: a '%' that starts no escape is kept), each
 * once; none when it has none. Read apart from a WHATWG URL: a URL of
 * several hosts with their ports is none, and its password is a password
 * still. Both forms are secrets: a message may quote the URL or the value
 * a driver sent.
 */
export function urlPasswords(url: string): string[] {
  const userinfo = urlParts(url)?.userinfo ?? null;
  if (userinfo === null) return [];
  const colon = userinfo.indexOf(":");
  if (colon < 0) return [];
  const raw = userinfo.slice(colon + 1);
  return [...new Set([raw, lenientDecode(raw)])].filter((form) => form !== "");
}

/**
 * `url` as a message may quote it: its password and secret query
 * parameters (`authToken`, `sslpassword`) replaced by `[redacted]`, read
 * apart from a WHATWG URL (it need not parse).
 */
export function urlWithoutSecrets(url: string): string {
  const parts = urlParts(url);
  let shown = url;
  if (parts !== null && parts.userinfo !== null) {
    const colon = parts.userinfo.indexOf(":");
    if (colon >= 0) {
      shown = `${parts.scheme}${
        parts.userinfo.slice(0, colon)
      }:[redacted]@${parts.hosts}${parts.rest}`;
    }
  }
  for (const secret of queryStringSecrets(shown)) {
    shown = shown.replaceAll(`=${secret}`, "=[redacted]");
  }
  return shown;
}

/**
 * What is wrong with `url` as a connection URL of `engine` (a scheme of
 * another engine, a URL that cannot be read), or null. Never quotes it.
 */
export function urlProblem(engine: Engine, url: string): string | null {
  const facts = ENGINES[engine];
  const scheme = /^([a-z][a-z0-9+.-]*):/i.exec(url)?.[1]?.toLowerCase();
  if (facts.filePaths) {
    // A Windows drive letter reads like a one-letter scheme.
    const ok = scheme === undefined || scheme.length === 1 ||
      scheme === "file" || facts.urlSchemes.includes(scheme);
    return ok
      ? null
      : `must be a file path, a file: URL or a ${facts.urlSchemes[0]}:// URL`;
  }
  if (
    scheme === undefined || !facts.urlSchemes.includes(scheme) ||
    !/^[a-z][a-z0-9+.-]*:\/\//i.test(url)
  ) {
    return `must be a ${facts.urlSchemes[0]}:// URL`;
  }
  const escape = urlEscapeProblem(url);
  if (escape !== null) return escape;
  if (engine === "postgres") {
    const params = pgUrlParamsProblem(url);
    if (params !== null) return params;
  }
  return describeTarget(engine, url) === null ? "is not a valid URL" : null;
}

/**
 * `raw` percent-decoded; where that fails (a '%' not followed by two hex
 * digits, escapes that spell no UTF-8 text), each run of escapes that
 * decodes is decoded and the rest kept as written. Never throws.
 */
export function lenientDecode(raw: string): string {
  try {
    return decodeURIComponent(raw);
  } catch {
    return raw.replace(/(?:%[0-9A-Fa-f]{2})+/g, (run) => {
      try {
        return decodeURIComponent(run);
      } catch {
        return run;
      }
    });
  }
}

/** What is wrong with the percent-escapes of `raw`, or null. */
function escapeProblem(raw: string): string | null {
  if (/%(?![0-9A-Fa-f]{2})/.test(raw)) {
    return "a '%' not followed by two hex digits";
  }
  try {
    decodeURIComponent(raw);
    return null;
  } catch {
    return "percent-escapes that spell no UTF-8 text";
  }
}

/**
 * What is wrong with the percent-escapes of a URL's user name, password,
 * host list or database name, or null. postgres.js and mysql2 throw on
 * them (URIError) and libpq refuses them ("invalid percent-encoded
 * token"): the connection cannot be used, and is named so.
 */
export function urlEscapeProblem(url: string): string | null {
  const parts = urlParts(url);
  if (parts === null) return null;
  const colon = parts.userinfo?.indexOf(":") ?? -1;
  const path = /^\/?([^?#]*)/.exec(parts.rest)?.[1] ?? "";
  const checked: [string, string][] = [
    [
      "user name",
      parts.userinfo === null
        ? ""
        : colon < 0
        ? parts.userinfo
        : parts.userinfo.slice(0, colon),
    ],
    ["password", colon < 0 ? "" : parts.userinfo!.slice(colon + 1)],
    ["host", parts.hosts],
    ["database name", path],
  ];
  for (const [part, raw] of checked) {
    const problem = escapeProblem(raw);
    if (problem !== null) {
      return `has a ${part} holding ${problem} (write a '%' itself as %25)`;
    }
  }
  return null;
}
