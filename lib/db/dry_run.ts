/**
 * Whether a write may be tried in a transaction that is rolled back, and
 * whether its plan may be asked for, as the engine's catalog decided
 * (PostgreSQL: pg_vet.ts). A dry run runs everything the write evaluates,
 * its targets' triggers and cascades included, before anyone approves; a
 * plan folds functions with constant arguments. Either may run only what
 * cannot escape a rollback (docs/security.md "What a dry run may run").
 *
 * @module
 */

import type { Classified } from "./sql/classifier.ts";

/**
 * Why `statement` may not be dry-run (a sentence), null when it may, or
 * undefined when the engine gave no verdict (the caller's own rules apply).
 */
export function dryRunRefusal(
  statement: Classified,
): string | null | undefined {
  if (statement.noDryRun === undefined) return undefined;
  return statement.noDryRun === null
    ? null
    : `no dry run, since a rollback may not undo what it runs: ${statement.noDryRun}`;
}

/** Why the engine may not even plan `statement`, or null. */
export function planRefusal(statement: Classified): string | null {
  return statement.noPlan ?? null;
}
