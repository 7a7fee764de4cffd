/**
 * What a write would do, as the user sees it before approving: a leaf, read
 * by the preview that makes it (preview.ts), the texts that show it
 * (preview_text.ts) and the consent that carries it (consent.ts).
 *
 * @module
 */

import type { Cell, TableChange } from "../../db/types.ts";

/** What a write would do, as the user sees it before approving. */
export interface WritePreview {
  /** Measured by a dry run (true), or the engine's estimate (false). */
  exact: boolean;
  /** Rows the statement changes; null when not even an estimate exists. */
  rowsAffected: number | null;
  /** The table the statement changes, as written in it. */
  table: string | null;
  /** Up to `SAMPLE_ROWS` (preview_sql.ts) changed rows, as the statement leaves them. */
  columns: string[];
  rows: Cell[][];
  /** DROP/TRUNCATE: each table it removes or empties, with its row count. */
  tables: { table: string; rows: number }[];
  /** Why the preview is only an estimate or absent. */
  note: string | null;
  /**
   * A dry run's account of every table the transaction changed, read from
   * the engine before its rollback; null for an estimate or no preview.
   */
  changes: TableChange[] | null;
  /** The digest of the changed rows' primary keys; null when not bound. */
  keys: string | null;
  /** Why the keys are not bound, when rows change and they are not. */
  unbound: string | null;
  /** Why the statement's row choice may differ from run to run. */
  choice: string | null;
}
