/**
 * The schema overview every engine builds the same way: its table list, cut
 * at `maxTables`, joined with one catalog query's worth of columns.
 *
 * @module
 */

import type {
  ColumnSummary,
  SchemaOverview,
  TableColumns,
  TableSummary,
} from "./types.ts";

/** A column row of a catalog query, naming its table. */
export interface ColumnRow extends ColumnSummary {
  schema: string;
  table: string;
}

/**
 * Join the first `maxTables` of `tables` with their columns; `total` is how
 * many tables there are in all. Columns keep the order they come in (the
 * catalog's column order); a table the column query did not see (dropped in
 * between) keeps an empty list.
 */
export function assembleOverview(
  { tables, total }: { tables: readonly TableSummary[]; total: number },
  maxTables: number,
  columns: Iterable<ColumnRow>,
): SchemaOverview {
  const kept: TableColumns[] = tables.slice(0, Math.max(0, maxTables)).map((
    table,
  ) => ({ ...table, columns: [] }));
  const byKey = new Map(
    kept.map((table) => [key(table.schema, table.name), table]),
  );
  for (const row of columns) {
    byKey.get(key(row.schema, row.table))?.columns.push({
      name: row.name,
      dataType: row.dataType,
      nullable: row.nullable,
      primaryKey: row.primaryKey,
    });
  }
  return { tables: kept, totalTables: total };
}

function key(schema: string, name: string): string {
  return JSON.stringify([schema, name]);
}

/** Hex SHA-256 of a text: a fingerprint the engine could not compute itself. */
export async function digest(text: string): Promise<string> {
  const bytes = await crypto.subtle.digest(
    "SHA-256",
    new TextEncoder().encode(text),
  );
  return Array.from(
    new Uint8Array(bytes),
    (b) => b.toString(16).padStart(2, "0"),
  )
    .join("");
}
