/**
 * Private columns (docs/connections.md "Private columns"): the columns of a
 * connection that no AI client may read. The engine enforces them (the AI
 * login holds no SELECT on them, harden_private.ts; SQLite: the read
 * handle's authorizer); this module is only their grammar and matching.
 *
 * The grammar of one entry, exactly:
 *
 *     entry := [schema "."] table "." column
 *     part  := 1 to 128 characters, none of them ".", ",", a quote
 *              (" ' `), whitespace or a control character
 *
 * In a part, `*` matches any run of characters (none included); every other
 * character matches itself, without regard to case (a pattern errs towards
 * hiding). Two parts (`*.email`, `customers.email`) match that table and
 * column in every schema (MySQL/MariaDB: database; SQLite: main or an
 * attached database). The column part must hold something besides `*`: a
 * pattern that hides every column of a table would hide the table, which is
 * a matter for the login's grants, not for this list. A name holding a `.`
 * cannot be written. Each engine's own schemas and tables (PostgreSQL:
 * pg_ schemas, information_schema; MySQL/MariaDB: mysql,
 * information_schema, performance_schema, sys; SQLite: sqlite_ tables and
 * the catalog's pragma_ functions) are never matched - on that engine only.
 *
 * @module
 */

import type { Engine } from "./engines.ts";

/** The most entries one connection may list. */
export const MAX_PRIVATE_ENTRIES = 200;

const PART = /^[^.,"'`\s\p{Cc}]{1,128}$/u;

/** One entry, parsed. */
export interface PrivatePattern {
  /** The entry as written. */
  text: string;
  /** Null: any schema. */
  schema: RegExp | null;
  table: RegExp;
  column: RegExp;
}

/** Why `entry` is not a private-column entry, or null when it is. */
export function checkPrivateEntry(entry: string): string | null {
  const parts = entry.split(".");
  if (parts.length < 2 || parts.length > 3) {
    return `"${entry}" must be table.column or schema.table.column (patterns: *.email, *.*ssn*)`;
  }
  for (const part of parts) {
    if (!PART.test(part)) {
      return `"${entry}" has an empty or invalid part ${
        JSON.stringify(part)
      } (1 to 128 characters; no ".", ",", quotes, spaces or control characters)`;
    }
  }
  if (/^\*+$/.test(parts.at(-1)!)) {
    return `"${entry}" would make every column of a table private; name the column (a whole table is kept from the AI login by its grants)`;
  }
  return null;
}

/** Why `value` is not a list of private-column entries, or null. */
export function checkPrivateColumns(value: unknown): string | null {
  if (!Array.isArray(value)) {
    return 'must be a list of "schema.table.column" entries or patterns';
  }
  if (value.length > MAX_PRIVATE_ENTRIES) {
    return `holds ${value.length} entries; at most ${MAX_PRIVATE_ENTRIES}`;
  }
  const seen = new Set<string>();
  for (const entry of value) {
    if (typeof entry !== "string") return "must hold strings only";
    const problem = checkPrivateEntry(entry);
    if (problem !== null) return problem;
    if (seen.has(entry.toLowerCase())) return `lists "${entry}" twice`;
    seen.add(entry.toLowerCase());
  }
  return null;
}

/**
 * The CLI's `--private "a, b"`: entries split on commas, spaces around them
 * dropped; an empty text clears the list. Throws naming the bad entry.
 */
export function parsePrivateList(text: string): string[] {
  const entries = text.split(",").map((e) => e.trim()).filter((e) => e !== "");
  const problem = checkPrivateColumns(entries);
  if (problem !== null) throw new Error(problem);
  return entries;
}

function glob(part: string): RegExp {
  const body = part.split("*").map((piece) =>
    piece.replace(/[\\^$.|?+()[\]{}]/g, "\\$&")
  ).join(".*");
  return new RegExp(`^${body}$`, "iu");
}

/** Parse checked entries (see {@linkcode checkPrivateColumns}). */
export function privatePatterns(
  entries: readonly string[] | undefined,
): PrivatePattern[] {
  return (entries ?? []).map((text) => {
    const parts = text.split(".");
    const [column, table, schema] = parts.reverse() as [
      string,
      string,
      string?,
    ];
    return {
      text,
      schema: schema === undefined ? null : glob(schema),
      table: glob(table),
      column: glob(column),
    };
  });
}

const MYSQL_SYSTEM = new Set([
  "mysql",
  "information_schema",
  "performance_schema",
  "sys",
]);
/** SQLite's table-valued PRAGMA functions that read the catalog. */
const PRAGMA_FUNCTION =
  /^pragma_(table_x?info|table_list|index_(list|x?info)|foreign_key_(list|check)|database_list|collation_list|function_list|module_list|pragma_list|compile_options|integrity_check|quick_check)$/i;

/**
 * Whether `schema.table` is the engine's own: never private, never matched.
 * Per engine - a PostgreSQL schema may be called `sys` or `mysql`, a table
 * `sqlite_export` or `pragma_notes`, and those are the user's.
 */
function engineOwn(engine: Engine, schema: string, table: string): boolean {
  switch (engine) {
    case "postgres": // CREATE SCHEMA refuses names starting with pg_.
      return /^(pg_|information_schema$)/i.test(schema);
    case "mysql":
      return MYSQL_SYSTEM.has(schema.toLowerCase());
    case "sqlite": // CREATE TABLE refuses names starting with sqlite_.
      return /^sqlite_/i.test(table) || PRAGMA_FUNCTION.test(table);
  }
}

/** The entry that makes `schema.table.column` private on `engine`, or null. */
export function privateMatch(
  patterns: readonly PrivatePattern[],
  schema: string,
  table: string,
  column: string,
  engine: Engine,
): PrivatePattern | null {
  if (patterns.length === 0 || engineOwn(engine, schema, table)) return null;
  return patterns.find((p) =>
    (p.schema === null || p.schema.test(schema)) && p.table.test(table) &&
    p.column.test(column)
  ) ?? null;
}

/** A column named in a refusal: `"table.column"`, the schema when not the usual one. */
export function columnLabel(
  schema: string,
  table: string,
  column: string,
  usualSchema: string | null,
): string {
  return schema === usualSchema
    ? `${table}.${column}`
    : `${schema}.${table}.${column}`;
}
