/**
 * A SQL lexer per engine dialect: strings, quoted identifiers, comments and
 * dollar quotes are read as tokens, never guessed with a regular expression,
 * so a `;` or a keyword inside a string or a comment is never taken for code.
 *
 * Each rule follows the engine's own scanner (docs/security.md "The lexer"):
 * PostgreSQL `scan.l`, MySQL/MariaDB `sql_lex.cc`, SQLite `tokenize.c`. What
 * the lexer cannot place with certainty (an unterminated quote or comment, a
 * character no engine accepts outside a string) is reported in `uncertain`,
 * and the classifier treats such a statement as a write, never as a read.
 *
 * @module
 */

import { atomicEnd, compoundEnd } from "./compound.ts";
import { type Engine, ENGINES, type LexicalRules } from "../engines.ts";
import type { Token, TokenKind } from "../token.ts";

/** The SQL dialects dbport speaks: one per engine. */
export type Dialect = Engine;

export type { Token, TokenKind };

/** Tokens, and what could not be read with certainty. */
export interface Lexed {
  tokens: Token[];
  /** Why the text cannot be read with certainty; empty when it can. */
  uncertain: string[];
}

// Identifier characters of all three engines: ASCII letters, `_`, and every
// character beyond ASCII (PostgreSQL's \200-\377 bytes of UTF-8, MySQL's
// multi-byte characters, SQLite's IdChar >= 0x80).
const WORD_START = /[A-Za-z_\u0080-\uffff]/;
const WORD_PART = /[A-Za-z0-9_$\u0080-\uffff]/;
const DIGIT = /[0-9]/;
/** Whitespace as all three scanners define it: space, \t \n \v \f \r. */
const SPACE = /[ \t\n\v\f\r]/;
/** Any other C0 control character or DEL (matched on purpose). */
// deno-lint-ignore no-control-regex
const CONTROL = /[\x00-\x1f\x7f]/;

/** Split SQL text into tokens (see {@linkcode lex} for the uncertainties). */
export function tokenize(sql: string, dialect: Dialect): Token[] {
  return lex(sql, dialect).tokens;
}

/** The lexer's place in the text and what it has read so far. */
interface Scan {
  readonly sql: string;
  readonly rules: LexicalRules;
  readonly tokens: Token[];
  readonly uncertain: string[];
  /** The next character to read. */
  i: number;
}

/** Split SQL text into tokens, noting what cannot be read with certainty. */
export function lex(sql: string, dialect: Dialect): Lexed {
  const s: Scan = {
    sql,
    rules: ENGINES[dialect].lexical,
    tokens: [],
    uncertain: [],
    i: 0,
  };
  // Every pass must move on: a rule that reads nothing (a stray `:` at the
  // end, say) stops the lexer with an error instead of spinning forever.
  let previous = -1;
  while (s.i < sql.length) {
    if (s.i <= previous) {
      throw new Error(`the SQL lexer stalled at character ${s.i + 1}`);
    }
    previous = s.i;
    const c = sql.charAt(s.i);
    const next = sql[s.i + 1];
    // The readers in order: each reads one token (or a comment) at `s.i`,
    // or leaves it to the next.
    if (
      !(readSpaceOrComment(s, c, next) || readQuoted(s, c, next) ||
        readDollar(s, c) || readNumberOrWord(s, c, next) ||
        readParameter(s, c, next))
    ) readOther(s, c);
  }
  return { tokens: s.tokens, uncertain: s.uncertain };
}

function push(
  s: Scan,
  kind: TokenKind,
  start: number,
  end: number,
  text?: string,
): void {
  s.tokens.push({ kind, start, end, text: text ?? s.sql.slice(start, end) });
}

/**
 * Where a run opened at `start` ends: `end`, or where `end` is -1 (it never
 * closes) the end of the text, noted as uncertain.
 */
function closedAt(s: Scan, end: number, what: string, start: number): number {
  if (end >= 0) return end;
  s.uncertain.push(`${what} opened at character ${start + 1} never closes`);
  return s.sql.length;
}

/** Whitespace, a line comment, or a block comment (kept when executable). */
function readSpaceOrComment(s: Scan, c: string, next?: string): boolean {
  const { sql, rules } = s;
  if (SPACE.test(c)) {
    s.i++;
    return true;
  }
  if (isLineComment(sql, s.i, rules)) {
    s.i = lineEnd(sql, s.i, rules);
    return true;
  }
  if (c !== "/" || next !== "*") return false;
  const start = s.i;
  // MySQL `/*! */`, MariaDB `/*M! */` and optimizer hints `/*+ */`.
  const executable = rules.executableComments &&
    (sql[start + 2] === "!" || sql[start + 2] === "+" ||
      (sql[start + 2] === "M" && sql[start + 3] === "!"));
  s.i = closedAt(
    s,
    skipBlockComment(sql, start, rules.nestedBlockComments),
    "a /* comment",
    start,
  );
  if (executable) push(s, "exec_comment", start, s.i);
  return true;
}

