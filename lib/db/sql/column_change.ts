/**
 * Statements that change what rows or code already installed hold, read by
 * their words for standing_code.ts (outsider stop 60, left open there):
 *
 * - a column's type change, which rewrites every row and may round or cut
 *   each value with no USING in sight: PostgreSQL's `ALTER [COLUMN] v [SET
 *   DATA] TYPE ...` (numeric(10,2) -> numeric(5,0) rounds every value),
 *   `ALTER TYPE ... ALTER ATTRIBUTE a TYPE ...`, MariaDB's `MODIFY`,
 *   `CHANGE` (each restates the type: always a change) and `CONVERT TO
 *   CHARACTER SET` (every text column at once);
 * - `CREATE OR REPLACE FUNCTION|PROCEDURE` (and PACKAGE, AGGREGATE), which
 *   changes code that triggers, events, rules, defaults, views or other
 *   routines already call: an event calling p empties a table on its
 *   schedule once p's body is replaced.
 *
 * Words only, at the statement's top level: a word inside parentheses, a
 * string, a quoted name or a comment is never one of these.
 *
 * @module
 */

import type { Dialect, Token } from "./lexer.ts";

/** A name as the user wrote it: a word lower-cased, a quoted name as is. */
function shown(token: Token | undefined): string {
  if (token === undefined) return "?";
  return token.kind === "word" ? token.text.toLowerCase() : token.text;
}

function isWord(token: Token | undefined, text: string): boolean {
  return token?.kind === "word" && token.text === text;
}

/** A dotted name from token `j` (`s.t`, `"s"."t"`) and the token after it. */
function dottedName(
  tokens: readonly Token[],
  j: number,
): { name: string; next: number } {
  let name = shown(tokens[j]);
  j++;
  while (tokens[j]?.text === "." && tokens[j + 1] !== undefined) {
    name += `.${shown(tokens[j + 1])}`;
    j += 2;
  }
  return { name, next: j };
}

/**
 * `ALTER [ONLINE] [IGNORE] <kind> [IF EXISTS] [ONLY] name`: the kind (TABLE,
 * TYPE, ...; FOREIGN TABLE is TABLE) and the name.
 */
function altered(
  tokens: readonly Token[],
  i: number,
): { kind: string; name: string } {
  let j = i + 1;
  while (isWord(tokens[j], "ONLINE") || isWord(tokens[j], "IGNORE")) j++;
  if (isWord(tokens[j], "FOREIGN")) j++;
  const kind = tokens[j]?.kind === "word" ? tokens[j]!.text : "";
  j++;
  if (isWord(tokens[j], "IF") && isWord(tokens[j + 1], "EXISTS")) j += 2;
  if (isWord(tokens[j], "ONLY")) j++;
  return { kind, name: dottedName(tokens, j).name };
}

/** Whether `TYPE` or `SET DATA TYPE` starts at token `j`. */
function typeAt(tokens: readonly Token[], j: number): boolean {
  return isWord(tokens[j], "TYPE") ||
    (isWord(tokens[j], "SET") && isWord(tokens[j + 1], "DATA") &&
      isWord(tokens[j + 2], "TYPE"));
}

/**
 * The column a PostgreSQL `ALTER [COLUMN] v [SET DATA] TYPE` subcommand at
 * token `k` (the subcommand's ALTER) changes, or null. COLUMN is reserved
 * (a column named so is quoted), so `ALTER COLUMN type SET DEFAULT` names
 * the column `type`; ATTRIBUTE is a keyword only in `ALTER TYPE`.
 */
function pgRetyped(
  tokens: readonly Token[],
  k: number,
  ofType: boolean,
): string | null {
  let j = k + 1;
  if (
    isWord(tokens[j], "COLUMN") || (ofType && isWord(tokens[j], "ATTRIBUTE"))
  ) {
    j++;
  }
  // ALTER CONSTRAINT c ... (CONSTRAINT is reserved too): never a type.
  if (isWord(tokens[j], "CONSTRAINT")) return null;
  if (isWord(tokens[j], "IF") && isWord(tokens[j + 1], "EXISTS")) j += 2;
  return typeAt(tokens, j + 1) ? shown(tokens[j]) : null;
}

