/**
 * How a write preview is told (preview.ts): its one line for the form and the
 * dialogs, its JSON for a host dialog command, and the digest that binds an
 * approval to it.
 *
 * @module
 */

import { sha256Hex } from "../../app/digest.ts";
import type { JsonObject } from "../../protocol/jsonrpc.ts";
import type { WritePreview } from "./write_preview.ts";

/**
 * The preview's first line: "Changes 3 rows of orders", or for a dry run
 * every table the transaction changes ("Changes 1 row of w and 8 rows of
 * log"), then what is not bound and why the row choice may vary.
 */
export function previewHeadline(preview: WritePreview): string {
  if (preview.tables.length > 0) {
    return preview.tables.map(({ table, rows }) =>
      `Removes ${table} with ${count(rows)}`
    ).join("; ");
  }
  const of = preview.table === null ? "" : ` of ${preview.table}`;
  if (preview.rowsAffected === null) {
    return `No preview${of}: ${preview.note ?? "none is available"}`;
  }
  if (!preview.exact) {
    return `No dry run${of}: ${
      preview.note ?? "none is available"
    } \u2014 the estimate: ~${count(preview.rowsAffected)}`;
  }
  const changed = (preview.changes ?? []).filter((table) => table.rows > 0);
  const line = changed.length === 0 || preview.changes === null
    ? `Changes ${count(preview.rowsAffected)}${of}`
    : `Changes ${tableList(changed)}`;
  const notes = [preview.choice, preview.unbound].filter((note) =>
    note !== null
  );
  return notes.length === 0 ? line : `${line} (${notes.join("; ")})`;
}

/** "1 row of w and 8 rows of log". */
function tableList(tables: { table: string; rows: number }[]): string {
  const parts = tables.map(({ table, rows }) => `${count(rows)} of ${table}`);
  return parts.length === 1
    ? parts[0]!
    : `${parts.slice(0, -1).join(", ")} and ${parts.at(-1)}`;
}

/** The preview as a host dialog command gets it (`preview` in its JSON). */
export function previewJson(preview: WritePreview): JsonObject {
  return {
    rows_affected: preview.rowsAffected,
    ...(preview.table === null ? {} : { table: preview.table }),
    columns: preview.columns,
    rows: preview.rows,
    ...(preview.tables.length === 0 ? {} : { tables: preview.tables }),
    ...(preview.changes === null ? {} : {
      changes: preview.changes.filter((table) => table.rows > 0),
      keys_bound: preview.keys !== null,
    }),
    ...(preview.choice === null ? {} : { row_choice: preview.choice }),
    exact: preview.exact,
    ...(preview.note === null ? {} : { note: preview.note }),
  };
}

/**
 * What binds an approval to the preview the user saw: what it changes, not
 * the sample rows (a dry run's INSERT draws new sequence values each time).
 */
export function previewDigest(preview: WritePreview | null): string {
  if (preview === null) return "";
  const { exact, rowsAffected, table, tables, changes, keys } = preview;
  return sha256Hex(
    JSON.stringify({ exact, rowsAffected, table, tables, changes, keys }),
  );
}

/** The denial of a write whose rows changed since the user approved it. */
export function changedMessage(now: number, approved: number): string {
  return `the statement would now change ${
    count(now)
  }, not the ${approved} that were approved; nothing was written; ask again`;
}

/** The denial of a write whose per-table counts changed since approval. */
export function changedTablesMessage(
  now: { table: string; rows: number }[],
  approved: { table: string; rows: number }[],
): string {
  const said = (tables: { table: string; rows: number }[]) => {
    const changed = tables.filter((table) => table.rows > 0);
    return changed.length === 0 ? "no rows" : tableList(changed);
  };
  return `the statement would now change ${said(now)}, not the ${
    said(approved)
  } that were approved; nothing was written; ask again`;
}

/** The denial of a write that would change other rows than approved. */
export function changedKeysMessage(
  approved: { table: string; rows: number }[],
): string {
  const tables = approved.filter((table) => table.rows > 0).map((table) =>
    table.table
  );
  return `the statement would now change other rows${
    tables.length === 0 ? "" : ` of ${tables.join(", ")}`
  } than the ones that were approved (their primary keys differ); nothing was written; ask again`;
}

function count(rows: number): string {
  return `${rows.toLocaleString("en-US")} row${rows === 1 ? "" : "s"}`;
}
