/**
 * One interface over the three engines. A driver knows SQL and its engine,
 * never MCP: the tools translate what it returns.
 *
 * @module
 */

import type { Tier } from "./sql/classifier.ts";
import type { Signature } from "./signature.ts";

import type { Engine } from "./engines.ts";

/** Why rows or cells were left out. */
export interface Truncation {
  /** More rows than `maxRows`. */
  rows: boolean;
  /** Rows left out because the byte budget was spent. */
  bytes: boolean;
  /** How many cells were cut at `maxCellChars`. */
  cells: number;
}

export type { Engine };

/** A JSON-safe cell (see `values.ts` for the mapping, the same on every engine). */
export type Cell =
  | string
  | number
  | boolean
  | null
  | Cell[]
  | { [key: string]: Cell };

/** A table-like object. */
export interface TableSummary {
  name: string;
  /** The schema (PostgreSQL), database (MySQL) or attached database (SQLite). */
  schema: string;
  type: "table" | "view" | "materialized_view";
  /** From engine statistics, so approximate; absent when the engine has none. */
  rowCount?: number;
}

/** A column of a table. */
export interface ColumnDetail {
  name: string;
  dataType: string;
  nullable: boolean;
  defaultValue: string | null;
  primaryKey: boolean;
  /** `COMMENT ON COLUMN` (PostgreSQL), `COMMENT` (MySQL/MariaDB). */
  comment: string | null;
  /** An enum type's allowed values, in order; null for other types. */
  enumValues: string[] | null;
  /** A private column of the connection (no AI client may read it). */
  private?: boolean;
}

/** An index of a table. */
export interface IndexDetail {
  name: string;
  columns: string[];
  unique: boolean;
  primary: boolean;
  /** The access method (btree, hash, ...), where the engine names one. */
  method: string | null;
}

/** A foreign key of a table. */
export interface ForeignKeyDetail {
  name: string;
  columns: string[];
  referencedSchema: string;
  referencedTable: string;
  referencedColumns: string[];
  onUpdate: string;
  onDelete: string;
}

/** Everything `describeTable` knows. */
export interface TableDetail {
  name: string;
  schema: string;
  type: TableSummary["type"];
  columns: ColumnDetail[];
  indexes: IndexDetail[];
  foreignKeys: ForeignKeyDetail[];
  /** `COMMENT ON TABLE` (PostgreSQL), the table's `COMMENT` (MySQL/MariaDB). */
  comment: string | null;
  /** The DDL, where the engine can give it. */
  ddl: string | null;
}

/** A schema (database, attached database) and what it holds. */
export interface SchemaSummary {
  name: string;
  /** Tables (base, partitioned, foreign). */
  tables: number;
  /** Views and materialized views. */
  views: number;
}

/** The schemas the login can see, and which one unqualified names use. */
export interface SchemaList {
  /**
   * PostgreSQL: the first schema of the search path that exists; MySQL: the
   * URL's database; SQLite: main. Null when there is none.
   */
  current: string | null;
  /** Ordered by name (SQLite: main first, then attach order). */
  schemas: SchemaSummary[];
}

/** Where a table sits in `listTables` order: a page continues after it. */
export interface TableKey {
  schema: string;
  name: string;
}

/** Which tables `listTables` gives. */
export interface TableQuery {
  /** One schema; without it every schema the login sees. */
  schema?: string;
  /** Only names that contain this text, whatever the case. */
  pattern?: string;
  /** Only tables after this one (a page's last). */
  after?: TableKey;
  /** At most this many (all when absent). */
  limit?: number;
  rowCounts: boolean;
}

/** A page of tables, and how many match the query's schema and pattern. */
export interface TablePage {
  tables: TableSummary[];
  /** Every match, before `after` and `limit`. */
  total: number;
  /** Tables remain after this page. */
  more: boolean;
}

/** What `searchSchema` looks for. */
export interface SchemaSearch {
  /** Lower-case words; an object matches when its name or comment contains one. */
  words: string[];
  /** Views include materialized views. */
  kinds: readonly ("table" | "view" | "column")[];
  schema?: string;
  limit: number;
}

/** A table, view or column that matched a search. */
export interface SchemaMatch {
  schema: string;
  table: string;
  /** The column, for a column match. */
  column: string | null;
  kind: TableSummary["type"] | "column";
  /** A column's type. */
  dataType: string | null;
  comment: string | null;
  /** A private column of the connection (no AI client may read it). */
  private?: boolean;
}

/** The best matches, and how many there were. */
export interface SearchResult {
  matches: SchemaMatch[];
  total: number;
}

/** A column as the schema overview gives it. */
export interface ColumnSummary {
  name: string;
  dataType: string;
  nullable: boolean;
  primaryKey: boolean;
  /** A private column of the connection (no AI client may read it). */
  private?: boolean;
}

/** A table with its columns. */
export interface TableColumns extends TableSummary {
  columns: ColumnSummary[];
}

