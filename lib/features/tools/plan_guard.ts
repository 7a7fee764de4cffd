/**
 * The plan guard of `execute_query` (and `explain_query`'s analyze): a read
 * on a connection with `maxEstimatedRows` or `maxEstimatedCost` is planned
 * first — after it was classified and vetted, so planning runs nothing the
 * allowlist did not admit — and refused when its estimate is over a limit
 * (docs/security.md "Reads refused by their plan"). The estimates are
 * lib/db/plan_estimate.ts's and plan_limits.ts's.
 *
 * @module
 */

import { cliCommand } from "../../app/cli_command.ts";
import type { Classified } from "../../db/sql/classifier.ts";
import { planRefusal } from "../../db/dry_run.ts";
import {
  estimateRead,
  METADATA,
  metadataRefusal,
  PLANNED,
} from "../../db/plan_estimate.ts";
import {
  hasPlanLimits,
  planLimitRefusal,
  type PlanLimits,
} from "../../db/plan_limits.ts";
import type { BindValue, QueryOptions } from "../../db/types.ts";
import { type CallContext, withinDeadline } from "../context.ts";
import type { Resolved } from "./access.ts";
import { rethrow, ToolFailure } from "./failure.ts";

/** Rows a plan statement may return. */
const PLAN_ROWS = 100_000;

/**
 * Refuse `statement` (a read) when its plan's estimate is over its
 * connection's limits; a no-op when the connection sets none.
 */
export async function checkPlanLimits(
  ctx: CallContext,
  resolved: Resolved,
  statement: Classified,
  timeoutSeconds: number,
  params?: readonly BindValue[],
): Promise<void> {
  const { connection } = resolved;
  const limits: PlanLimits = {
    ...(connection.maxEstimatedRows === undefined
      ? {}
      : { maxEstimatedRows: connection.maxEstimatedRows }),
    ...(connection.maxEstimatedCost === undefined
      ? {}
      : { maxEstimatedCost: connection.maxEstimatedCost }),
  };
  if (statement.tier !== "read" || !hasPlanLimits(limits)) return;
  const keyword = statement.keyword.toUpperCase();
  const engine = resolved.driver.engine;
  if (METADATA.has(keyword)) {
    const refused = metadataRefusal(statement.text, engine);
    if (refused === null) return;
    throw new ToolFailure(
      "denied",
      `${resolved.label} refuses reads over a planned size, and dbport cannot plan a ${refused}; nothing was run (send the query itself, or use explain_query for a plan)`,
    );
  }
  if (!PLANNED.has(keyword)) {
    // Unsure is refused: EXPLAIN ANALYZE, say, runs what it explains.
    throw new ToolFailure(
      "denied",
      `${resolved.label} refuses reads over a planned size, and dbport plans only SELECT, WITH, VALUES and TABLE statements, not ${keyword}; nothing was run (send the query itself, or use explain_query for a plan)`,
    );
  }
  const noPlan = planRefusal(statement);
  if (noPlan !== null) {
    // Unsure is refused: a read the guard cannot estimate does not run.
    throw new ToolFailure(
      "denied",
      `${resolved.label} refuses reads over a planned size, and this one cannot be planned safely (planning evaluates functions with constant arguments, and ${noPlan}); nothing was run`,
    );
  }
  const options: QueryOptions = {
    mode: "read",
    maxRows: PLAN_ROWS,
    maxBytes: 64 * 1024 * 1024,
    maxCellChars: 16 * 1024 * 1024,
    timeoutMs: withinDeadline(ctx, timeoutSeconds * 1000),
    signal: ctx.signal,
    // The plan of the statement with its placeholders' values bound.
    ...(params === undefined ? {} : { params }),
  };
  const run = (sql: string) =>
    resolved.driver.query(sql, options).catch((error) =>
      rethrow(error, resolved.label)
    );
  const estimate = await estimateRead(engine, run, statement.text, limits);
  if (limits.maxEstimatedCost !== undefined && estimate.cost === null) {
    throw new ToolFailure(
      "denied",
      `${resolved.label} refuses reads over a planned cost (maxEstimatedCost), and this server's plan gives no cost (MariaDB before 11 does not); nothing was run. Ask the user to set maxEstimatedRows instead (${cliCommand()} connections set ${resolved.label} --max-estimated-cost off --max-estimated-rows N)`,
    );
  }
  if (limits.maxEstimatedRows !== undefined && estimate.rows === null) {
    throw new ToolFailure(
      "denied",
      `${resolved.label} refuses reads over a planned size, and the plan of this one gives no row estimate${
        estimate.unsized === undefined ? "" : ` (${estimate.unsized})`
      }; nothing was run`,
    );
  }
  const refusal = planLimitRefusal(
    estimate,
    limits,
    resolved.label,
    cliCommand(),
  );
  if (refusal !== null) throw new ToolFailure("denied", refusal);
}
