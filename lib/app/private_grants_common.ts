/**
 * What the AI login's private-column grants share across engines: the
 * relations and their private columns, the views withheld because they read
 * one, and the catalog reads' limits (lib/app/harden_private.ts for
 * PostgreSQL, harden_private_mysql.ts for MySQL/MariaDB).
 *
 * @module
 */

import { privateMatch, type PrivatePattern } from "../db/private_columns.ts";
import type { Engine } from "../db/engines.ts";

/** How the catalog is read: one read-only statement, rows enough for any schema. */
export const CATALOG = {
  signal: new AbortController().signal,
  timeoutMs: 30_000,
  mode: "read" as const,
  maxRows: 1_000_000,
  maxBytes: 512 * 1024 * 1024,
  maxCellChars: 1_000_000,
};

/** What the grants keep from the AI login, and the statements that do it. */
export interface PrivateGrants {
  /** Per statement, the schema it is about (a schema dropped meanwhile is passed over). */
  statements: { sql: string; schema: string }[];
  /** `schema.table.column` of every private column found. */
  columns: string[];
  /** Views (and materialized views) withheld whole: they read a private column. */
  views: string[];
  /** Reads the AI login must be refused, to prove the grants hold. */
  mustNotRead: string[];
  /** What the grants cannot do, said to the owner. */
  notes: string[];
}

export interface Relation {
  schema: string;
  name: string;
  view: boolean;
  columns: string[];
}

export function key(schema: string, name: string): string {
  return JSON.stringify([schema, name]);
}

/**
 * The views that read a private column, a whole row of a relation holding
 * one, or a withheld view: found again until nothing changes.
 */
export function withheldViews(
  reads: { view: string; relation: string; column: string }[],
  privateOf: Map<string, Set<string>>,
): Set<string> {
  const withheld = new Set<string>();
  let changed = true;
  while (changed) {
    changed = false;
    for (const read of reads) {
      if (withheld.has(read.view)) continue;
      const hidden = privateOf.get(read.relation);
      if (
        withheld.has(read.relation) ||
        (hidden !== undefined &&
          (read.column === "" || hidden.has(read.column)))
      ) {
        withheld.add(read.view);
        changed = true;
      }
    }
  }
  return withheld;
}

/** Each relation's private columns, by relation key (only those with one). */
export function privateColumnsOf(
  relations: Relation[],
  patterns: PrivatePattern[],
  engine: Engine,
): Map<string, Set<string>> {
  const found = new Map<string, Set<string>>();
  for (const r of relations) {
    const hidden = r.columns.filter((c) =>
      privateMatch(patterns, r.schema, r.name, c, engine) !== null
    );
    if (hidden.length > 0) found.set(key(r.schema, r.name), new Set(hidden));
  }
  return found;
}

/**
 * What a view handing on a function's reads reads (PostgreSQL: a
 * materialized view or a SECURITY DEFINER function, PG_VIEW_FUNCTIONS;
 * MySQL: any stored function, {@linkcode mysqlViewReads}):
 * a `SQL SECURITY DEFINER` view runs the function as its definer, so the
 * function may read a private column the AI login could not (its body is
 * not the view's definition, and may call other functions): such a view is
 * withheld whatever the function does.
 */
export const STORED_FUNCTIONS = key("", "stored functions");
