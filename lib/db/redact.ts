/**
 * Masking what a driver message may leak before it leaves the process:
 * the connection's own secrets, key=value secrets, URLs with credentials,
 * addresses, host:port pairs and local paths. What the client already sees
 * of the connection in `list_connections` (host, port, database) stays. At
 * most 600 characters remain.
 *
 * @module
 */

import { allUrlSchemes } from "./engines.ts";

/** The longest message that reaches a client. */
export const MAX_MESSAGE_LENGTH = 600;

const MASK = "[redacted]";

const SECRET_KEYS = [
  "host",
  "hostaddr",
  "hostname",
  "server",
  "port",
  "user",
  "username",
  "uid",
  "password",
  "passwd",
  "pwd",
  "dbname",
  "database",
  "data source",
  "account",
  "token",
  "apikey",
  "api_key",
  "secret",
  "sslcert",
  "sslkey",
  "sslrootcert",
  "sslpassword",
  "authtoken",
  "auth_token",
  "connection_string",
  "dsn",
];

const KEY_VALUE = new RegExp(
  `\\b(${
    SECRET_KEYS.map((key) => key.replace(" ", "\\s")).join("|")
  })\\s*[=:]\\s*("[^"]*"|'[^']*'|[^\\s,;)]+)`,
  "gi",
);
const URL_WITH_USERINFO = /\b[a-z][a-z0-9+.-]*:\/\/[^\s/@]*@[^\s/]*/gi;
/** A URL of any scheme a saved connection may use. */
const URL_ANY = new RegExp(
  `\\b(?:${allUrlSchemes().join("|")}):\\/\\/[^\\s'"]+`,
  "gi",
);
const IPV4 = /\b\d{1,3}(?:\.\d{1,3}){3}(?::\d+)?\b/g;
const IPV6_BRACKETED = /\[[0-9a-f:]+\](?::\d+)?/gi;
const HOST_PORT = /\b[a-z0-9-]+(?:\.[a-z0-9-]+)+:\d{2,5}\b/gi;
const LOCAL_PATH =
  /(?:[A-Za-z]:\\|\/)(?:Users|home|var|private|tmp|root|etc|opt|srv|mnt|Volumes|run|data)(?:[\\/][^\s'"`,;)]*)*/g;
const QUOTED_USER =
  /\b(user|role|for user|access denied for user)\s+("[^"]*"|'[^']*')/gi;

const OWNER = Symbol("owner");
const VISIBLE = Symbol("visible");

/**
 * Secrets with the values a client already sees of this connection in
 * `list_connections` (its host, port and database): those stay in its
 * messages, unless a secret (a password, a user, an SSH host) covers them.
 */
export function withVisible(
  secrets: string[],
  visible: readonly string[],
): string[] {
  return Object.assign(secrets, { [VISIBLE]: visible });
}

/** The visible values {@linkcode withVisible} gave `secrets` (none else). */
export function visibleOf(secrets: readonly string[]): readonly string[] {
  return (secrets as { [VISIBLE]?: readonly string[] })[VISIBLE] ?? [];
}

/**
 * Secrets for messages the owner reads at their own terminal (the CLI): only
 * these values (passwords, tokens) are masked, never the host, port,
 * database or user, which the owner needs to see to fix a connection.
 */
export function ownerOnly(secrets: string[]): readonly string[] {
  return Object.assign(secrets, { [OWNER]: true });
}

/**
 * Redact `message`. `secrets` are this connection's own values (host, user,
 * password, database, port, file path); ones shorter than 3 characters are
 * skipped so they do not mangle ordinary words. Secrets made by
 * {@linkcode ownerOnly} mask only themselves.
 *
 * @example
 * ```ts
 * import { redact } from "./redact.ts";
 *
 * redact("password authentication failed for user shopkeeper", ["shopkeeper"]);
 * // "password authentication failed for user [redacted]"
 * ```
 */
export function redact(
  message: string,
  secrets: readonly string[] = [],
): string {
  if ((secrets as { [OWNER]?: boolean })[OWNER] === true) {
    let text = message;
    for (const secret of secrets.filter((s) => s.length >= 3)) {
      text = text.replace(new RegExp(escapeRegExp(secret), "g"), MASK);
    }
    return text;
  }
  let text = message;
  const ordered = [...new Set(secrets)]
    .filter((secret) => secret.length >= 3)
    .sort((a, b) => b.length - a.length);
  for (const secret of ordered) {
    text = text.replace(new RegExp(escapeRegExp(secret), "gi"), MASK);
  }
  // What the client sees anyway is held aside from the patterns below.
  const kept: string[] = [];
  const visible = [...visibleOf(secrets)].filter((value) => value.length >= 3)
    .sort((a, b) => b.length - a.length);
  for (const value of visible) {
    text = text.replaceAll(value, () => `\uE000${kept.push(value) - 1}\uE001`);
  }
  text = text
    .replace(URL_WITH_USERINFO, MASK)
    .replace(URL_ANY, MASK)
    .replace(KEY_VALUE, (_all, key: string) => `${key}=${MASK}`)
    .replace(QUOTED_USER, (_all, word: string) => `${word} ${MASK}`)
    .replace(IPV6_BRACKETED, MASK)
    .replace(IPV4, MASK)
    .replace(HOST_PORT, MASK)
    .replace(LOCAL_PATH, MASK)
    .replace(/\uE000(\d+)\uE001/g, (_all, index: string) => kept[+index]!)
    .trim();
  if (text.length > MAX_MESSAGE_LENGTH) {
    text = text.slice(0, MAX_MESSAGE_LENGTH - 1) + "\u2026";
  }
  return text;
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}
