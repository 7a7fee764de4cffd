/**
 * Everything that differs per engine, in one table. Every list, check and
 * text that names engines is derived from {@linkcode ENGINES}; adding an engine
 * is one entry here plus its driver and its catalog queries, and the compiler
 * names every other place that needs a decision: `OPENERS` in `pool.ts`,
 * `PLANS` in `cli/harden.ts`.
 *
 * This module is pure data: the lexer and the redaction read it without
 * loading any driver (docs/development.md "Adding an engine").
 *
 * @module
 */

/** The engines dbport drives. */
export type Engine = "postgres" | "mysql" | "sqlite";

/**
 * How the engine's own scanner reads text (docs/security.md "The lexer"):
 * each field is a rule of PostgreSQL `scan.l`, MySQL/MariaDB `sql_lex.cc` or
 * SQLite `tokenize.c`, and the lexer has no other dialect branch.
 */
export interface LexicalRules {
  /** `#` starts a line comment, and `--` only when whitespace or a control character (or the end) follows. */
  hashAndSpacedDashComments: boolean;
  /** `--` comments also end at `\r` (PostgreSQL: `[\n\r]`), not only at `\n`. */
  carriageReturnEndsLineComment: boolean;
  /** Block comments nest: an inner opening needs its own close. */
  nestedBlockComments: boolean;
  /** Comments opened by `/*!`, `/*M!` or `/*+` are code the server runs. */
  executableComments: boolean;
  /** A backslash escapes the next character inside `'...'` and `"..."`. */
  backslashEscapes: boolean;
  /** `E'...'` strings with backslash escapes. */
  escapeStrings: boolean;
  /** What `"..."` is (MySQL without ANSI_QUOTES: a string). */
  doubleQuoted: "identifier" | "string";
  /** `` `name` `` is a quoted identifier. */
  backtickIdentifiers: boolean;
  /** `[name]` is a quoted identifier. */
  bracketIdentifiers: boolean;
  /** `$tag$ ... $tag$` strings and `$1` parameters. */
  dollarQuotes: boolean;
  /** Parameters: SQLite's `?NNN :a @a $a #a`, or `?name :name @name`. */
  parameters: "sqlite" | "named";
  /**
   * What `CREATE` makes with a `BEGIN ... END` body whose inner `;` do not
   * end the statement (compound.ts).
   */
  compoundBodies: readonly string[];
  /**
   * `CREATE FUNCTION|PROCEDURE ... BEGIN ATOMIC ... END` (PostgreSQL 14+): the
   * `;` inside the body do not end the statement (compound.ts `atomicEnd`).
   */
  atomicBodies: boolean;
}

/** Statement-level facts the classifier needs. */
export interface StatementRules {
  /** `DESCRIBE`/`DESC <statement>` is EXPLAIN (MySQL/MariaDB). */
  describeExplains: boolean;
  /** `ANALYZE <statement>` runs the statement (MariaDB). */
  analyzeRunsStatement: boolean;
  /** Some `PRAGMA`s only read (SQLite). */
  readPragmas: boolean;
  /** `DO` runs a block of procedural code (PostgreSQL). */
  anonymousCodeBlocks: boolean;
  /** Function-name prefixes reach files and code (`pg_read_...`, `lo_...`). */
  functionPrefixesReachOutside: boolean;
  /** Catalog views show server files and configuration (`pg_hba_file_rules`). */
  catalogViewsShowFiles: boolean;
}

/** The facts of one engine. */
export interface EngineFacts {
  /** The engine's name in texts ("MySQL/MariaDB"). */
  label: string;
  /** The name `list_connections` gives a connection's type. */
  typeName: (url: string) => string;
  /** What the engine calls a schema ("database" on MySQL). */
  schemaWord: string;
  /** Which schema unqualified names and `list_tables` without one use. */
  defaultSchema: string;
  /** The URL schemes a saved connection may use; the first is the canonical one. */
  urlSchemes: readonly string[];
  /** A plain path or a `file:` URL names a local database file. */
  filePaths: boolean;
  /** The port a URL without one goes to; null for a file. */
  defaultPort: number | null;
  /** Row counts come from statistics (estimates), not `COUNT(*)`. */
  rowCountsAreEstimates: boolean;
  /**
   * Whether the engine plans a write (EXPLAIN without running it) inside a
   * read-only transaction; MariaDB refuses with ER_CANT_EXECUTE_IN_READ_ONLY_TRANSACTION.
   */
  plansWritesReadOnly: boolean;
  /** The engine has logins, so a least-privilege AI login can be made. */
  logins: boolean;
  /**
   * Whether the engine's plans carry a cost (the planner's units), so a
   * connection's `maxEstimatedCost` can apply; SQLite's plans have none.
   */
  plansCarryCost: boolean;
  /**
   * Who keeps a connection's private columns from the AI
   * (docs/security.md "Private columns"): the engine's own grants to the
   * AI login, or dbport's authorizer on the SQLite connection it opens
   * (which a running server applies at once, with no grants to sync).
   */
  privateColumnsHeldBy: "grants" | "authorizer";
  /**
   * An open session keeps the database-level grants it started with
   * (MySQL/MariaDB caches them per session), so a change to them holds
   * only once that login's sessions are ended.
   */
  sessionsKeepDatabaseGrants: boolean;
  /**
   * Logins and grants are made in a transaction (PostgreSQL's CREATE ROLE
   * and GRANT), so `harden --apply` runs its plan as one; MySQL/MariaDB's
   * CREATE USER and GRANT commit on their own.
   */
  transactionalLogins: boolean;
  /** How an identifier is quoted: `"` or `` ` ``. */
  identifierQuote: '"' | "`";
  /** How the engine writes the placeholders `params` binds, for messages. */
  placeholders: string;
  lexical: LexicalRules;
  statements: StatementRules;
}

