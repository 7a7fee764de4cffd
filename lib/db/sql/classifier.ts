/**
 * Statement classification: which path a statement takes and what consent it
 * needs. Tiers `read` < `write` < `destructive`, a `dangerous` mark (a DELETE
 * or UPDATE with no WHERE) and `reach`, set when the statement reaches the
 * file system or runs code. Everything is read from the lexer's tokens per
 * dialect, so a keyword inside a string, a quoted name or a comment never
 * counts, and it fails closed: an unknown leading keyword is a write.
 *
 * The engine's read-only mode stays the ground truth for reads; this decides
 * which statements may get there, and which need the write path and consent.
 *
 * @module
 */

import { standingDanger } from "./standing_code.ts";
import {
  CLAUSE_BEFORE,
  DENIED_FUNCTIONS,
  DESTRUCTIVE_LEADS,
  DML_WORDS,
  EVENT_AFTER,
  EVENT_BEFORE,
  EXPLAIN_OPTIONS,
  FILE_OR_CODE_LEADS,
  LIBRARY_SETTINGS,
  NOT_A_STATEMENT_BEFORE,
  PG_DENIED_RELATIONS,
  reachesOutside,
  READ_LEADS,
  READ_PRAGMAS,
  READ_PRAGMAS_WITH_ARGUMENT,
  SIDE_EFFECT_FUNCTIONS,
  STATEMENT_STARTS,
  UNTRUSTED_LANGUAGES,
} from "./classifier_words.ts";
import { ENGINES } from "../engines.ts";
import { type Dialect, split, type Token } from "./lexer.ts";

/** How much a statement may change. */
export type Tier = "read" | "write" | "destructive";

/** What the classifier found in one statement. */
export interface Classified {
  tier: Tier;
  /** A DELETE or UPDATE with no WHERE, or `danger`: always needs consent. */
  dangerous: boolean;
  /**
   * Why it is dangerous when not for a missing WHERE: code it installs to
   * run later, rows a table change rewrites (standing_code.ts).
   */
  danger?: string;
  /** What reaches the file system or runs code; null when nothing does. */
  reach: string | null;
  /** The leading keyword (after opening parentheses). */
  keyword: string;
  /** The statement without trailing `;` and surrounding comments. */
  text: string;
  /**
   * Why the lexer could not read the text with certainty (an unterminated
   * quote, a stray control character); such a statement is never a read.
   */
  uncertain: string[];
  /**
   * From the engine's catalog (PostgreSQL): why EXPLAIN may not plan it, and
   * why a write may not be tried and rolled back. Absent: no opinion.
   */
  noPlan?: string | null;
  noDryRun?: string | null;
}

/** The outcome of {@linkcode classify}. */
export type Classification =
  | ({ ok: true } & Classified)
  | { ok: false; code: "invalid_argument"; message: string };

const TIER_ORDER: Record<Tier, number> = { read: 0, write: 1, destructive: 2 };

/** What the lexer finds of one statement. */
type Verdict = { tier: Tier; dangerous: boolean; danger?: string };

function higher(a: Tier, b: Tier): Tier {
  return TIER_ORDER[a] >= TIER_ORDER[b] ? a : b;
}

/**
 * Classify `sql`, which must hold exactly one statement.
 *
 * @example
 * ```ts
 * import { classify } from "./classifier.ts";
 *
 * const verdict = classify("DELETE FROM t", "postgres");
 * if (verdict.ok) {
 *   verdict.tier; // "write"
 *   verdict.dangerous; // true: no WHERE
 * }
 * ```
 */
export function classify(sql: string, dialect: Dialect): Classification {
  const seen = CLASSIFIED[dialect].get(sql);
  if (seen !== undefined) return seen;
  const found = Object.freeze(classifyNow(sql, dialect));
  if (sql.length <= CLASSIFIED_CHARS) {
    const kept = CLASSIFIED[dialect];
    const oldest = kept.keys().next();
    if (kept.size >= CLASSIFIED_MAX && !oldest.done) kept.delete(oldest.value);
    kept.set(sql, found);
  }
  return found;
}

/**
 * Verdicts on recent statement texts, per dialect: a verdict depends on the
 * text and the dialect alone, so a client repeating a statement (polling,
 * paging) is not lexed again. Handed out frozen (its `uncertain` too): no
 * caller can change what the next one reads.
 */
