/**
 * How a write preview is told (preview.ts): its one line for the form and the
 * dialogs, its JSON for a host dialog command, and the digest that binds an
 * approval to it.
 *
 * @module
 */

import { sha256Hex } from "../../app/digest.ts";
import type { JsonObject } from "../../protocol/jsonrpc.ts";
import type { WritePreview } from "./preview.ts";

/** The preview's first line: "Changes 3 rows of orders". */
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
    } — the estimate: ~${count(preview.rowsAffected)}`;
  }
  return `Changes ${count(preview.rowsAffected)}${of}`;
}

/** The preview as a host dialog command gets it (`preview` in its JSON). */
export function previewJson(preview: WritePreview): JsonObject {
  return {
    rows_affected: preview.rowsAffected,
    ...(preview.table === null ? {} : { table: preview.table }),
    columns: preview.columns,
    rows: preview.rows,
    ...(preview.tables.length === 0 ? {} : { tables: preview.tables }),
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
  const { exact, rowsAffected, table, tables } = preview;
  return sha256Hex(JSON.stringify({ exact, rowsAffected, table, tables }));
}

/** The denial of a write whose rows changed since the user approved it. */
export function changedMessage(now: number, approved: number): string {
  return `the statement would now change ${
    count(now)
  }, not the ${approved} that were approved; nothing was written; ask again`;
}

function count(rows: number): string {
  return `${rows.toLocaleString("en-US")} row${rows === 1 ? "" : "s"}`;
}
