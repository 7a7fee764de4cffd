/**
 * What a SQLite write changed, read before COMMIT (docs/security.md "What
 * the hold compares"). SQLite counts the rows a statement changed itself
 * (`changes()`) and every row the handle changed, triggers and foreign-key
 * actions included (`total_changes()`), but not which table a trigger
 * wrote: rows beyond the statement's own are told as one entry.
 *
 * @module
 */

import { tableName, UPSERT_UNKEYED } from "../tracked_write.ts";
import type { TableChange } from "../types.ts";

/** The name under which rows changed by triggers and foreign keys are told. */
export const SQLITE_OTHER_TABLES =
  "other tables (by its triggers or foreign keys)";

/** How SQLite returns and binds a tracked write's rows (tracked_write.ts). */
export const SQLITE_TRACK = {
  returns: ["INSERT", "UPDATE", "DELETE", "REPLACE"],
  keyed: ["UPDATE", "DELETE"],
  unkeyed: (keyword: string, upsert: boolean) =>
    keyword === "REPLACE" || upsert ? UPSERT_UNKEYED : null,
  keyValue: (columns: string[]) =>
    `json_array(${
      columns.map((column) => `"${column.replaceAll('"', '""')}"`).join(", ")
    })`,
} as const;

/** The statement's own rows on its target, the rest as other tables. */
export function sqliteCounts(
  target: { schema: string | null; name: string } | null,
  direct: number,
  total: number,
): TableChange[] {
  const tables: TableChange[] = [];
  if (direct > 0) tables.push({ table: tableName(target), rows: direct });
  if (total > direct) {
    tables.push({ table: SQLITE_OTHER_TABLES, rows: total - direct });
  }
  return tables;
}

/** A table's primary-key columns, in key order (parameters: table, schema). */
export const SQLITE_KEY_COLUMNS =
  "select name from pragma_table_info(?, ?) where pk > 0 order by pk";
