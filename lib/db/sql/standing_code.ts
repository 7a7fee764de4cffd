/**
 * Statements whose danger is not in a WHERE they lack (classifier.ts): code
 * a statement installs to run later - a trigger or rule on other writes, an
 * event on a schedule - which no count of this statement's rows can judge
 * (outsider stop 59: `CREATE EVENT ... DO DELETE FROM t WHERE true`, a
 * trigger that empties another table at the user's next INSERT), and a
 * table change that rewrites or removes rows (MariaDB's `ALTER IGNORE
 * TABLE ... ADD UNIQUE`, PostgreSQL's `ALTER ... TYPE ... USING`). Each asks the
 * user, as a DELETE without WHERE does.
 *
 * @module
 */

import type { Dialect, Token } from "./lexer.ts";

/** The kinds of object whose code runs later, outside the call. */
const STANDING = new Map([
  ["TRIGGER", "it installs a trigger, which runs on later writes to its table"],
  ["RULE", "it installs a rule, which rewrites later statements on its table"],
  ["EVENT", "it installs an event, which runs on a schedule"],
]);

/** Kinds of object CREATE names: the first of these is what it creates. */
const OBJECTS = new Set([
  ...STANDING.keys(),
  "TABLE",
  "VIEW",
  "INDEX",
  "FUNCTION",
  "PROCEDURE",
  "SCHEMA",
  "DATABASE",
  "SEQUENCE",
  "TYPE",
  "DOMAIN",
  "EXTENSION",
  "USER",
  "ROLE",
  "SERVER",
  "POLICY",
  "AGGREGATE",
  "OPERATOR",
  "COLLATION",
]);

/** How far after CREATE or ALTER the kind of object is looked for. */
const KIND_WITHIN = 12;

/**
 * Why `CREATE ...` or `ALTER ...` at token `i` asks the user whatever its rows
 * (null: it does not): standing code, or rows rewritten by the change.
 */
export function standingDanger(
  tokens: readonly Token[],
  i: number,
  dialect: Dialect,
): string | null {
  const lead = tokens[i]?.text;
  const kind = tokens.slice(i + 1, i + 1 + KIND_WITHIN)
    .find((token) => token.kind === "word" && OBJECTS.has(token.text))?.text;
  if (kind !== undefined && (lead === "CREATE" || kind === "EVENT")) {
    const why = STANDING.get(kind);
    if (why !== undefined) return why;
  }
  if (lead !== "ALTER") return null;
  if (tokens[i + 1]?.text === "IGNORE" && dialect === "mysql") {
    return "ALTER IGNORE TABLE deletes the rows a new unique key would refuse";
  }
  if (dialect === "postgres" && rewritesColumn(tokens, i)) {
    return "ALTER ... TYPE ... USING rewrites a column of every row";
  }
  return null;
}

/** `ALTER ... TYPE ... USING <expression>` at the top level. */
function rewritesColumn(tokens: readonly Token[], i: number): boolean {
  let typed = false;
  let depth = 0;
  for (const token of tokens.slice(i)) {
    if (token.text === "(") depth++;
    else if (token.text === ")") depth--;
    if (depth !== 0 || token.kind !== "word") continue;
    if (token.text === "TYPE") typed = true;
    else if (token.text === "USING" && typed) return true;
    else if (token.text === "ALTER") typed = false;
  }
  return false;
}
