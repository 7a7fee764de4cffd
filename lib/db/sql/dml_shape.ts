/**
 * A MariaDB or SQLite write's shape as its tokens give it (lexer.ts): its
 * kind, the table it changes, whether it names several tables or returns
 * rows of its own, and why its choice of rows may differ from run to run
 * (chance, the clock, LIMIT without ORDER BY). What a write preview needs to
 * count, bind and explain it (docs/security.md "What the hold compares").
 * PostgreSQL's comes from its parse tree (pg_changes.ts).
 *
 * @module
 */

import { type Dialect, type Token, tokenize } from "./lexer.ts";

/** What the tokens say of one write. */
export interface DmlShape {
  keyword: "INSERT" | "UPDATE" | "DELETE" | "REPLACE" | null;
  /** The table it changes, unquoted; null when not one plain name. */
  target: { schema: string | null; name: string } | null;
  /** It says RETURNING itself. */
  returning: boolean;
  /** A multi-table UPDATE or DELETE (MariaDB: `UPDATE a, b`, `UPDATE a JOIN b`, `DELETE a FROM …`, `DELETE FROM a USING …`). */
  multiTable: boolean;
  /** It has an ON DUPLICATE KEY UPDATE or ON CONFLICT … DO UPDATE clause. */
  upsert: boolean;
  /** A conflicting row is deleted first: REPLACE, SQLite's INSERT|UPDATE OR REPLACE. */
  replaces: boolean;
  /** Why the statement's row choice may differ from run to run, or null. */
  choice: string | null;
  /** UPDATE: the columns it sets when a new value varies from run to run. */
  varyingSet: string[];
}

const WRITES = new Set(["INSERT", "UPDATE", "DELETE", "REPLACE"]);
/** What follows a name, never a write's keyword: `replace AS (`, `replace(`. */
const NOT_A_KEYWORD_BEFORE = new Set(["AS", "(", ",", ")", "."]);
const MODIFIERS = new Set([
  "LOW_PRIORITY",
  "DELAYED",
  "HIGH_PRIORITY",
  "IGNORE",
  "QUICK",
]);
const JOINS = new Set([
  "JOIN",
  "INNER",
  "LEFT",
  "RIGHT",
  "CROSS",
  "NATURAL",
  "STRAIGHT_JOIN",
]);

/** Functions whose result differs from call to call or moment to moment. */
const CHANCE = new Set([
  "RAND",
  "RANDOM",
  "RANDOMBLOB",
  "UUID",
  "UUID_SHORT",
  "SYS_GUID",
  "NOW",
  "SYSDATE",
  "CURTIME",
  "CURDATE",
  "CURRENT_TIMESTAMP",
  "CURRENT_DATE",
  "CURRENT_TIME",
  "LOCALTIME",
  "LOCALTIMESTAMP",
  "UTC_TIMESTAMP",
  "UTC_DATE",
  "UTC_TIME",
  "UNIX_TIMESTAMP",
]);

function unquote(token: Token, text: string): string {
  if (token.kind !== "quoted") return text.slice(token.start, token.end);
  const quote = token.text[0]!;
  const close = quote === "[" ? "]" : quote;
  return token.text.slice(1, -1).replaceAll(close + close, close);
}

/** Read the shape of one write statement in `dialect`. */
export function dmlShape(text: string, dialect: Dialect): DmlShape {
  const tokens = tokenize(text, dialect).filter((t) => t.kind !== "semicolon");
  const shape: DmlShape = {
    keyword: null,
    target: null,
    returning: false,
    multiTable: false,
    upsert: false,
    replaces: false,
    choice: null,
    varyingSet: [],
  };
  // The first write keyword outside parentheses (after a WITH … list).
  let depth = 0;
  let at = -1;
  for (let i = 0; i < tokens.length; i++) {
    const token = tokens[i]!;
    if (token.text === "(") depth++;
    else if (token.text === ")") depth--;
    else if (
      depth === 0 && token.kind === "word" && WRITES.has(token.text) &&
      // A CTE or function of the name (`WITH replace AS (...)`, `replace(...)`).
      !NOT_A_KEYWORD_BEFORE.has(tokens[i + 1]?.text ?? "")
    ) {
      at = i;
      break;
    }
  }
  if (at < 0) return shape;
  const keyword = tokens[at]!.text as DmlShape["keyword"] & string;
  shape.keyword = keyword;
  let i = at + 1;
  const word = (offset = 0) => {
    const token = tokens[i + offset];
    return token?.kind === "word" ? token.text : "";
  };
  shape.replaces = keyword === "REPLACE" ||
    ((keyword === "INSERT" || keyword === "UPDATE") && word() === "OR" &&
      word(1) === "REPLACE");
  if (word() === "OR") i += 2; // SQLite: OR REPLACE, OR IGNORE …
  while (MODIFIERS.has(word())) i++;
  if (keyword === "DELETE") {
    if (word() !== "FROM") shape.multiTable = true;
    else i++;
  } else if (keyword !== "UPDATE" && word() === "INTO") {
    i++;
  }
  const name = readName(tokens, i, text);
  if (name !== null) {
    shape.target = name.name;
    i = name.next;
  }
  // What follows the target at the top level.
  depth = 0;
  let setAt = -1;
  let valuesAt = -1;
  for (let j = i; j < tokens.length; j++) {
    const token = tokens[j]!;
    if (token.text === "(") depth++;
    else if (token.text === ")") depth--;
    if (depth !== 0) continue;
    const text = token.text;
    if (text === "RETURNING") shape.returning = true;
    if (text === "SET" && setAt < 0) setAt = j;
    if ((text === "VALUES" || text === "VALUE") && valuesAt < 0) valuesAt = j;

    if (
      text === "DUPLICATE" ||
      (text === "DO" && tokens[j + 1]?.text === "UPDATE")
    ) {
      shape.upsert = true;
    }
    if (
      keyword === "UPDATE" && setAt < 0 && (text === "," || JOINS.has(text))
    ) {
      shape.multiTable = true;
    }
    if (
      keyword === "DELETE" &&
      (text === "USING" || text === "," || JOINS.has(text))
    ) {
      shape.multiTable = true;
    }
  }
  shape.choice = rowChoice(tokens, keyword, setAt, valuesAt);
  if (keyword === "UPDATE" && setAt >= 0) {
    shape.varyingSet = varyingSet(tokens, setAt, text);
  }
  if (shape.multiTable) shape.target = null;
  return shape;
}

