/**
 * Where a `CREATE PROCEDURE|FUNCTION|TRIGGER|EVENT … BEGIN … END` statement
 * ends (MySQL/MariaDB; SQLite `CREATE TRIGGER`): the `;` inside its body
 * separate the body's own statements, not the text's. The engines read it
 * the same way (`sql_yacc.yy` sp_proc_stmt lists; SQLite's
 * `trigger_cmd_list`), and the mysql client and sqlite3 shell only split a
 * script here because of a `DELIMITER` or `sqlite3_complete()`.
 *
 * It fails closed: a body that does not close, or a closing `END` followed
 * by anything but a label and `;`, is no compound statement, and the text is
 * split at every `;` as before (then refused as several statements). A
 * second statement after `END;` always counts.
 *
 * @module
 */

import type { Token } from "../token.ts";

/** `CREATE` modifiers before the kind of object (MySQL, SQLite). */
const MODIFIERS = new Set([
  "OR",
  "REPLACE",
  "AGGREGATE",
  "TEMP",
  "TEMPORARY",
]);

/**
 * Words after which an identifier stands in a routine's header: a `BEGIN`
 * right after one of them is a name (`CREATE TRIGGER begin`, `ON begin`),
 * not the body.
 */
const NAME_BEFORE = new Set([
  "PROCEDURE",
  "FUNCTION",
  "TRIGGER",
  "EVENT",
  "ON",
  "OF",
  "FOLLOWS",
  "PRECEDES",
  "EXISTS",
  "RETURNS",
  "DEFINER",
  ".",
  ",",
  "=",
  "@",
]);

/** Words after which a statement of a body starts (so `BEGIN` opens a block). */
const STATEMENT_BEFORE = new Set([
  ";",
  ":",
  "BEGIN",
  "THEN",
  "ELSE",
  "DO",
  "LOOP",
  "REPEAT",
]);

/** `END IF`, `END LOOP`, …: the ends of blocks that `BEGIN`/`CASE` do not open. */
const OTHER_BLOCK_ENDS = new Set(["IF", "LOOP", "WHILE", "REPEAT", "FOR"]);

function text(token: Token | undefined): string {
  return token?.text ?? "";
}

/**
 * If a compound statement starts at `tokens[i]` (a `CREATE` of one of
 * `kinds`), the index of its last token (its closing `END` or the label
 * after it); else -1.
 */
export function compoundEnd(
  tokens: readonly Token[],
  i: number,
  kinds: readonly string[],
): number {
  if (kinds.length === 0 || text(tokens[i]) !== "CREATE") return -1;
  const kind = kindAt(tokens, i + 1, kinds);
  if (kind < 0 || !kinds.includes(text(tokens[kind]))) return -1;
  const body = bodyStart(tokens, kind + 1);
  if (body < 0) return -1;
  let depth = 1;
  for (let k = body + 1; k < tokens.length; k++) {
    const token = tokens[k]!;
    if (token.kind !== "word") continue;
    const before = tokens[k - 1]!;
    if (
      token.text === "BEGIN" && STATEMENT_BEFORE.has(before.text) &&
      before.kind !== "string" && before.kind !== "quoted"
    ) {
      depth++;
    } else if (token.text === "CASE") {
      depth++;
    } else if (token.text === "END") {
      if (OTHER_BLOCK_ENDS.has(wordAt(tokens, k + 1))) continue;
      depth--;
      if (depth === 0) return closed(tokens, k);
    }
  }
  return -1;
}

/** The kind word after `CREATE` and its modifiers (`DEFINER = u@h` too). */
function kindAt(
  tokens: readonly Token[],
  k: number,
  kinds: readonly string[],
): number {
  while (MODIFIERS.has(wordAt(tokens, k))) k++;
  if (wordAt(tokens, k) !== "DEFINER") return k;
  if (text(tokens[k + 1]) !== "=") return -1;
  // `user`@`host`, 'user'@'host', user@host, CURRENT_USER[()]: a few tokens
  // up to the modifiers or the kind.
  const limit = k + 10;
  for (k += 2; k < limit && k < tokens.length; k++) {
    const word = wordAt(tokens, k);
    if (tokens[k]!.kind === "semicolon") return -1;
    if (MODIFIERS.has(word) || kinds.includes(word)) break;
  }
  while (MODIFIERS.has(wordAt(tokens, k))) k++;
  return k;
}