const CLASSIFIED: Record<Dialect, Map<string, Classification>> = {
  postgres: new Map(),
  mysql: new Map(),
  sqlite: new Map(),
};
const CLASSIFIED_MAX = 256;
/** Longer texts are lexed at each call (kept, 256 of them could be MBs). */
const CLASSIFIED_CHARS = 4096;

function classifyNow(sql: string, dialect: Dialect): Classification {
  const { statements, uncertain } = split(sql, dialect);
  const [first] = statements;
  if (first === undefined) {
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
  const { tokens, text } = first;
  const start = skipParens(tokens, 0);
  const lead = tokens[start];
  const found = tierAt(tokens, start, dialect);
  // Fail closed: what the lexer cannot place is at least a write.
  const tier = uncertain.length > 0 ? higher(found.tier, "write") : found.tier;
  return {
    ok: true,
    tier,
    dangerous: found.dangerous,
    ...(found.danger === undefined ? {} : { danger: found.danger }),
    uncertain: Object.freeze(uncertain) as string[],
    reach: reachOf(tokens, dialect),
    keyword: lead?.kind === "word" ? lead.text : "",
    text,
  };
}

function skipParens(tokens: readonly Token[], i: number): number {
  while (tokens[i]?.text === "(") i++;
  return i;
}

function word(token: Token | undefined): string {
  return token?.kind === "word" ? token.text : "";
}

/** The tier of the statement starting at token `i`. */
function tierAt(
  tokens: readonly Token[],
  i: number,
  dialect: Dialect,
): Verdict {
  i = skipParens(tokens, i);
  const lead = tokens[i];
  // A statement that does not start with a keyword is not one we know.
  if (lead === undefined) return { tier: "read", dangerous: false };
  if (lead.kind !== "word") return { tier: "write", dangerous: false };
  const keyword = lead.text;

  if (
    keyword === "EXPLAIN" ||
    // MySQL: DESCRIBE/DESC <statement> is EXPLAIN; DESCRIBE <table> reads.
    (ENGINES[dialect].statements.describeExplains &&
      (keyword === "DESCRIBE" || keyword === "DESC"))
  ) {
    return explained(tokens, i + 1, dialect);
  }
  if (keyword === "ANALYZE" || keyword === "ANALYSE") {
    // MariaDB's ANALYZE <statement> runs the statement; ANALYZE <table>
    // (every engine) rewrites statistics: a write.
    const inner = skipParens(tokens, i + 1);
    const what = word(tokens[inner]);
    if (
      ENGINES[dialect].statements.analyzeRunsStatement && what !== "TABLE" &&
      STATEMENT_STARTS.has(what)
    ) {
      return tierAt(tokens, inner, dialect);
    }
    return { tier: "write", dangerous: false };
  }
  if (DESTRUCTIVE_LEADS.has(keyword)) {
    return { tier: "destructive", dangerous: true };
  }
  if (keyword === "ALTER") {
    // ALTER … DROP, and MariaDB's ALTER TABLE … TRUNCATE PARTITION.
    if (hasWord(tokens, i, "DROP") || hasWord(tokens, i, "TRUNCATE")) {
      return { tier: "destructive", dangerous: true };
    }
    const danger = standingDanger(tokens, i, dialect);
    return danger === null
      ? { tier: "write", dangerous: false }
      : { tier: "write", dangerous: true, danger };
  }
  if (keyword === "DELETE" || keyword === "UPDATE") {
    return {
      tier: higher("write", scan(tokens, i + 1).tier),
      dangerous: !hasWhere(tokens, i),
    };
  }
  if (keyword === "PRAGMA") {
    return {
      tier: ENGINES[dialect].statements.readPragmas && isReadPragma(tokens, i)
        ? "read"
        : "write",
      dangerous: false,
    };
  }
  if (keyword === "GRANT" || keyword === "REVOKE") {
    // `GRANT DELETE, UPDATE ON t`: privileges, never a statement.
    return { tier: "write", dangerous: false };
  }
  if (keyword === "SHOW" || keyword === "HELP") {
    return { tier: "read", dangerous: false };
  }
  if (READ_LEADS.has(keyword)) return scan(tokens, i);
  // MariaDB's CREATE OR REPLACE TABLE drops the table it replaces, rows
  // and all (outsider stop 62); CREATE OR REPLACE DATABASE|SCHEMA drops
  // every table of it (outsider stop 63).
  if (keyword === "CREATE" && replacesTable(tokens, i)) {
    return { tier: "destructive", dangerous: true };
  }
  // INSERT, CREATE, SET, BEGIN, ... and every keyword we do not know.
  const inner = scan(tokens, i + 1);
  const danger = keyword === "CREATE"
    ? standingDanger(tokens, i, dialect)
    : null;
  return danger === null
    ? { tier: higher("write", inner.tier), dangerous: inner.dangerous }
    : { tier: higher("write", inner.tier), dangerous: true, danger };
}

/** `CREATE OR REPLACE [TEMPORARY] TABLE|DATABASE|SCHEMA` at token `i`. */
function replacesTable(tokens: readonly Token[], i: number): boolean {
  let j = i + 3;
  if (word(tokens[j]) === "TEMPORARY") j++;
  return word(tokens[i + 1]) === "OR" && word(tokens[i + 2]) === "REPLACE" &&
    DROPPED_BY_REPLACE.has(word(tokens[j]));
}

/** What MariaDB's CREATE OR REPLACE drops first, with the rows it holds. */
const DROPPED_BY_REPLACE = new Set(["TABLE", "DATABASE", "SCHEMA"]);

/** EXPLAIN [options] <statement>: only ANALYZE runs the statement. */
function explained(
  tokens: readonly Token[],
  i: number,
  dialect: Dialect,
): { tier: Tier; dangerous: boolean } {
  let analyze = false;
  if (tokens[i]?.text === "(") {
    // PostgreSQL: EXPLAIN (ANALYZE, BUFFERS) ... / (ANALYZE false)
    let depth = 0;
    for (let token = tokens[i]; token !== undefined; token = tokens[++i]) {
      if (token.text === "(") depth++;
      else if (token.text === ")") {
        depth--;
        if (depth === 0) {
          i++;
          break;
        }
      } else if (
        (token.text === "ANALYZE" || token.text === "ANALYSE") &&
        !["FALSE", "OFF", "0"].includes(tokens[i + 1]?.text.toUpperCase() ?? "")
      ) {
        analyze = true;
      }
    }
  }
  for (let token = tokens[i]; token !== undefined; token = tokens[i]) {
    if (token.kind === "word" && EXPLAIN_OPTIONS.has(token.text)) {
      if (token.text === "ANALYZE" || token.text === "ANALYSE") analyze = true;
      i++;
    } else if (token.text === "=") i++;
    else break;
  }
  const inner = skipParens(tokens, i);
  if (!STATEMENT_STARTS.has(word(tokens[inner]))) {
    // DESCRIBE <table>, EXPLAIN <table>, EXPLAIN FOR CONNECTION <n>.
    return { tier: "read", dangerous: false };
  }
  const tier = tierAt(tokens, inner, dialect);
  return analyze ? tier : { tier: "read", dangerous: false };
}

/**
 * Scan a statement's body from token `i` for what makes a SELECT-like
 * statement more than a read: a data-changing statement inside it (a CTE),
 * `SELECT ... INTO` a table, row locks, functions with side effects, and
 * DROP/TRUNCATE anywhere.
 */
function scan(
  tokens: readonly Token[],
  i: number,
): { tier: Tier; dangerous: boolean } {
  let tier: Tier = "read";
  let dangerous = false;
  for (let k = i, token = tokens[k]; token !== undefined; token = tokens[++k]) {
    const called = calledName(tokens, k);
    if (called !== null && SIDE_EFFECT_FUNCTIONS.has(called)) {
      tier = higher(tier, "write");
      continue;
    }
    if (token.kind !== "word") continue;
    const text = token.text;
    const before = tokens[k - 1];
    const after = tokens[k + 1];
    if (text === "DROP" || text === "TRUNCATE") {
      return { tier: "destructive", dangerous: true };
    }
    if (
      DML_WORDS.has(text) && after?.text !== "(" &&
      !NOT_A_STATEMENT_BEFORE.has(before?.text ?? "") &&
      !isEvent(tokens, k) && !isClauseAction(tokens, k)
    ) {
      tier = higher(tier, "write");
      if ((text === "DELETE" || text === "UPDATE") && !hasWhere(tokens, k)) {
        dangerous = true;
      }
    } else if (
      text === "FOR" &&
      ["UPDATE", "SHARE", "NO", "KEY"].includes(word(after))
    ) {
      tier = higher(tier, "write"); // row locks need a read-write transaction
    } else if (text === "LOCK" && word(after) === "IN") {
      tier = higher(tier, "write"); // MySQL: LOCK IN SHARE MODE
    } else if (text === "INTO" && after?.kind !== "param") {
      // SELECT ... INTO new_table writes; MySQL's INTO @variable does not.
      tier = higher(tier, "write");
    }
  }
  return { tier, dangerous };
}

/**
 * Whether the DELETE or UPDATE at `k` names an event or an action (`ON
 * DELETE CASCADE`, `AFTER DELETE ON t`), by the words on both sides of it.
 */
function isEvent(tokens: readonly Token[], k: number): boolean {
  if (!EVENT_BEFORE.has(word(tokens[k - 1]))) return false;
  const after = word(tokens[k + 1]);
  const next = word(tokens[k + 2]);
  return EVENT_AFTER.has(after) ||
    (after === "SET" && (next === "NULL" || next === "DEFAULT")) ||
    (after === "NO" && next === "ACTION");
}

/**
 * Whether the DML word at `k` is MERGE's or ON CONFLICT's action (`THEN
 * UPDATE SET`, `THEN DELETE WHEN …`, `THEN INSERT VALUES`, `DO UPDATE
 * SET`), not a statement of a body (`THEN DELETE FROM b`).
 */
function isClauseAction(tokens: readonly Token[], k: number): boolean {
  if (!CLAUSE_BEFORE.has(word(tokens[k - 1]))) return false;
  const text = word(tokens[k]);
  const after = tokens[k + 1];
  const next = word(after);
  if (text === "UPDATE") return next === "SET";
  if (text === "INSERT") return next === "VALUES" || next === "DEFAULT";
  // DELETE: the clause ends (the next WHEN, the statement's end).
  return text === "DELETE" &&
    (after === undefined || next === "WHEN" || after.text === ";" ||
      after.text === ")");
}

/** Whether the statement (or CTE part) starting at `i` has a WHERE of its own. */
function hasWhere(tokens: readonly Token[], i: number): boolean {
  let depth = 0;
  for (const { text, kind } of tokens.slice(i + 1)) {
    if (text === "(") depth++;
    else if (text === ")") {
      depth--;
      if (depth < 0) return false; // the end of this CTE part
    } else if (depth === 0 && text === "WHERE" && kind === "word") {
      return true;
    }
  }
  return false;
}

function hasWord(tokens: readonly Token[], from: number, text: string) {
  return tokens.slice(from).some((token) =>
    token.kind === "word" && token.text === text
  );
}

/** Words between CREATE and the kind of object it creates. */
const CREATE_MODIFIERS = new Set([
  "OR",
  "REPLACE",
  "TRUSTED",
  "PROCEDURAL",
  "UNLOGGED",
  "TEMP",
  "TEMPORARY",
]);

/** A word, or a quoted name or string without its quotes, upper-cased. */
function looseName(token: Token | undefined): string {
  if (token === undefined) return "";
  if (token.kind === "word") return token.text;
  if (token.kind === "quoted" || token.kind === "string") {
    return token.text.slice(1, -1).toUpperCase();
  }
  return "";
}

/** A function's name as written: a word, or a quoted name read loosely. */
function calledName(tokens: readonly Token[], k: number): string | null {
  const token = tokens[k];
  if (tokens[k + 1]?.text !== "(" || token?.kind === "string") return null;
  // "pg_read_file"(...) or `load_file`(...): quoted names are read without
  // their quotes and case, so quoting is no way around the lists.
  return looseName(token) || null;
}

/** What in the statement reaches the file system or runs code, if anything. */
function reachOf(tokens: readonly Token[], dialect: Dialect): string | null {
  const rules = ENGINES[dialect].statements;
  if (tokens.some((token) => token.kind === "exec_comment")) {
    return "a MySQL executable comment /*! ... */ runs as code";
  }
  const start = skipParens(tokens, 0);
  const lead = word(tokens[start]);
  const leadReach = Object.hasOwn(FILE_OR_CODE_LEADS, lead)
    ? FILE_OR_CODE_LEADS[lead]
    : undefined;
  if (leadReach !== undefined) return leadReach;
  if (lead === "DO" && rules.anonymousCodeBlocks) {
    return "DO runs a block of procedural code";
  }
  if (lead === "VACUUM" && hasWord(tokens, start, "INTO")) {
    return "VACUUM INTO writes a database file";
  }
  if (lead === "ALTER" && word(tokens[start + 1]) === "SYSTEM") {
    return "ALTER SYSTEM writes the server's configuration file";
  }
  if (lead === "CREATE") {
    let k = start + 1;
    while (CREATE_MODIFIERS.has(word(tokens[k]))) k++;
    const what = word(tokens[k]);
    if (what === "LANGUAGE" || what === "EXTENSION") {
      return `CREATE ${what} installs code`;
    }
    if (what === "SERVER" || what === "FOREIGN") {
      return "a foreign server or table reaches files or other hosts";
    }
  }
  for (const [k, token] of tokens.entries()) {
    const name = calledName(tokens, k);
    if (
      name !== null && reachesOutside(name, rules.functionPrefixesReachOutside)
    ) {
      return `${name.toLowerCase()}() reaches files, code or SQL text`;
    }
    const denied = name !== null && Object.hasOwn(DENIED_FUNCTIONS, name)
      ? DENIED_FUNCTIONS[name]
      : undefined;
    if (denied !== undefined) return denied;
    if (
      rules.catalogViewsShowFiles &&
      PG_DENIED_RELATIONS.has(looseName(token))
    ) {
      return `${
        looseName(token).toLowerCase()
      } shows the server's files or configuration`;
    }
    if (token.kind !== "word") continue;
    if (
      (token.text === "OUTFILE" || token.text === "DUMPFILE") &&
      word(tokens[k - 1]) === "INTO"
    ) {
      return `INTO ${token.text} writes a file`;
    }
    if (token.text === "SONAME") {
      return "SONAME loads a shared library";
    }
    if (LIBRARY_SETTINGS.has(token.text)) {
      return `${token.text.toLowerCase()} loads libraries`;
    }
    if (token.text === "UESCAPE" && !afterUnicodeString(tokens, k)) {
      return "UESCAPE hides names behind escapes";
    }
    const language = looseName(tokens[k + 1]);
    if (token.text === "LANGUAGE" && UNTRUSTED_LANGUAGES.has(language)) {
      return `LANGUAGE ${language.toLowerCase()} runs outside the database`;
    }
    if (
      token.text === "U" && tokens[k + 1]?.text === "&" &&
      tokens[k + 2]?.kind === "quoted" && tokens[k + 3]?.text === "("
    ) {
      return "a function named with Unicode escapes";
    }
  }
  return null;
}

/**
 * `U&'…' UESCAPE '!'`: the escape of a string literal, which names nothing
 * (`U&"…" UESCAPE` of an identifier still counts as reach).
 */
function afterUnicodeString(tokens: readonly Token[], k: number): boolean {
  return tokens[k - 1]?.kind === "string" && tokens[k - 2]?.text === "&" &&
    word(tokens[k - 3]) === "U" &&
    tokens[k - 1]!.start === tokens[k - 2]!.end &&
    tokens[k - 2]!.start === tokens[k - 3]!.end &&
    tokens[k + 1]?.kind === "string";
}

/** `PRAGMA [schema.]name` or `PRAGMA [schema.]name(table)` of a reading pragma. */
function isReadPragma(tokens: readonly Token[], i: number): boolean {
  let rest = tokens.slice(i + 1);
  if (rest[1]?.text === ".") rest = rest.slice(2);
  const name = rest[0];
  if (name === undefined || name.kind !== "word") return false;
  if (rest.length === 1) return READ_PRAGMAS.has(name.text);
  return READ_PRAGMAS_WITH_ARGUMENT.has(name.text) && rest[1]?.text === "(" &&
    rest.at(-1)?.text === ")" && !rest.some((token) => token.text === "=");
}
