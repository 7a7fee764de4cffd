/**
 * What the PostgreSQL parser reports: a leaf that the parser and its
 * off-the-loop worker both read.
 *
 * @module
 */

import type { Tier } from "../sql/classifier.ts";

/** A name as written: `schema.name` or `name`, lower-cased as the parser gives it. */
export interface PgName {
  schema: string | null;
  name: string;
}

/** A function call as written: its name and how many arguments it is given. */
export interface PgCall extends PgName {
  /** Arguments given; null when any number may match (VARIADIC). */
  args: number | null;
  /**
   * `t.name` or `(row).name`: a column, or the function `name(t)` when no
   * such column exists (PostgreSQL's functional notation). No function of
   * that name is no error.
   */
  optional?: boolean;
  /**
   * A call only on a server older than this `server_version_num`: the
   * bundled grammar (PostgreSQL 17/18's) reads SQL/JSON and MERGE syntax
   * (`json_array(…)`, `merge_action()`) where an older server calls a
   * function of that name on the search path (vet_sql.ts compares).
   */
  before?: number;
}

/**
 * How the catalog resolves a named object (pg_builtin_targets.ts): `r` a
 * relation (`to_regclass`), `t` a type (`to_regtype`), `f` a routine with
 * its argument types (`to_regprocedure`), `p` a routine by its unique name
 * (`to_regproc`), `o` an operator (`to_regoperator`), `c` a collation, `g` a
 * text search configuration, `d` a text search dictionary (schema and name
 * on the search path), `s` a schema (its name); `x` a name dbport does not
 * resolve (an argument's `%TYPE`).
 */
export type PgObjectKind =
  | "r"
  | "t"
  | "f"
  | "p"
  | "o"
  | "c"
  | "g"
  | "d"
  | "s"
  | "x";

/** An existing object a statement changes, named as the catalog reads it. */
export interface PgNamedObject {
  k: PgObjectKind;
  /** The text the `to_reg*` function reads (kinds r t f p o). */
  t: string;
  /** The schema written, null when unqualified (kinds c g d s). */
  s?: string | null;
  /** The name without its schema (kinds c g d s). */
  n?: string;
  /** The name as written, for a message. */
  w: string;
  /** The kind of the statement that names it (`CommentStmt`). */
  v?: string;
}

/** What the parser found in one statement. */
export interface PgAnalysis {
  tier: Tier;
  /** A DELETE or UPDATE without WHERE, at the top or in a CTE. */
  dangerous: boolean;
  /** What reaches files, code or other hosts; null when nothing does. */
  reach: string | null;
  /** Every function called anywhere in the statement. */
  functions: PgCall[];
  /** Every operator used, named or implied (`IN`, `BETWEEN`, `CASE x WHEN`). */
  operators: PgName[];
  /**
   * Every type named: the targets of casts (`x::type`, `CAST(x AS type)`),
   * column definition lists, XMLTABLE columns, XMLSERIALIZE, RETURNING.
   */
  castTypes: PgName[];
  /** Every relation named (tables, views, CTE names). */
  relations: PgName[];
  /** The relations an INSERT, UPDATE, DELETE or MERGE (a CTE's too) changes. */
  targets: PgName[];
  /**
   * The operator classes index, exclusion-constraint and partition-key
   * elements name (`create index … (x s.opc)`); absent when none.
   */
  opclasses?: PgName[];
  /**
   * The existing objects the statement changes by name (COMMENT, GRANT,
   * DROP, RENAME, SET SCHEMA, ALTER, a trigger's table, ...); absent when
   * none.
   */
  changes?: PgNamedObject[];
  /** Every statement kind in the tree (`SelectStmt`, `VacuumStmt`, …). */
  kinds: string[];
  /** EXPLAIN without ANALYZE: the statement is only planned. */
  plansOnly?: boolean;
}

/** The parser's verdict on a text. */
export type PgParse =
  | { ok: true; statements: number; analysis: PgAnalysis | null }
  | { ok: false; message: string };
