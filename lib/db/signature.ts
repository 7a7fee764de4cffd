/**
 * Every AI statement signed (docs/security.md "Signed statements"): a DBA
 * finds dbport's statements in `pg_stat_activity` or the process list by a
 * leading comment `/* dbport client=<name> token=<token> call=<id> *\/`
 * (the same call id is in the activity log) and, on PostgreSQL, by the
 * session's `application_name` `dbport/<client>` while the statement's
 * transaction lasts. The comment is added by the driver as it sends the
 * statement, after every check: what runs is the checked text itself.
 *
 * @module
 */

/** Who sent a statement. */
export interface Signature {
  /** The MCP client's name (`clientInfo.name`), or "unknown". */
  client: string;
  /** The token's name, "bridge" or "anonymous". */
  token: string;
  /** A short id of the call, also in the activity log. */
  call: string;
}

/**
 * A name made safe for a comment and a setting: letters, digits and
 * `. _ : @ + -` kept, anything else (`*`, `/`, quotes, spaces, newlines,
 * non-ASCII) becomes `_`, at most 48 characters. A name can then neither
 * close the comment nor the setting's literal.
 */
export function signatureName(name: string): string {
  const safe = name.replace(/[^A-Za-z0-9._:@+-]/g, "_").slice(0, 48);
  return safe === "" ? "unknown" : safe;
}

/** The leading comment (with its trailing space) of a signed statement. */
export function signatureComment(sign: Signature): string {
  return `/* dbport client=${signatureName(sign.client)} token=${
    signatureName(sign.token)
  } call=${signatureName(sign.call)} */ `;
}

/** `text` as sent: the comment first when it is signed. */
export function signed(text: string, sign: Signature | undefined): string {
  return sign === undefined ? text : signatureComment(sign) + text;
}

/** PostgreSQL's `application_name` for a signed use: `dbport/<client>`. */
export function applicationName(sign: Signature): string {
  return `dbport/${signatureName(sign.client)}`;
}

/**
 * `; SET LOCAL application_name = '…'` for a transaction; unsigned, the
 * session's startup name (`DEFAULT`): a lean read leaves its client's name
 * set on the session (pg_lean.ts), and an unsigned statement after it on
 * that session (explain_query's) would run under that other client's name.
 * `SESSION` for a statement that runs outside a transaction (VACUUM), on a
 * session whose clean-up (`DISCARD ALL`) resets the name.
 */
export function setApplicationName(
  sign: Signature | undefined,
  scope: "LOCAL" | "SESSION" = "LOCAL",
): string {
  // signatureName leaves no quote or backslash to escape.
  const name = sign === undefined ? "DEFAULT" : `'${applicationName(sign)}'`;
  return `; SET ${scope} application_name = ${name}`;
}

/** Random words drawn 256 at a time: one call id each. */
const RANDOM = new Uint32Array(256);
let drawn = RANDOM.length;

/** A new short call id: 8 hex digits. */
export function newCallId(): string {
  if (drawn === RANDOM.length) {
    crypto.getRandomValues(RANDOM);
    drawn = 0;
  }
  return RANDOM[drawn++]!.toString(16).padStart(8, "0");
}