/**
 * The engines' facts.
 *
 * @example
 * ```ts
 * import { ENGINES } from "./engines.ts";
 *
 * ENGINES.mysql.label; // "MySQL/MariaDB"
 * ENGINES.postgres.defaultPort; // 5432
 * ```
 */
export const ENGINES: { readonly [E in Engine]: Readonly<EngineFacts> } = {
  postgres: {
    label: "PostgreSQL",
    typeName: () => "PostgreSQL",
    schemaWord: "schema",
    defaultSchema: "the first schema of the search_path (usually public)",
    urlSchemes: ["postgres", "postgresql"],
    filePaths: false,
    defaultPort: 5432,
    rowCountsAreEstimates: true,
    plansWritesReadOnly: true,
    logins: true,
    plansCarryCost: true,
    privateColumnsHeldBy: "grants",
    sessionsKeepDatabaseGrants: false,
    transactionalLogins: true,
    identifierQuote: '"',
    placeholders: "$1, $2, \u2026",
    lexical: {
      hashAndSpacedDashComments: false,
      carriageReturnEndsLineComment: true,
      nestedBlockComments: true,
      executableComments: false,
      // The driver keeps standard_conforming_strings on: only E'' escapes.
      backslashEscapes: false,
      escapeStrings: true,
      doubleQuoted: "identifier",
      backtickIdentifiers: false,
      bracketIdentifiers: false,
      dollarQuotes: true,
      parameters: "named",
      compoundBodies: [],
      atomicBodies: true,
    },
    statements: {
      describeExplains: false,
      analyzeRunsStatement: false,
      readPragmas: false,
      anonymousCodeBlocks: true,
      functionPrefixesReachOutside: true,
      catalogViewsShowFiles: true,
    },
  },
  mysql: {
    label: "MySQL/MariaDB",
    typeName: (url) => /^mariadb:/i.test(url) ? "MariaDB" : "MySQL",
    schemaWord: "database",
    defaultSchema: "the connection's database",
    urlSchemes: ["mysql", "mariadb"],
    filePaths: false,
    defaultPort: 3306,
    rowCountsAreEstimates: true,
    plansWritesReadOnly: false,
    logins: true,
    plansCarryCost: true,
    privateColumnsHeldBy: "grants",
    sessionsKeepDatabaseGrants: true,
    transactionalLogins: false,
    identifierQuote: "`",
    placeholders: "?",
    lexical: {
      hashAndSpacedDashComments: true,
      carriageReturnEndsLineComment: false,
      nestedBlockComments: false,
      executableComments: true,
      backslashEscapes: true,
      escapeStrings: false,
      // The driver keeps ANSI_QUOTES off.
      doubleQuoted: "string",
      backtickIdentifiers: true,
      bracketIdentifiers: false,
      dollarQuotes: false,
      parameters: "named",
      compoundBodies: ["PROCEDURE", "FUNCTION", "TRIGGER", "EVENT"],
      atomicBodies: false,
    },
    statements: {
      describeExplains: true,
      analyzeRunsStatement: true,
      readPragmas: false,
      anonymousCodeBlocks: false,
      functionPrefixesReachOutside: false,
      catalogViewsShowFiles: false,
    },
  },
  sqlite: {
    label: "SQLite",
    typeName: () => "SQLite",
    schemaWord: "attached database",
    defaultSchema: "main",
    // Remote libSQL (Turso, sqld) speaks SQLite over these.
    urlSchemes: ["libsql", "http", "https", "ws", "wss"],
    filePaths: true,
    defaultPort: null,
    // SQLite keeps no statistics: its counts are exact COUNT(*)s.
    rowCountsAreEstimates: false,
    plansWritesReadOnly: true,
    logins: false,
    plansCarryCost: false,
    privateColumnsHeldBy: "authorizer",
    sessionsKeepDatabaseGrants: false,
    transactionalLogins: false,
    identifierQuote: '"',
    placeholders: "?, ?NNN or :name",
    lexical: {
      hashAndSpacedDashComments: false,
      carriageReturnEndsLineComment: false,
      nestedBlockComments: false,
      executableComments: false,
      backslashEscapes: false,
      escapeStrings: false,
      doubleQuoted: "identifier",
      backtickIdentifiers: true,
      bracketIdentifiers: true,
      dollarQuotes: false,
      parameters: "sqlite",
      compoundBodies: ["TRIGGER"],
      atomicBodies: false,
    },
    statements: {
      describeExplains: false,
      analyzeRunsStatement: false,
      readPragmas: true,
      anonymousCodeBlocks: false,
      functionPrefixesReachOutside: false,
      catalogViewsShowFiles: false,
    },
  },
};