/**
 * The column a MariaDB `MODIFY [COLUMN] [IF EXISTS] v ...` or `CHANGE
 * [COLUMN] [IF EXISTS] v v2 ...` at token `k` changes. Both restate the
 * type: each is a type change, whatever type it restates.
 */
function myRetyped(tokens: readonly Token[], k: number): string {
  let j = k + 1;
  if (isWord(tokens[j], "COLUMN")) j++;
  if (isWord(tokens[j], "IF") && isWord(tokens[j + 1], "EXISTS")) j += 2;
  return shown(tokens[j]);
}

/**
 * Whether the word after `previous` is a column's name, not a subcommand:
 * MODIFY and CHANGE are not reserved (`ADD COLUMN modify int`, outsider
 * stop 62). Each of these words is reserved, so none is a table's name.
 */
function namesColumn(previous: Token | undefined): boolean {
  return previous?.kind === "word" &&
    ["ADD", "COLUMN", "EXISTS", "TO"].includes(previous.text);
}

/**
 * The columns whose type `ALTER ...` at token `i` changes, one entry per
 * subcommand; `*` for MariaDB's CONVERT TO CHARACTER SET (every text column).
 */
function retypedColumns(
  tokens: readonly Token[],
  i: number,
  dialect: Dialect,
  kind: string,
): string[] {
  const found: string[] = [];
  let depth = 0;
  for (let k = i + 1; k < tokens.length; k++) {
    const token = tokens[k]!;
    if (token.text === "(") depth++;
    else if (token.text === ")") depth--;
    if (depth !== 0 || token.kind !== "word") continue;
    if (dialect === "postgres" && token.text === "ALTER") {
      const column = pgRetyped(tokens, k, kind === "TYPE");
      if (column !== null) found.push(column);
    } else if (
      dialect === "mysql" && kind === "TABLE" &&
      (token.text === "MODIFY" || token.text === "CHANGE") &&
      !namesColumn(tokens[k - 1])
    ) {
      found.push(myRetyped(tokens, k));
    } else if (
      dialect === "mysql" && kind === "TABLE" && token.text === "CONVERT" &&
      isWord(tokens[k + 1], "TO")
    ) {
      found.push("*");
    }
  }
  return found;
}

/**
 * Why `ALTER ...` at token `i` rewrites values of every row by a type
 * change (null: it changes no column's type). Unsure is a change: MariaDB's
 * MODIFY and CHANGE ask even when they restate the same type.
 */
export function typeChange(
  tokens: readonly Token[],
  i: number,
  dialect: Dialect,
): string | null {
  if (dialect === "sqlite" || !isWord(tokens[i], "ALTER")) return null;
  const { kind, name } = altered(tokens, i);
  const columns = retypedColumns(tokens, i, dialect, kind);
  if (columns.length === 0) return null;
  if (columns.includes("*")) {
    return `it converts every text column of ${name} to another character set, which rewrites every row and may cut its values`;
  }
  const what = kind === "TYPE" ? "attribute" : "column";
  const list = columns.length === 1
    ? `${what} ${columns[0]}`
    : `${what}s ${columns.join(", ")}`;
  const of = kind === "TYPE" ? `type ${name}` : name;
  return `it changes the type of ${list} of ${of}, which rewrites every row and may round or cut its values`;
}

/** The kinds of routine whose OR REPLACE changes code already called. */
const ROUTINES = new Set(["FUNCTION", "PROCEDURE", "PACKAGE", "AGGREGATE"]);

/**
 * Why `CREATE OR REPLACE <routine>` at token `i` asks (null: it is not one):
 * `at` is where standing_code.ts found the kind of object (past a MariaDB
 * DEFINER). A plain CREATE makes a routine nothing calls yet: not asked.
 */
