/**
 * A write that ran without asking and changed every row of a table is
 * rolled back before COMMIT, and the user is asked about it as about a
 * DELETE without WHERE (docs/security.md "Every row, by effect"): the
 * engine's own counts tell, not the statement's words, so `WHERE true`,
 * `MERGE ... ON true`, an upsert of a table from itself and a function whose
 * body empties a table are asked about too. Once approved it runs again,
 * held to its preview.
 *
 * @module
 */

import type { CallContext } from "../context.ts";
import type { FeatureDeps } from "../deps.ts";
import { admitStatement, approvedAtOf } from "./access.ts";
import type { ResultSet } from "./result_schema.ts";
import { runClassified } from "./statement.ts";
import { EveryRowFound } from "./every_row_found.ts";
import type { Vetted } from "./vet.ts";

/**
 * Run a vetted statement (vet.ts). A write no one was asked about runs with
 * `stopOnEveryRow` (every_row_found.ts); when it stops, the user is asked (with its
 * preview), and the approved write runs held to that preview.
 */
export async function runVetted(
  deps: FeatureDeps,
  ctx: CallContext,
  vetted: Vetted,
  limits: { maxRows: number; timeoutSeconds: number; operation: string },
): Promise<ResultSet> {
  const { resolved, statement, preview, params } = vetted;
  const run = {
    maxRows: limits.maxRows,
    timeoutSeconds: limits.timeoutSeconds,
  };
  const unasked = statement.tier === "write" && approvedAtOf(ctx) === null;
  try {
    return await runClassified(deps, ctx, resolved, statement, {
      ...run,
      preview,
      params,
      everyRow: unasked,
    });
  } catch (error) {
    if (!(error instanceof EveryRowFound)) throw error;
    ctx.note?.(`stopped before COMMIT: ${error.message}`);
    const approved = await admitStatement(
      deps,
      ctx,
      resolved,
      statement,
      limits.operation,
      limits.timeoutSeconds,
      params,
      [error.message],
    );
    return await runClassified(deps, ctx, resolved, statement, {
      ...run,
      preview: approved,
      params,
    });
  }
}
