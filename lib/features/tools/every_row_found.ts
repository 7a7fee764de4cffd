/**
 * The stop of a write no one was asked about that changed every row of a
 * table (every_row.ts): thrown before COMMIT, so the write is rolled back.
 *
 * @module
 */

import { DbError } from "../../db/errors.ts";
import { everyRowReason } from "../../db/every_row.ts";
import type { EveryRow } from "../../db/types.ts";

/**
 * Thrown by an unasked write's `everyRow` hook: the write is rolled back.
 * A DbError, so the drivers hand it back as it is.
 */
export class EveryRowFound extends DbError {
  constructor(readonly found: readonly EveryRow[]) {
    super("held", everyRowReason(found));
  }
}

/** The hook of a write no one was asked about: any table found stops it. */
export function stopOnEveryRow(found: EveryRow[]): void {
  if (found.length > 0) throw new EveryRowFound(found);
}