/** The first tables of a connection with their columns, and how many there are. */
export interface SchemaOverview {
  /** At most `maxTables`, in `listTables` order. */
  tables: TableColumns[];
  /** Every table, view and materialized view. */
  totalTables: number;
}

/**
 * A value bound to a placeholder (`$1` on PostgreSQL, `?` on MariaDB and
 * SQLite) by the engine's own protocol, never written into the text: null
 * is SQL NULL; a 64-bit integer past 2^53 travels as its text.
 */
export type BindValue = string | number | boolean | null;

/** How a query runs. */
export interface QueryOptions {
  /**
   * Values for the statement's placeholders, bound by the engine's protocol
   * (PostgreSQL's extended protocol, MariaDB's prepared statements, SQLite's
   * sqlite3_bind_*); absent or empty: the statement has none.
   */
  params?: readonly BindValue[];
  /**
   * `read`: inside the engine's read-only mode, always rolled back. `write`:
   * inside a transaction that commits when the statement succeeds; the
   * session is reset afterwards, so nothing it set reaches a later call.
   */
  mode: "read" | "write";
  /** Rows to keep; one more is read to know whether the result was cut. */
  maxRows: number;
  /** The rows' JSON text may not grow past this many bytes (budget.ts). */
  maxBytes: number;
  /** Longer text cells are cut, with a marker saying how much was left out. */
  maxCellChars: number;
  /** The statement timeout: the query is stopped on the server after it. */
  timeoutMs: number;
  /**
   * How long the call may still wait for a database session, when less than
   * `timeoutMs`: a call asked again (PostgreSQL's `askingAgain`) keeps what
   * is left of its first wait rather than wait its whole timeout anew.
   */
  sessionWaitMs?: number;
  /** Aborting stops the query on the server. */
  signal: AbortSignal;
  /**
   * Called as a write's COMMIT is sent: from then on it cannot be undone, and
   * its outcome is what the caller must report, whatever stops it.
   */
  onCommit?: () => void;
  /**
   * Called with a write's result before its COMMIT: a throw rolls the write
   * back and is what the query throws (a write preview's dry run, a write
   * held to its approved preview). When it is set, a statement that refuses
   * a transaction (VACUUM) is refused with `no_transaction` rather than run
   * on its own, where nothing could hold it back.
   */
  beforeCommit?: (result: QueryResult) => void;
  /**
   * A write measured for its preview or its hold (docs/security.md "What the
   * hold compares"): before `beforeCommit` the driver reads from the engine
   * what the whole transaction changed (`QueryResult.changes`). A statement
   * without RETURNING then answers up to `sampleRows` of its changed rows.
   * An engine that cannot count this statement's effects exactly refuses
   * with `uncounted`, saying why, before running anything.
   */
  track?: { sampleRows: number };
  /**
   * Called before a write's COMMIT with the tables whose every row the
   * transaction changed or deleted, as the engine counts them (every_row.ts;
   * empty: none); a throw rolls the write back and is what the query throws.
   * A write that cannot run in a transaction (VACUUM) runs without it.
   */
  everyRow?: (tables: EveryRow[]) => void;
  /**
   * Who sent the statement (signature.ts): the driver sends it with the
   * signature's comment first and, on PostgreSQL, `application_name` set
   * for its transaction.
   */
  sign?: Signature;
}

/** One table a write changed: its rows inserted, updated and deleted. */
export interface TableChange {
  /** The table as the engine names it (schema-qualified outside the current schema). */
  table: string;
  rows: number;
}

/**
 * A table a write changed every row of (QueryOptions.everyRow): all of the
 * rows it had before the write, at least two, deleted or changed.
 */
export interface EveryRow {
  /** The table as the engine names it; null: `unjudged`, for `why`. */
  table: string | null;
  /** Its rows before the write; null where the engine cannot say. */
  rows: number | null;
  /**
   * `deleted` or `changed` every row; `unjudged`: the engine cannot count
   * the write's rows per table (`why`), so it may have.
   */
  how: "deleted" | "changed" | "unjudged";
  /** Why an `unjudged` write cannot be counted. */
  why?: string;
}

/** The most keys a preview binds; past it, the count alone (KEY_LIMIT). */
export const KEY_LIMIT = 10_000;

/** What a tracked write changed, read from the engine before COMMIT. */
export interface Changes {
  /** Every table the transaction changed, by name. */
  tables: TableChange[];
  /**
   * A digest of the primary keys of the rows the statement itself changed
   * (at most {@linkcode KEY_LIMIT}); null when they are not bound.
   */
  keys: string | null;
  /** Why the keys are not bound (null when they are, or nothing changed). */
  unbound: string | null;
  /** Why the statement's row choice may differ from run to run, or null. */
  choice: string | null;
}

/** A query's result, bounded by `maxRows`. */
export interface QueryResult {
  columns: string[];
  /**
   * Each column's type as the engine names it (`int4`, `VARCHAR`, a SQLite
   * declared type), null where the engine says none; absent where unknown.
   * The console's grid shows them; tool answers do not carry them.
   */
  columnTypes?: (string | null)[];
  rows: Cell[][];
  rowsAffected: number;
  /** Rows were left out (the row cap or the byte budget). */
  truncated: boolean;
  /** What was left out, and why. */
  truncation: Truncation;
  /** A tracked write's changes (QueryOptions.track). */
  changes?: Changes;
}

