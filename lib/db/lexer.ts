/**
 * A SQL lexer per engine dialect: strings, quoted identifiers, comments and
 * dollar quotes are read as tokens, never guessed with a regular expression,
 * so a `;` or a keyword inside a string or a comment is never taken for code.
 *
 * @module
 */

/** The SQL dialects dbport speaks. */
export type Dialect = "postgres" | "mysql" | "sqlite";

/** What a token is. Comments and whitespace produce no token. */
export type TokenKind =
  | "word"
  | "quoted"
  | "string"
  | "number"
  | "param"
  | "punct"
  | "semicolon"
  /** MySQL `/*! ... *\/`: a comment the server executes (code, not a comment). */
  | "exec_comment";

/** One token and where it sits in the text. */
export interface Token {
  kind: TokenKind;
  /** The token's text; for a word, upper-cased. */
  text: string;
  start: number;
  end: number;
}

const WORD_START = /[A-Za-z_\u0080-\uffff]/;
const WORD_PART = /[A-Za-z0-9_$\u0080-\uffff]/;
const DIGIT = /[0-9]/;

/** Split SQL text into tokens. Unterminated quotes run to the end of the text. */
export function tokenize(sql: string, dialect: Dialect): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  const n = sql.length;
  const push = (kind: TokenKind, start: number, end: number, text?: string) =>
    tokens.push({ kind, start, end, text: text ?? sql.slice(start, end) });

  while (i < n) {
    const c = sql[i]!;
    const next = sql[i + 1];
    if (/\s/.test(c)) {
      i++;
      continue;
    }
    // Line comments: `--` everywhere (MySQL wants a space or control char
    // after it), `#` on MySQL.
    if (
      (c === "-" && next === "-" &&
        (dialect !== "mysql" || i + 2 >= n || /[\s]/.test(sql[i + 2]!))) ||
      (c === "#" && dialect === "mysql")
    ) {
      const eol = sql.indexOf("\n", i);
      i = eol === -1 ? n : eol + 1;
      continue;
    }
    if (c === "/" && next === "*") {
      const start = i;
      // MySQL `/*! */`, MariaDB `/*M! */` and optimizer hints `/*+ */`.
      const executable = dialect === "mysql" &&
        (sql[i + 2] === "!" || sql[i + 2] === "+" ||
          (sql[i + 2] === "M" && sql[i + 3] === "!"));
      i = skipBlockComment(sql, i, dialect === "postgres");
      if (executable) push("exec_comment", start, i);
      continue;
    }
    if (c === "'") {
      const start = i;
      // Backslash escapes in '...' on MySQL only (PostgreSQL: E'...' below).
      i = skipQuoted(sql, i, "'", dialect === "mysql");
      push("string", start, i);
      continue;
    }
    if (dialect === "postgres" && (c === "e" || c === "E") && next === "'") {
      const start = i;
      i = skipQuoted(sql, i + 1, "'", true);
      push("string", start, i);
      continue;
    }
    if (c === '"') {
      const start = i;
      // MySQL (without ANSI_QUOTES) reads "..." as a string with escapes.
      i = skipQuoted(sql, i, '"', dialect === "mysql");
      push(dialect === "mysql" ? "string" : "quoted", start, i);
      continue;
    }
    if (c === "`" && dialect !== "postgres") {
      const start = i;
      i = skipQuoted(sql, i, "`", false);
      push("quoted", start, i);
      continue;
    }
    if (c === "[" && dialect === "sqlite") {
      const start = i;
      const close = sql.indexOf("]", i + 1);
      i = close === -1 ? n : close + 1;
      push("quoted", start, i);
      continue;
    }
    if (c === "$" && dialect === "postgres") {
      const tag = /^\$([A-Za-z_][A-Za-z0-9_]*)?\$/.exec(sql.slice(i));
      if (tag !== null) {
        const start = i;
        const close = sql.indexOf(tag[0], i + tag[0].length);
        i = close === -1 ? n : close + tag[0].length;
        push("string", start, i);
        continue;
      }
      const param = /^\$[0-9]+/.exec(sql.slice(i));
      if (param !== null) {
        push("param", i, i + param[0].length);
        i += param[0].length;
        continue;
      }
    }
    if (c === ";") {
      push("semicolon", i, i + 1);
      i++;
      continue;
    }
    if (DIGIT.test(c) || (c === "." && DIGIT.test(next ?? ""))) {
      const start = i;
      while (i < n && /[0-9A-Za-z_.]/.test(sql[i]!)) {
        // An exponent's sign belongs to the number.
        if (/[eE]/.test(sql[i]!) && /[+-]/.test(sql[i + 1] ?? "")) i++;
        i++;
      }
      push("number", start, i);
      continue;
    }
    if (WORD_START.test(c)) {
      const start = i;
      while (i < n && WORD_PART.test(sql[i]!)) i++;
      push("word", start, i, sql.slice(start, i).toUpperCase());
      continue;
    }
    if ((c === "?" || c === ":" || c === "@") && WORD_START.test(next ?? "")) {
      // Named parameters and MySQL user variables read as one token.
      const start = i;
      i++;
      while (i < n && WORD_PART.test(sql[i]!)) i++;
      push("param", start, i);
      continue;
    }
    push("punct", i, i + 1);
    i++;
  }
  return tokens;
}

/** The end of a block comment starting at `i` (nested on PostgreSQL). */
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
  return sql.length;
}

/** The end of a quoted run starting at `i`; a doubled quote is an escape. */
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
  return sql.length;
}

/** One statement: its tokens and its text without trailing `;` or comments. */
export interface Statement {
  tokens: Token[];
  text: string;
}

/** Split into statements; empty ones (a lone `;`, only comments) are dropped. */
export function splitStatements(sql: string, dialect: Dialect): Statement[] {
  const statements: Statement[] = [];
  let current: Token[] = [];
  const flush = () => {
    if (current.length > 0) {
      statements.push({
        tokens: current,
        text: sql.slice(current[0]!.start, current.at(-1)!.end),
      });
    }
    current = [];
  };
  for (const token of tokenize(sql, dialect)) {
    if (token.kind === "semicolon") flush();
    else current.push(token);
  }
  flush();
  return statements;
}