/** The engine names, in the table's order. */
export const ENGINE_NAMES: readonly Engine[] = Object.freeze(
  Object.keys(ENGINES) as Engine[],
);

/** Whether `value` names an engine. */
export function isEngine(value: unknown): value is Engine {
  return typeof value === "string" && Object.hasOwn(ENGINES, value);
}

/** "PostgreSQL, MySQL/MariaDB and SQLite". */
export function engineLabels(): string {
  return enginesWhere(() => true);
}

/**
 * "schema (PostgreSQL), database (MySQL/MariaDB) or attached database
 * (SQLite)": what the `schema` argument means on each engine.
 */
export function schemaWords(): string {
  return perEngine((facts) => facts.schemaWord, "or");
}

/**
 * One fact per engine, each followed by the engine's label, joined with
 * commas and a last `conjunction`: "schema (PostgreSQL), database
 * (MySQL/MariaDB) or attached database (SQLite)".
 */
export function perEngine(
  fact: (facts: EngineFacts) => string,
  conjunction: "and" | "or" | "," = ",",
): string {
  return listed(
    ENGINE_NAMES.map((engine) =>
      `${fact(ENGINES[engine])} (${ENGINES[engine].label})`
    ),
    conjunction,
  );
}

/** The labels of the engines for which `test` holds: "PostgreSQL and MySQL/MariaDB". */
export function enginesWhere(test: (facts: EngineFacts) => boolean): string {
  return listed(
    ENGINE_NAMES.filter((engine) => test(ENGINES[engine])).map((engine) =>
      ENGINES[engine].label
    ),
    "and",
  );
}

function listed(items: readonly string[], conjunction: string): string {
  if (items.length < 2 || conjunction === ",") return items.join(", ");
  return `${items.slice(0, -1).join(", ")} ${conjunction} ${items.at(-1)}`;
}

/** Every URL scheme of every engine (what the redaction masks). */
export function allUrlSchemes(): string[] {
  return ENGINE_NAMES.flatMap((engine) => ENGINES[engine].urlSchemes);
}

/** Other names an engine is known by (`--engine postgresql`, `--engine mariadb`). */
export const ENGINE_ALIASES: Readonly<Record<string, Engine>> = Object.freeze({
  postgresql: "postgres",
  mariadb: "mysql",
  libsql: "sqlite",
});

/** The engine a name or alias means, or null. */
export function engineNamed(name: string): Engine | null {
  const lower = name.toLowerCase();
  if (isEngine(lower)) return lower;
  return Object.hasOwn(ENGINE_ALIASES, lower) ? ENGINE_ALIASES[lower]! : null;
}

/**
 * The engine a URL names by its scheme (`postgres://`, `postgresql://`,
 * `mysql://`, `mariadb://`, `libsql://`), or a file path or `file:` URL for
 * the engine of local files; null when it names none.
 */
export function engineOfUrl(url: string): Engine | null {
  const scheme = /^([a-z][a-z0-9+.-]*):/i.exec(url.trim())?.[1]?.toLowerCase();
  // A Windows drive letter reads like a one-letter scheme.
  const file = scheme === undefined || scheme.length === 1 ||
    scheme === "file";
  return ENGINE_NAMES.find((engine) =>
    file
      ? ENGINES[engine].filePaths
      : ENGINES[engine].urlSchemes.includes(scheme) &&
        /^[a-z][a-z0-9+.-]*:\/\//i.test(url.trim())
  ) ?? null;
}
