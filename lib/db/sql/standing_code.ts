/**
 * Statements whose danger is not in a WHERE they lack (classifier.ts): code
 * a statement installs to run later - a trigger or rule on other writes, an
 * event on a schedule - which no count of this statement's rows can judge
 * (outsider stop 59: `CREATE EVENT ... DO DELETE FROM t WHERE true`, a
 * trigger that empties another table at the user's next INSERT), and a
 * table change that rewrites or removes rows (MariaDB's `ALTER IGNORE
 * TABLE ... ADD UNIQUE`, PostgreSQL's `ALTER ... TYPE ... USING`, any column
 * type change and `CREATE OR REPLACE` of a routine: column_change.ts). Each
 * asks the user, as a DELETE without WHERE does.
 *
 * @module
 */

import {
  changesExisting,
  replacesRoutine,
  typeChange,
} from "./column_change.ts";
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
  "PACKAGE",
  "ROUTINE",
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
  const at = kindIndex(tokens, i + 1);
  const kind = at < 0 ? undefined : tokens[at]!.text;
  if (kind !== undefined && (lead === "CREATE" || kind === "EVENT")) {
    const why = STANDING.get(kind);
    if (why !== undefined) return why;
  }
  const replaced = replacesRoutine(tokens, i, at) ??
    changesExisting(tokens, i, at, dialect);
  if (replaced !== null) return replaced;
  // PostgreSQL's CREATE SCHEMA holds CREATE statements of its own.
  if (lead === "CREATE" && kind === "SCHEMA") {
    for (let j = i + 1; j < tokens.length; j++) {
      if (tokens[j]!.kind !== "word" || tokens[j]!.text !== "CREATE") continue;
      const inner = standingDanger(tokens, j, dialect);
      if (inner !== null) return inner;
    }
  }
  if (lead !== "ALTER") return null;
  if (dialect === "mysql" && hasWords(tokens, i, "EXCHANGE", "PARTITION")) {
    return "ALTER TABLE ... EXCHANGE PARTITION swaps every row of a partition and a table";
  }
  if (tokens[i + 1]?.text === "IGNORE" && dialect === "mysql") {
    return "ALTER IGNORE TABLE deletes the rows a new unique key would refuse";
  }
  if (dialect === "postgres" && rewritesColumn(tokens, i)) {
    return "ALTER ... TYPE ... USING rewrites a column of every row";
  }
  return typeChange(tokens, i, dialect);
}

/**
 * Where the kind of object named from token `j` on is (-1: none): the first
 * of OBJECTS within KIND_WITHIN words, past a MariaDB `DEFINER = user@host`
 * (whose user may be named `type` or `role`, outsider stop 60).
 */
function kindIndex(tokens: readonly Token[], j: number): number {
  const end = Math.min(tokens.length, j + KIND_WITHIN);
  for (; j < end; j++) {
    const token = tokens[j]!;
    if (token.kind === "word" && token.text === "DEFINER") {
      j = pastDefiner(tokens, j) - 1;
      continue;
    }
    if (token.kind === "word" && OBJECTS.has(token.text)) return j;
  }
  return -1;
}

/** The token after `DEFINER = name[@host]` or `DEFINER = CURRENT_USER[()]`. */
function pastDefiner(tokens: readonly Token[], j: number): number {
  j++; // DEFINER
  if (tokens[j]?.text === "=") j++;
  j++; // the user, or CURRENT_USER / CURRENT_ROLE
  if (tokens[j]?.text === "(" && tokens[j + 1]?.text === ")") j += 2;
  // `user@host`: the lexer may read `@host` as one token or two.
  if (tokens[j]?.text === "@") j += 2;
  else if (tokens[j]?.text.startsWith("@")) j++;
  return j;
}

/** Whether the words `a` then `b` follow each other after token `i`. */
function hasWords(
  tokens: readonly Token[],
  i: number,
  a: string,
  b: string,
): boolean {
  return tokens.some((token, k) =>
    k > i && token.text === a && tokens[k + 1]?.text === b
  );
}

/** `ALTER ... TYPE ... USING <expression>` at the top level. */
function rewritesColumn(tokens: readonly Token[], i: number): boolean {
  let typed = false;
  let depth = 0;
  for (const token of tokens.slice(i)) {
    if (token.text === "(") depth++;
    else if (token.text === ")") depth--;
    // Each subcommand of one ALTER TABLE apart (EXCLUDE USING btree).
    if (depth === 0 && token.text === ",") typed = false;
    if (depth !== 0 || token.kind !== "word") continue;
    if (token.text === "TYPE") typed = true;
    else if (token.text === "USING" && typed) return true;
    else if (token.text === "ALTER") typed = false;
  }
  return false;
}