/** A string or a quoted identifier: '…', E'…', "…", `…`, […]. */
function readQuoted(s: Scan, c: string, next?: string): boolean {
  const { sql, rules } = s;
  const start = s.i;
  if (c === "'") {
    // Backslash escapes in '...' on MySQL only (PostgreSQL: E'...' below;
    // the PostgreSQL driver keeps standard_conforming_strings on).
    const end = skipQuoted(sql, start, "'", rules.backslashEscapes);
    s.i = closedAt(s, end, "a string", start);
    push(s, "string", start, s.i);
  } else if (rules.escapeStrings && (c === "e" || c === "E") && next === "'") {
    const end = skipQuoted(sql, start + 1, "'", true);
    s.i = closedAt(s, end, "an E'' string", start);
    push(s, "string", start, s.i);
  } else if (c === '"') {
    // MySQL (the driver keeps ANSI_QUOTES off) reads "..." as a string.
    const end = skipQuoted(sql, start, '"', rules.backslashEscapes);
    s.i = closedAt(s, end, "a double quote", start);
    push(s, rules.doubleQuoted === "string" ? "string" : "quoted", start, s.i);
  } else if (c === "`" && rules.backtickIdentifiers) {
    const end = skipQuoted(sql, start, "`", false);
    s.i = closedAt(s, end, "a backtick", start);
    push(s, "quoted", start, s.i);
  } else if (c === "[" && rules.bracketIdentifiers) {
    const close = sql.indexOf("]", start + 1);
    s.i = closedAt(s, close === -1 ? -1 : close + 1, "a [ name", start);
    push(s, "quoted", start, s.i);
  } else return false;
  return true;
}

/** PostgreSQL's `$tag$…$tag$` string or `$1` parameter. */
function readDollar(s: Scan, c: string): boolean {
  if (c !== "$" || !s.rules.dollarQuotes) return false;
  const { sql } = s;
  const start = s.i;
  // scan.l: dolqdelim \$({dolq_start}{dolq_cont}*)?\$ where dolq_start
  // is [A-Za-z\200-\377_] — letters beyond ASCII start a tag too.
  const tag = /^\$(?:[A-Za-z_\u0080-\uffff][A-Za-z0-9_\u0080-\uffff]*)?\$/
    .exec(sql.slice(start, start + 256));
  if (tag !== null) {
    const close = sql.indexOf(tag[0], start + tag[0].length);
    s.i = closedAt(
      s,
      close === -1 ? -1 : close + tag[0].length,
      `the dollar quote ${tag[0]}`,
      start,
    );
    push(s, "string", start, s.i);
    return true;
  }
  const param = /^\$[0-9]+/.exec(sql.slice(start, start + 32));
  if (param === null) return false;
  push(s, "param", start, start + param[0].length);
  s.i += param[0].length;
  return true;
}

/** A `;`, a number (its exponent's sign included) or a word. */
function readNumberOrWord(s: Scan, c: string, next?: string): boolean {
  const { sql } = s;
  const start = s.i;
  if (c === ";") {
    push(s, "semicolon", start, start + 1);
    s.i++;
    return true;
  }
  if (DIGIT.test(c) || (c === "." && DIGIT.test(next ?? ""))) {
    let i = start;
    while (i < sql.length && /[0-9A-Za-z_.]/.test(sql.charAt(i))) {
      // An exponent's sign belongs to the number.
      if (/[eE]/.test(sql.charAt(i)) && /[+-]/.test(sql[i + 1] ?? "")) i++;
      i++;
    }
    s.i = i;
    push(s, "number", start, i);
    return true;
  }
  if (!WORD_START.test(c)) return false;
  let i = start;
  while (i < sql.length && WORD_PART.test(sql.charAt(i))) i++;
  s.i = i;
  push(s, "word", start, i, sql.slice(start, i).toUpperCase());
  return true;
}

/** A SQLite variable, or a named parameter or MySQL user variable. */
function readParameter(s: Scan, c: string, next?: string): boolean {
  const { sql, rules } = s;
  const start = s.i;
  if (rules.parameters === "sqlite" && "?:@$#".includes(c)) {
    const end = sqliteVariable(sql, start);
    if (end > start) {
      push(s, "param", start, end);
      s.i = end;
      return true;
    }
  }
  if (
    rules.parameters === "named" && (c === "?" || c === ":" || c === "@") &&
    WORD_START.test(next ?? "")
  ) {
    // Named parameters and MySQL user variables read as one token.
    let i = start + 1;
    while (i < sql.length && WORD_PART.test(sql.charAt(i))) i++;
    push(s, "param", start, i);
    s.i = i;
    return true;
  }
  return false;
}

/** Any other character: one punctuation token (a control character is noted). */
function readOther(s: Scan, c: string): void {
  if (CONTROL.test(c)) {
    s.uncertain.push(
      `a control character U+${
        c.charCodeAt(0).toString(16).toUpperCase().padStart(4, "0")
      } at character ${s.i + 1}`,
    );
  }
  push(s, "punct", s.i, s.i + 1);
  s.i++;
}