/** The body's `BEGIN`: the first at parenthesis depth 0 that is not a name. */
function bodyStart(tokens: readonly Token[], k: number): number {
  let parens = 0;
  for (; k < tokens.length; k++) {
    const token = tokens[k]!;
    if (token.kind === "semicolon" && parens === 0) return -1;
    if (token.text === "(") parens++;
    else if (token.text === ")") parens = Math.max(0, parens - 1);
    else if (
      parens === 0 && token.kind === "word" && token.text === "BEGIN" &&
      !NAME_BEFORE.has(text(tokens[k - 1])) && text(tokens[k + 1]) !== "."
    ) {
      return k;
    }
  }
  return -1;
}

/** `END` at `k` closes the body: a label may follow, then `;` or the end. */
function closed(tokens: readonly Token[], k: number): number {
  let last = k;
  const next = tokens[k + 1];
  if (next !== undefined && next.kind !== "semicolon") {
    if (next.kind !== "word" && next.kind !== "quoted") return -1;
    last = k + 1;
  }
  const after = tokens[last + 1];
  return after === undefined || after.kind === "semicolon" ? last : -1;
}

function wordAt(tokens: readonly Token[], k: number): string {
  const token = tokens[k];
  return token?.kind === "word" ? token.text : "";
}

/**
 * If a PostgreSQL `CREATE [OR REPLACE] FUNCTION|PROCEDURE … BEGIN ATOMIC …
 * END` starts at `tokens[i]` (a SQL-standard body, PostgreSQL 14+), the
 * index of its closing `END`; else -1. The body's `;` separate its own
 * statements, as psql reads them (psqlscan.l counts `BEGIN` and `CASE`
 * against `END` inside CREATE FUNCTION|PROCEDURE). Here only `BEGIN ATOMIC`
 * opens a body (a column named `begin` is no block) and `CASE` nests.
 *
 * It fails closed: a body that does not close, or an `END` followed by
 * anything but `;` or the text's end, is no such statement, and the text is
 * split at every `;` (then refused as several statements). PostgreSQL's own
 * parser then reads the whole statement: a text it reads as more than one
 * statement is refused (postgres.ts `checkStatement`).
 */
export function atomicEnd(tokens: readonly Token[], i: number): number {
  if (wordAt(tokens, i) !== "CREATE") return -1;
  let k = i + 1;
  if (wordAt(tokens, k) === "OR" && wordAt(tokens, k + 1) === "REPLACE") {
    k += 2;
  }
  const kind = wordAt(tokens, k);
  if (kind !== "FUNCTION" && kind !== "PROCEDURE") return -1;
  let body = -1;
  let parens = 0;
  for (k++; k < tokens.length && body < 0; k++) {
    const token = tokens[k]!;
    if (token.kind === "semicolon") return -1;
    if (token.text === "(") parens++;
    else if (token.text === ")") parens = Math.max(0, parens - 1);
    else if (parens === 0 && opensAtomic(tokens, k)) body = k + 1;
  }
  if (body < 0) return -1;
  let depth = 1;
  for (k = body + 1; k < tokens.length; k++) {
    const word = wordAt(tokens, k);
    if (word === "CASE" || opensAtomic(tokens, k)) depth++;
    else if (word === "END" && --depth === 0) {
      const after = tokens[k + 1];
      return after === undefined || after.kind === "semicolon" ? k : -1;
    }
  }
  return -1;
}

function opensAtomic(tokens: readonly Token[], k: number): boolean {
  return wordAt(tokens, k) === "BEGIN" && wordAt(tokens, k + 1) === "ATOMIC";
}
