/**
 * Which statements may take the read path, until the write path (statement
 * classification, Safe Mode, consent) arrives. It fails closed: a statement
 * whose leading keyword is not a known read is refused, and the engine's
 * read-only mode stays the ground truth for everything let through
 * (`SELECT nextval(...)` is refused by the engine, not here).
 *
 * @module
 */

import { type Dialect, splitStatements, type Token } from "./lexer.ts";

/** The outcome of {@linkcode checkRead}. */
export type ReadCheck =
  | {
    ok: true;
    /** The statement without trailing `;` and surrounding comments. */
    text: string;
    /** Its leading keyword (after any opening parentheses). */
    keyword: string;
  }
  | { ok: false; code: "invalid_argument" | "denied"; message: string };

const READ_KEYWORDS: Readonly<Record<Dialect, ReadonlySet<string>>> = {
  postgres: new Set(["SELECT", "WITH", "VALUES", "TABLE", "SHOW", "EXPLAIN"]),
  mysql: new Set([
    "SELECT",
    "WITH",
    "VALUES",
    "TABLE",
    "SHOW",
    "EXPLAIN",
    "DESCRIBE",
    "DESC",
  ]),
  sqlite: new Set(["SELECT", "WITH", "VALUES", "EXPLAIN", "PRAGMA"]),
};

/** Functions and clauses that reach the file system or run code. */
const FILE_OR_CODE_FUNCTIONS = new Set([
  "PG_READ_FILE",
  "PG_READ_BINARY_FILE",
  "PG_LS_DIR",
  "PG_STAT_FILE",
  "LO_IMPORT",
  "LO_EXPORT",
  "DBLINK",
  "DBLINK_EXEC",
  "LOAD_FILE",
  "LOAD_EXTENSION",
  "READFILE",
  "WRITEFILE",
  "EDIT",
  "FTS3_TOKENIZER",
]);

/** SQLite pragmas that only read; the ones taking a table name may have one. */
const READ_PRAGMAS_WITH_ARGUMENT = new Set([
  "TABLE_INFO",
  "TABLE_XINFO",
  "TABLE_LIST",
  "INDEX_LIST",
  "INDEX_INFO",
  "INDEX_XINFO",
  "FOREIGN_KEY_LIST",
  "FOREIGN_KEY_CHECK",
  "INTEGRITY_CHECK",
  "QUICK_CHECK",
]);
const READ_PRAGMAS = new Set([
  ...READ_PRAGMAS_WITH_ARGUMENT,
  "DATABASE_LIST",
  "COLLATION_LIST",
  "COMPILE_OPTIONS",
  "FUNCTION_LIST",
  "MODULE_LIST",
  "PRAGMA_LIST",
  "ENCODING",
  "PAGE_COUNT",
  "PAGE_SIZE",
  "FREELIST_COUNT",
  "SCHEMA_VERSION",
  "USER_VERSION",
  "APPLICATION_ID",
  "JOURNAL_MODE",
  "FOREIGN_KEYS",
  "AUTO_VACUUM",
]);

/** Check that `sql` is one statement the read path may run. */
export function checkRead(sql: string, dialect: Dialect): ReadCheck {
  const statements = splitStatements(sql, dialect);
  if (statements.length === 0) {
    return {
      ok: false,
      code: "invalid_argument",
      message: "query holds no statement (only comments or semicolons)",
    };
  }
  if (statements.length > 1) {
    return {
      ok: false,
      code: "invalid_argument",
      message:
        `query holds ${statements.length} statements; send one statement at a time`,
    };
  }
  const { tokens, text } = statements[0]!;
  if (tokens.some((token) => token.kind === "exec_comment")) {
    return {
      ok: false,
      code: "denied",
      message:
        "MySQL executable comments (/*! ... */) run as code and are not accepted",
    };
  }
  const reach = fileOrCodeReach(tokens);
  if (reach !== null) {
    return {
      ok: false,
      code: "denied",
      message:
        `the statement reaches the file system or runs code (${reach}), which external clients may never do`,
    };
  }
  const lead = tokens.find((token) => token.text !== "(");
  const keyword = lead?.kind === "word" ? lead.text : "";
  if (!READ_KEYWORDS[dialect].has(keyword)) {
    return {
      ok: false,
      code: "denied",
      message: `only reads run through execute_query for now; "${
        keyword || lead?.text || text.slice(0, 20)
      }" is not a read statement`,
    };
  }
  if (keyword === "PRAGMA" && !isReadPragma(tokens)) {
    return {
      ok: false,
      code: "denied",
      message:
        "this PRAGMA changes the database or its settings; only reading pragmas (table_info, index_list, ...) run",
    };
  }
  return { ok: true, text, keyword };
}

function fileOrCodeReach(tokens: readonly Token[]): string | null {
  for (const [index, token] of tokens.entries()) {
    if (token.kind !== "word") continue;
    const next = tokens[index + 1];
    if (FILE_OR_CODE_FUNCTIONS.has(token.text) && next?.text === "(") {
      return token.text.toLowerCase();
    }
    if (
      (token.text === "OUTFILE" || token.text === "DUMPFILE") &&
      tokens[index - 1]?.text === "INTO"
    ) {
      return `INTO ${token.text}`;
    }
  }
  return null;
}

/** `PRAGMA [schema.]name` or `PRAGMA [schema.]name(table)` of a reading pragma. */
function isReadPragma(tokens: readonly Token[]): boolean {
  let rest = tokens.slice(1);
  if (rest[1]?.text === ".") rest = rest.slice(2);
  const name = rest[0];
  if (name === undefined || name.kind !== "word") return false;
  if (rest.length === 1) return READ_PRAGMAS.has(name.text);
  return READ_PRAGMAS_WITH_ARGUMENT.has(name.text) && rest[1]?.text === "(" &&
    rest.at(-1)?.text === ")" && !rest.some((token) => token.text === "=");
}