/**
 * Whether a line comment starts at `i`. PostgreSQL and SQLite: `--`.
 * MySQL/MariaDB: `#`, or `--` followed by whitespace, a control character or
 * the end of the text (`sql_lex.cc`: my_isspace || my_iscntrl).
 */
function isLineComment(
  sql: string,
  i: number,
  rules: LexicalRules,
): boolean {
  const c = sql[i];
  if (rules.hashAndSpacedDashComments) {
    if (c === "#") return true;
    if (c !== "-" || sql[i + 1] !== "-") return false;
    const after = sql[i + 2];
    return after === undefined || SPACE.test(after) || CONTROL.test(after);
  }
  return c === "-" && sql[i + 1] === "-";
}

/** Where a line comment at `i` ends: past `\n` (PostgreSQL: `\n` or `\r`). */
function lineEnd(sql: string, i: number, rules: LexicalRules): number {
  for (let k = i; k < sql.length; k++) {
    const c = sql[k];
    if (c === "\n" || (c === "\r" && rules.carriageReturnEndsLineComment)) {
      return k + 1;
    }
  }
  return sql.length;
}

/**
 * The end of a SQLite variable at `i` (`tokenize.c`): `?NNN`, or `:`, `@`,
 * `$`, `#` with identifier characters, where a Tcl suffix `(...)` (to the
 * first `)` or whitespace) and `::` belong to it. `i` when it is none.
 */
function sqliteVariable(sql: string, i: number): number {
  const c = sql[i];
  let k = i + 1;
  if (c === "?") {
    while (k < sql.length && DIGIT.test(sql.charAt(k))) k++;
    return k;
  }
  let n = 0;
  for (; k < sql.length; k++) {
    const ch = sql.charAt(k);
    if (WORD_PART.test(ch)) {
      n++;
    } else if (ch === "(" && n > 0) {
      k++;
      while (k < sql.length && !SPACE.test(sql.charAt(k)) && sql[k] !== ")") {
        k++;
      }
      if (sql[k] === ")") k++;
      return k;
    } else if (ch === ":" && sql[k + 1] === ":") {
      k++;
    } else {
      break;
    }
  }
  return n === 0 ? i : k;
}

/** The end of a block comment at `i` (nested on PostgreSQL); -1 if unclosed. */
function skipBlockComment(sql: string, i: number, nested: boolean): number {
  let depth = 0;
  while (i < sql.length) {
    if (sql[i] === "/" && sql[i + 1] === "*") {
      depth++;
      i += 2;
      if (!nested && depth > 1) depth = 1;
      continue;
    }
    if (sql[i] === "*" && sql[i + 1] === "/") {
      depth--;
      i += 2;
      if (depth === 0) return i;
      continue;
    }
    i++;
  }
  return -1;
}

/** The end of a quoted run at `i` (a doubled quote escapes); -1 if unclosed. */
function skipQuoted(
  sql: string,
  i: number,
  quote: string,
  backslashEscapes: boolean,
): number {
  i++;
  while (i < sql.length) {
    const c = sql[i];
    if (backslashEscapes && c === "\\") {
      i += 2;
      continue;
    }
    if (c === quote) {
      if (sql[i + 1] === quote) {
        i += 2;
        continue;
      }
      return i + 1;
    }
    i++;
  }
  return -1;
}

/** One statement: its tokens and its text without trailing `;` or comments. */
export interface Statement {
  tokens: Token[];
  text: string;
}

/** Statements, and what could not be read with certainty in the whole text. */
export interface Split {
  statements: Statement[];
  uncertain: string[];
}

/**
 * Split into statements; empty ones (a lone `;`, only comments) are dropped.
 *
 * @example A `;` inside a string or a comment ends nothing
 * ```ts
 * import { splitStatements } from "./lexer.ts";
 *
 * splitStatements("SELECT ';'; -- a; b\nSELECT 2", "postgres").length; // 2
 * ```
 */
export function splitStatements(sql: string, dialect: Dialect): Statement[] {
  return split(sql, dialect).statements;
}

/** {@linkcode splitStatements} with the lexer's uncertainties. */
export function split(sql: string, dialect: Dialect): Split {
  const statements: Statement[] = [];
  let current: Token[] = [];
  const flush = () => {
    const [head] = current;
    const last = current.at(-1);
    if (head !== undefined && last !== undefined) {
      statements.push({
        tokens: current,
        text: sql.slice(head.start, last.end),
      });
    }
    current = [];
  };
  const { tokens, uncertain } = lex(sql, dialect);
  const { compoundBodies: kinds, atomicBodies } = ENGINES[dialect].lexical;
  for (let i = 0; i < tokens.length; i++) {
    const token = tokens[i]!;
    // A CREATE … BEGIN … END body's own `;` stay inside it (compound.ts).
    const end = current.length === 0 && uncertain.length === 0
      ? atomicBodies ? atomicEnd(tokens, i) : compoundEnd(tokens, i, kinds)
      : -1;
    if (end >= 0) {
      current.push(...tokens.slice(i, end + 1));
      i = end;
    } else if (token.kind === "semicolon") flush();
    else current.push(token);
  }
  flush();
  return { statements, uncertain };
}