/** Options shared by the metadata calls. */
export interface CallOptions {
  signal: AbortSignal;
  /** Stops the call on the server when it runs out. */
  timeoutMs: number;
}

/**
 * What the engine itself says of a statement before it runs (`Driver.check`).
 * `parsedTier` is what the engine's grammar alone says (null: no parser
 * here); `tier` adds what its catalog says (a read calling a volatile
 * function is a write). `ok: false` carries the engine's own syntax error.
 */
export type EngineCheck =
  | {
    ok: true;
    parsedTier: Tier | null;
    tier: Tier | null;
    dangerous: boolean;
    reach: string | null;
    /** Why the catalog made a read a write. */
    why: string | null;
    /** Why no AI client may run it at all (a credential catalog). */
    denied?: string | null;
    /** Why the engine may not even plan it (planning would run code). */
    noPlan?: string | null;
    /** Why a write may not be tried and rolled back. */
    noDryRun?: string | null;
    /** Why a write always asks the user (as a DELETE without WHERE). */
    danger?: string | null;
  }
  | { ok: false; message: string };

/** An engine check with nothing to add: no parser here, no syntax error. */
export const NO_OPINION: EngineCheck = Object.freeze({
  ok: true,
  parsedTier: null,
  tier: null,
  dangerous: false,
  reach: null,
  why: null,
});

/** A connection to one database, pooled and opened on first use. */
export interface Driver {
  readonly engine: Engine;
  /** The server's version string (connects if needed). */
  version(options: CallOptions): Promise<string>;
  /** The schemas the login can see, with their table and view counts. */
  listSchemas(options: CallOptions): Promise<SchemaList>;
  /**
   * Tables, views and materialized views, ordered by schema, then name (by
   * code unit; SQLite: attach order, then name): one page of them.
   */
  listTables(options: CallOptions & TableQuery): Promise<TablePage>;
  /**
   * Tables, views and columns whose name or comment contains one of the
   * words, best first (more words matched; exact name, prefix, substring,
   * comment only; tables before columns): one catalog query.
   */
  searchSchema(options: CallOptions & SchemaSearch): Promise<SearchResult>;
  /** One table; null when it does not exist. */
  describeTable(
    table: string,
    options: CallOptions & { schema?: string },
  ): Promise<TableDetail | null>;
  /**
   * The first `maxTables` tables (listTables order) with their columns, in a
   * bounded number of catalog queries whatever the table count.
   */
  overview(
    options: CallOptions & { schema?: string; maxTables: number },
  ): Promise<SchemaOverview>;
  /**
   * A short value that changes whenever a table, view or column is added,
   * dropped, renamed or retyped, or a primary key changes: one cheap catalog
   * query, made to be polled.
   */
  fingerprint(options: CallOptions): Promise<string>;
  /**
   * Run one statement the classifier let through: a read in the engine's
   * read-only mode, a write in a transaction. A write that started committing
   * finishes even when stopped; a stop before that rolls it back.
   */
  query(sql: string, options: QueryOptions): Promise<QueryResult>;
  /**
   * Ask the engine about a statement without running it: its parser (syntax
   * errors, PostgreSQL's statement tree) and, for what the lexer calls a
   * read, its catalog. `tier` is the lexer's verdict, which decides how much
   * must be asked.
   */
  check(sql: string, tier: Tier, options: CallOptions): Promise<EngineCheck>;
  /**
   * `check`'s verdict when the engine needs no session to reach it (its
   * parser alone: a syntax error, `SELECT 1`), else null: the pool then
   * takes none of the connection's sessions for it (issue 38). Absent: every
   * check asks `check`.
   */
  checkLocal?(sql: string, tier: Tier): Promise<EngineCheck | null>;
  /**
   * What the login can do beyond reading data — superuser, reading or writing
   * the server's files, running programs, signalling other sessions — in
   * words; empty when nothing. dbport's read-only rules do not rest on it,
   * but without a least-privilege login they are the only wall.
   */
  loginRisks(options: CallOptions): Promise<string[]>;
  /**
   * Run one read (as `query` in `read` mode: the engine's read-only mode, the
   * statement timeout, `signal`) and hand every row to `onBatch`, a batch at
   * a time, waiting for it before reading on: memory stays bounded whatever
   * the result's size. No row cap, byte budget or cell cap applies (those
   * fields of `options` are ignored); a throw from `onBatch` stops the
   * statement and is what this throws. Called once with no rows for an
   * empty result, so the columns are known. Absent where the engine cannot
   * stream.
   */
  streamRead?(
    sql: string,
    options: QueryOptions,
    onBatch: (columns: string[], rows: Cell[][]) => Promise<void>,
  ): Promise<{ rows: number }>;
  /** Close every pooled connection. */
  close(): Promise<void>;
}