export function replacesRoutine(
  tokens: readonly Token[],
  i: number,
  at: number,
): string | null {
  const kind = tokens[at];
  if (
    !isWord(tokens[i], "CREATE") || !isWord(tokens[i + 1], "OR") ||
    !isWord(tokens[i + 2], "REPLACE") || kind?.kind !== "word" ||
    !ROUTINES.has(kind.text)
  ) {
    return null;
  }
  let j = at + 1;
  // MariaDB: AGGREGATE FUNCTION, PACKAGE BODY.
  if (isWord(tokens[j], "FUNCTION") || isWord(tokens[j], "BODY")) j++;
  if (isWord(tokens[j], "IF") && isWord(tokens[j + 1], "NOT")) j += 3;
  const routine = dottedName(tokens, j).name;
  return `it replaces routine ${routine}, which code already installed may call`;
}

/** Kinds whose rename leaves their callers to whatever takes the old name. */
const RENAMED = new Set(["FUNCTION", "PROCEDURE", "ROUTINE", "AGGREGATE"]);

/** Whether the word `text` stands at the top level after token `at`. */
function topWord(tokens: readonly Token[], at: number, text: string): number {
  let depth = 0;
  for (let k = at + 1; k < tokens.length; k++) {
    const token = tokens[k]!;
    if (token.text === "(") depth++;
    else if (token.text === ")") depth--;
    else if (depth === 0 && isWord(token, text)) return k;
  }
  return -1;
}

/**
 * Why `CREATE ...` or `ALTER ...` at token `i` changes what code or rows
 * already installed read (null: it does not), `at` the kind of object
 * (outsider stop 62): a view replaced or (MariaDB) redefined, which a
 * trigger may read; a routine renamed or moved, whose callers then call
 * whatever routine is made under the old name; an enum value renamed,
 * which every row holding it then reads as the new one.
 */
export function changesExisting(
  tokens: readonly Token[],
  i: number,
  at: number,
  dialect: Dialect,
): string | null {
  const kind = tokens[at];
  if (at < 0 || kind?.kind !== "word") return null;
  let j = at + 1;
  if (isWord(tokens[j], "IF") && isWord(tokens[j + 1], "EXISTS")) j += 2;
  const name = dottedName(tokens, j).name;
  if (isWord(tokens[i], "CREATE")) {
    return kind.text === "VIEW" && isWord(tokens[i + 1], "OR") &&
        isWord(tokens[i + 2], "REPLACE")
      ? `it replaces view ${name}, which code already installed may read`
      : null;
  }
  if (!isWord(tokens[i], "ALTER")) return null;
  if (
    kind.text === "VIEW" && dialect === "mysql" && topWord(tokens, at, "AS") > 0
  ) {
    return `it redefines view ${name}, which code already installed may read`;
  }
  const renamed = topWord(tokens, at, "RENAME");
  const moved = topWord(tokens, at, "SCHEMA");
  if (
    RENAMED.has(kind.text) &&
    ((renamed > 0 && isWord(tokens[renamed + 1], "TO")) ||
      (moved > 0 && isWord(tokens[moved - 1], "SET")))
  ) {
    return `it renames or moves ${kind.text.toLowerCase()} ${name}, which code already installed may call by its old name (a routine made under that name later runs in its place)`;
  }
  // Any other change of a routine changes how the code that calls it runs:
  // `SET search_path` made a trigger's unqualified call reach another
  // routine (outsider stop 63); SECURITY DEFINER, a volatility label.
  if (RENAMED.has(kind.text) && topWord(tokens, at, "OWNER") < 0) {
    return `it changes ${kind.text.toLowerCase()} ${name} (how it runs), which code already installed may call`;
  }
  // A trigger or rule switched on runs on later writes, as one created.
  const enables = topWord(tokens, at, "ENABLE");
  if (kind.text === "TABLE" && enables > 0) {
    let k = enables + 1;
    if (isWord(tokens[k], "ALWAYS") || isWord(tokens[k], "REPLICA")) k++;
    if (isWord(tokens[k], "TRIGGER") || isWord(tokens[k], "RULE")) {
      return `it enables a ${
        tokens[k]!.text.toLowerCase()
      } on ${name}, which runs on later writes to its table`;
    }
  }
  if (
    kind.text === "TYPE" && dialect === "postgres" && renamed > 0 &&
    isWord(tokens[renamed + 1], "VALUE")
  ) {
    return `it renames a value of type ${name}, which every row holding it then reads as the new value`;
  }
  return null;
}