/** `name` or `schema.name` from `i`, and where it ends. */
function readName(
  tokens: Token[],
  i: number,
  text: string,
): { name: { schema: string | null; name: string }; next: number } | null {
  const first = tokens[i];
  if (
    first === undefined || (first.kind !== "word" && first.kind !== "quoted")
  ) {
    return null;
  }
  if (tokens[i + 1]?.text === ".") {
    const second = tokens[i + 2];
    if (
      second === undefined ||
      (second.kind !== "word" && second.kind !== "quoted")
    ) {
      return null;
    }
    return {
      name: { schema: unquote(first, text), name: unquote(second, text) },
      next: i + 3,
    };
  }
  return { name: { schema: null, name: unquote(first, text) }, next: i + 1 };
}

/**
 * Why the rows chosen may differ from run to run: chance or the clock
 * (outside an UPDATE's SET list and an INSERT's VALUES), SQLite's `'now'`,
 * LIMIT without ORDER BY at the same level.
 */
function rowChoice(
  tokens: Token[],
  keyword: string,
  setAt: number,
  valuesAt: number,
): string | null {
  const found = new Set<string>();
  const ordered: boolean[] = [false];
  let depth = 0;
  let skipping = false;
  for (let j = 0; j < tokens.length; j++) {
    const token = tokens[j]!;
    if (token.text === "(") {
      depth++;
      ordered.push(false);
    } else if (token.text === ")") {
      depth--;
      ordered.pop();
    }
    if (depth === 0 && token.kind === "word") {
      if (j === setAt && keyword === "UPDATE") skipping = true;
      else if (j === valuesAt && keyword !== "UPDATE") skipping = true;
      else if (
        ["WHERE", "ORDER", "LIMIT", "FROM", "RETURNING", "ON"].includes(
          token.text,
        )
      ) {
        skipping = false;
      }
    }
    if (skipping) continue;
    if (token.kind === "word") {
      if (CHANCE.has(token.text)) found.add(token.text.toLowerCase());
      if (token.text === "ORDER") ordered[ordered.length - 1] = true;
      if (token.text === "LIMIT" && !ordered[ordered.length - 1]) {
        found.add("LIMIT without ORDER BY");
      }
    }
    if (token.kind === "string" && /^'now'$/i.test(token.text)) {
      found.add("'now'");
    }
  }
  return found.size === 0
    ? null
    : `which rows it changes may differ from run to run (${
      [...found].join(", ")
    })`;
}

/** The columns an UPDATE's SET list assigns, when one of its values varies. */
function varyingSet(tokens: Token[], setAt: number, text: string): string[] {
  const columns: string[] = [];
  let varies = false;
  let depth = 0;
  for (let j = setAt + 1; j < tokens.length; j++) {
    const token = tokens[j]!;
    if (token.text === "(") depth++;
    else if (token.text === ")") depth--;
    if (
      depth === 0 && token.kind === "word" &&
      ["WHERE", "ORDER", "LIMIT", "RETURNING", "FROM"].includes(token.text)
    ) break;
    if (token.kind === "word" && CHANCE.has(token.text)) varies = true;
    if (token.kind === "string" && /^'now'$/i.test(token.text)) varies = true;
    const next = tokens[j + 1];
    if (
      depth === 0 && next?.text === "=" &&
      (token.kind === "word" || token.kind === "quoted")
    ) columns.push(unquote(token, text));
  }
  return varies ? columns : [];
}
