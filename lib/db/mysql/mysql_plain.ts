/**
 * Which MySQL/MariaDB reads leave nothing on their session, so that they run
 * as one statement in autocommit on the read-only session (no transaction of
 * their own to begin and roll back) and the session is given back without
 * RESET CONNECTION and its set-up again (lib/db/mysql/mysql_read.ts).
 *
 * @module
 */

import { tokenize } from "../sql/lexer.ts";

/** Functions a plain read may call: they compute on their arguments only. */
const PURE_FUNCTIONS = new Set([
  "COUNT",
  "SUM",
  "MIN",
  "MAX",
  "AVG",
  "COALESCE",
  "IFNULL",
  "NULLIF",
  "IF",
  "CONCAT",
  "CONCAT_WS",
  "LOWER",
  "UPPER",
  "LENGTH",
  "CHAR_LENGTH",
  "SUBSTRING",
  "SUBSTR",
  "TRIM",
  "LEFT",
  "RIGHT",
  "REPLACE",
  "ROUND",
  "FLOOR",
  "CEIL",
  "CEILING",
  "ABS",
  "MOD",
  "CAST",
  "CONVERT",
  "GREATEST",
  "LEAST",
  "DATE",
  "YEAR",
  "MONTH",
  "DAY",
  "DATE_FORMAT",
  "MD5",
  "SHA1",
  "SHA2",
  "HEX",
  "GROUP_CONCAT",
  "JSON_EXTRACT",
  "JSON_UNQUOTE",
  "JSON_OBJECT",
  "JSON_ARRAY",
]);

/** Keywords that a parenthesis may follow without being a call. */
const PAREN_KEYWORDS = new Set([
  "SELECT",
  "FROM",
  "JOIN",
  "WHERE",
  "ON",
  "AND",
  "OR",
  "NOT",
  "IN",
  "EXISTS",
  "AS",
  "USING",
  "UNION",
  "ALL",
  "ANY",
  "SOME",
  "WHEN",
  "THEN",
  "ELSE",
  "IS",
  "BY",
  "WITH",
  "VALUES",
  "BETWEEN",
  "HAVING",
  "DISTINCT",
  "LIMIT",
]);

/** Words that make a SELECT more than a plain read of rows. */
const NOT_PLAIN_WORDS = new Set([
  "INTO",
  "FOR",
  "LOCK",
  "PROCEDURE",
  "HANDLER",
  "SET",
  "CALL",
  "DO",
  "PREPARE",
  "EXECUTE",
  "OUTFILE",
  "DUMPFILE",
]);

/**
 * Whether a read can leave nothing on its session once it ended, by
 * allowlist: one SELECT with no user or
 * system variable, no INTO or locking clause, and no call but of
 * {@linkcode PURE_FUNCTIONS}. Anything else is reset as before.
 */
export function leavesNoState(text: string): boolean {
  const tokens = tokenize(text, "mysql");
  if (tokens[0]?.kind !== "word" || tokens[0].text !== "SELECT") return false;
  for (let i = 0; i < tokens.length; i++) {
    const token = tokens[i]!;
    if (
      token.kind === "param" || token.kind === "exec_comment" ||
      token.kind === "semicolon" ||
      (token.kind !== "string" && token.text.includes("@"))
    ) return false;
    if (token.kind !== "word") continue;
    if (NOT_PLAIN_WORDS.has(token.text)) return false;
    const next = tokens[i + 1];
    if (
      next?.kind === "punct" && next.text === "(" &&
      !PURE_FUNCTIONS.has(token.text) && !PAREN_KEYWORDS.has(token.text)
    ) return false;
  }
  return true;
}
