/**
 * A saved connection's URL as a form may show it: its password (the
 * `user:password@` part), a libSQL `authToken` and a PostgreSQL client key's
 * passphrase (`sslpassword`) replaced by a placeholder,
 * so the Edit page never puts a secret in its HTML — the same rule the
 * owner's own terminal keeps (lib/db/open_driver.ts `ownerSecrets`). A URL posted
 * back with the placeholder keeps the saved secret; any other value
 * replaces it.
 *
 * @module
 */

import { hostList, isSecretParam, urlParts } from "../db/target.ts";
import { decodedName, rawQueryParts } from "../db/url_query.ts";

/** What stands for a saved secret in a URL the console shows. */
export const KEPT_SECRET = "(saved)";

/**
 * The query string's secret parameters (lib/db/target.ts `isSecretParam`:
 * `authToken`, `sslpassword`, in any percent-encoding of their names), each
 * masked and kept as a password: `[start, end)` of each value in `url`, with
 * its name as written.
 */
function secretValues(
  url: string,
): { name: string; start: number; end: number }[] {
  return rawQueryParts(url)
    .filter((part) => isSecretParam(part.name))
    .map((part) => ({
      name: part.name,
      start: part.valueStart,
      end: part.valueEnd,
    }));
}

/** `url` with each secret parameter's value replaced by `value(name, old)`. */
function replaceSecrets(
  url: string,
  value: (name: string, old: string, index: number) => string,
): string {
  let out = "";
  let from = 0;
  secretValues(url).forEach((secret, index) => {
    out += url.slice(from, secret.start) +
      value(secret.name, url.slice(secret.start, secret.end), index);
    from = secret.end;
  });
  return out + url.slice(from);
}

interface Parts {
  before: string;
  password: string;
  after: string;
}

/** `scheme://user:` · `password` · `@host…`, or null without a password. */
function passwordParts(url: string): Parts | null {
  const found = /^([A-Za-z][A-Za-z0-9+.-]*:\/\/)([^/?#]*)(.*)$/s.exec(url);
  if (found === null) return null;
  const authority = found[2]!;
  const at = authority.lastIndexOf("@");
  if (at < 0) return null;
  const userinfo = authority.slice(0, at);
  const colon = userinfo.indexOf(":");
  if (colon < 0) return null;
  return {
    before: found[1]! + userinfo.slice(0, colon + 1),
    password: userinfo.slice(colon + 1),
    after: authority.slice(at) + found[3]!,
  };
}

/**
 * `url` with its password, `authToken` and `sslpassword` shown as
 * {@linkcode KEPT_SECRET}.
 */
export function maskUrlSecrets(url: string): string {
  const parts = passwordParts(url);
  const shown = parts === null || parts.password === ""
    ? url
    : `${parts.before}${KEPT_SECRET}${parts.after}`;
  return replaceSecrets(
    shown,
    (_name, value) => value === "" ? value : KEPT_SECRET,
  );
}

/**
 * The URL to save from `posted` (a form's): where it still holds the
 * placeholder, the secret of `saved` (the URL on file) goes back in.
 */
export function restoreUrlSecrets(posted: string, saved: string): string {
  let url = posted;
  const parts = passwordParts(url);
  if (parts !== null && parts.password === KEPT_SECRET) {
    url = `${parts.before}${
      passwordParts(saved)?.password ?? ""
    }${parts.after}`;
  }
  // A placeholder takes the saved value of the same parameter (by its
  // decoded name), the first of them.
  const savedValues = new Map<string, string>();
  for (const secret of secretValues(saved)) {
    const name = decodedName(secret.name);
    if (!savedValues.has(name)) {
      savedValues.set(name, saved.slice(secret.start, secret.end));
    }
  }
  return replaceSecrets(
    url,
    (name, value) =>
      value === KEPT_SECRET ? savedValues.get(decodedName(name)) ?? "" : value,
  );
}

/**
 * The server a URL's secret is sent to: scheme, host and port, and every
 * query parameter (a driver takes them as options, and some point
 * elsewhere: libpq's `host=`, mysql2's `socketPath=`), or the whole URL
 * without its secrets where it does not parse.
 */
export function addressOf(url: string): string {
  const shown = maskUrlSecrets(url);
  // Several hosts with a port each (`h1:5432,h2:5433`) are no WHATWG URL:
  // the host list as written, the rest read from the URL of the first.
  const listed = hostList(shown, 5432);
  const hosts = listed === null ? null : urlParts(shown)?.hosts ?? null;
  try {
    const parsed = new URL(listed?.url ?? shown);
    // Every parameter counts, by allowlist of none: a driver takes them as
    // options, and some point elsewhere (`host=`, mysql2's `socketPath=`).
    // searchParams decodes the names: `ssl%70assword` is deleted too.
    parsed.searchParams.delete("authToken");
    parsed.searchParams.delete("sslpassword");
    parsed.searchParams.sort();
    const query = parsed.searchParams.toString();
    return `${parsed.protocol}//${(hosts ?? parsed.host).toLowerCase()}${
      query === "" ? "" : `?${query}`
    }`;
  } catch {
    return shown;
  }
}

/**
 * Why a saved secret may not follow an edit, or null: a secret the owner
 * did not type again goes back only to the server it was saved for, through
 * the same SSH tunnel — an edit that points the connection elsewhere asks
 * for it again, as a browser does not fill a saved password in on another
 * site.
 */
export function secretMoves(
  before: { url: string; ssh?: unknown },
  after: { url: string; ssh?: unknown },
): string | null {
  const from = addressOf(before.url);
  const to = addressOf(after.url);
  if (from !== to) {
    return `the saved secret stays with ${from}: type the password (or authToken) again to send it to ${to}, or clear it`;
  }
  if (
    JSON.stringify(before.ssh ?? null) !== JSON.stringify(after.ssh ?? null)
  ) {
    return `the saved secret stays with the SSH tunnel it was saved for: type the password again to send it through the new one, or clear it`;
  }
  return null;
}

/** Whether `posted` (a form's URL) keeps a saved secret by its placeholder. */
export function keepsUrlSecret(posted: string): boolean {
  return passwordParts(posted)?.password === KEPT_SECRET ||
    secretValues(posted).some((secret) =>
      posted.slice(secret.start, secret.end) === KEPT_SECRET
    );
}
