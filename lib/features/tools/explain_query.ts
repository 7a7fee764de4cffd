/**
 * `explain_query`: the engine's plan for one statement, built by dbport (the
 * model sends the statement, never the EXPLAIN), with a summary a model can
 * act on. `analyze` runs the statement, so it is for reads only, in the
 * read-only transaction and under the statement timeout.
 *
 * @module
 */

import { privateJoinRefusal } from "../../db/private_joins.ts";
import { answerBudget } from "./answer_budget.ts";
import { DIALECTS } from "../../db/dialect.ts";
import type { Plan, PlanSummary } from "../../db/explain.ts";
import type { Cell, QueryOptions, QueryResult } from "../../db/types.ts";
import type { Classified } from "../../db/sql/classifier.ts";
import type { CallContext } from "../context.ts";
import type { Resolved } from "./resolved.ts";
import { ENGINES } from "../../db/engines.ts";
import { planRefusal } from "../../db/dry_run.ts";
import * as s from "../../base/schema.ts";
import type { ToolEntry } from "../catalog.ts";
import { callSettings, catalogCall, type FeatureDeps } from "../deps.ts";
import { withinDeadline } from "../context.ts";
import { admit, checkConnectionId, resolveConnection } from "./access.ts";
import { defineTool } from "./define.ts";
import { invalidArgument, rethrow, ToolFailure } from "./failure.ts";
import { refusePrivate } from "./private_refusal.ts";
import { CONNECTION_ID } from "./shared.ts";
import { checkPlanLimits } from "./plan_guard.ts";
import { refuseUnheldPrivate } from "./vet.ts";
import {
  classifyQuery,
  queryText,
  TIMEOUT_SECONDS,
  timeoutSeconds,
} from "./statement.ts";

/** Leading words that already ask for a plan (or, on MariaDB, run one). */
const PLAN_WORDS = new Set([
  "EXPLAIN",
  "ANALYZE",
  "ANALYSE",
  "DESCRIBE",
  "DESC",
]);

/** Rows a plan may take (SQLite gives one per step). */
const PLAN_ROWS = 10_000;

/** The summary a model acts on. */
const SUMMARY = s.object({
  top_node: s.nullable(s.string()),
  estimated_rows: s.nullable(s.number()),
  estimated_cost: s.nullable(s.number()),
  actual_rows: s.nullable(s.number()),
  actual_time_ms: s.nullable(s.number()),
  full_scans: s.array(s.object({
    table: s.string(),
    estimated_rows: s.nullable(s.number()),
  }, ["table", "estimated_rows"])),
}, [
  "top_node",
  "estimated_rows",
  "estimated_cost",
  "actual_rows",
  "actual_time_ms",
  "full_scans",
]);

/** What `explain_query` answers. */
const OUTPUT = s.object({
  statement: s.string({ description: "The plan statement dbport ran." }),
  analyzed: s.boolean(),
  plan: s.any(
    "The engine's plan: a JSON document (PostgreSQL, MySQL/MariaDB), or lines of text (SQLite, MySQL's EXPLAIN ANALYZE).",
  ),
  summary: SUMMARY,
  is_truncated: s.boolean({
    description:
      "The plan was longer than the answer budget and was cut: the summary reads only what was kept.",
  }),
}, ["statement", "analyzed", "plan", "summary", "is_truncated"]);

/** The `explain_query` tool. */
export function explainQueryTool(deps: FeatureDeps): ToolEntry {
  return defineTool({
    name: "explain_query",
    description:
      "A statement's plan (send it without EXPLAIN): estimated rows, cost, full scans; analyze runs a read to measure it.",
    arguments: {
      properties: {
        connection_id: CONNECTION_ID,
        query: s.string({ description: "One SQL statement, without EXPLAIN." }),
        analyze: s.boolean({ description: "Run it to measure (reads only)." }),
        timeout_seconds: TIMEOUT_SECONDS,
      },
      required: ["connection_id", "query"],
    },
    outputSchema: OUTPUT,
    annotations: {
      title: "Explain query",
      readOnlyHint: true,
      destructiveHint: false,
      idempotentHint: true,
      openWorldHint: false,
    },
    async run(args, ctx) {
      const settings = callSettings(deps, ctx);
      checkConnectionId(args.connection_id);
      const query = queryText(args);
      ctx.record?.({ sql: query });
      const analyze = args.analyze === true;
      const timeout = timeoutSeconds(args, settings);
      ctx.progress(0, 1, "Checking the statement");
      const resolved = resolveConnection(
        deps,
        ctx,
        args.connection_id,
      );
      // As a statement's gate (vet.ts): ANALYZE's actual rows answer a WHERE.
      await refuseUnheldPrivate(deps, ctx, resolved);
      const statement = await classifyQuery(query, resolved, ctx);
      refuseUnplanned(query, statement, resolved, analyze);
      const engine = resolved.driver.engine;
      if (analyze) {
        // analyze runs the read: the token's rows budget and the
        // connection's plan limits hold it too.
        const spent = ctx.budget?.refuse("read");
        if (spent !== undefined && spent !== null) {
          throw new ToolFailure("denied", spent);
        }
        await checkPlanLimits(ctx, resolved, statement, timeout);
      }
      await admit(deps, ctx, resolved.connection, null, "explaining a query");
      const dialect = DIALECTS[engine];
      const mariadb = analyze && dialect.isMariaDb !== null &&
        dialect.isMariaDb(
          await resolved.driver.version(catalogCall(deps, ctx)).catch((
            error,
          ) => rethrow(error, resolved.label)),
        );
      const text = dialect.planStatement(statement.text, {
        analyze,
        mariadb,
      });
      ctx.progress(0.3, 1, `Asking ${resolved.label} for the plan`);
      // The statement is echoed cut, and the plan gets the rest of the budget.
      const echoed = echoOf(text);
      const room = Math.max(1_000, answerBudget(settings) - echoed.length);
      const limits = {
        mode: "read" as const,
        maxRows: PLAN_ROWS,
        maxBytes: room,
        // A plan is one cell: the answer budget bounds it, not the cell cap.
        maxCellChars: Math.max(500, room - 1_000),
        timeoutMs: withinDeadline(ctx, timeout * 1000),
        signal: ctx.signal,
      };
      const { result, plan, summary } = await readPlan(
        resolved,
        ctx,
        { text, statement: statement.text, analyze },
        limits,
      );
      // The rows the analyzed read produced count as read.
      if (analyze) ctx.budget?.spent("read", summary.actualRows ?? 0);
      ctx.progress(1, 1, "Plan read");
      return fitPlan({
        statement: echoed,
        analyzed: analyze,
        plan,
        summary: summaryAnswer(summary),
        is_truncated: result.truncated || result.truncation.cells > 0,
      }, answerBudget(settings));
    },
  });
}

/**
 * Refused unless explain_query plans `statement`: a join a private column
 * would answer, a statement the planner must not evaluate, one that asks
 * for a plan itself, a write to analyze, or a write the engine will not
 * plan read-only.
 */
function refuseUnplanned(
  query: string,
  statement: Classified,
  resolved: Resolved,
  analyze: boolean,
): void {
  // ANALYZE runs it, and a plan's row counts answer the join's question.
  const blind = privateJoinRefusal(
    query,
    resolved.driver.engine,
    resolved.connection.privateColumns,
  );
  if (blind !== null) throw new ToolFailure("denied", blind);
  const noPlan = planRefusal(statement);
  if (noPlan !== null) {
    throw new ToolFailure(
      "denied",
      `explain_query does not plan this statement: the planner evaluates functions with constant arguments while planning, and ${noPlan}`,
    );
  }
  if (PLAN_WORDS.has(statement.keyword.toUpperCase())) {
    throw invalidArgument(
      `send the statement itself: explain_query builds the ${statement.keyword.toUpperCase()} (drop it from query)`,
    );
  }
  if (analyze && statement.tier !== "read") {
    throw new ToolFailure(
      "denied",
      "analyze runs the statement, and this one writes: explain_query analyzes reads only (without analyze the plan is shown and nothing runs)",
    );
  }
  const engine = resolved.driver.engine;
  if (statement.tier !== "read" && !ENGINES[engine].plansWritesReadOnly) {
    throw new ToolFailure(
      "unsupported",
      `${
        ENGINES[engine].label
      } will not plan a write inside dbport's read-only transaction; explain the SELECT that finds the same rows instead`,
    );
  }
}

/**
 * The plan `text` asks `resolved` for, within `limits`, with its summary;
 * an analyzed read the engine measures nothing of (`countedAnalyze`) is run
 * once more, counted, for its rows and time.
 */
async function readPlan(
  resolved: Resolved,
  ctx: CallContext,
  asked: { text: string; statement: string; analyze: boolean },
  limits: QueryOptions,
): Promise<{ result: QueryResult; plan: Plan; summary: PlanSummary }> {
  const { text, analyze } = asked;
  const dialect = DIALECTS[resolved.driver.engine];
  const result = await resolved.driver.query(text, limits).catch(
    async (error) => {
      // The engine refuses to plan a read of a private column too.
      await refusePrivate(resolved, ctx, error);
      return rethrow(error, resolved.label);
    },
  );
  const plan = dialect.planOf(result.rows);
  const summary = dialect.summarize(plan);
  if (analyze && dialect.countedAnalyze !== null) {
    // The engine measures nothing itself: count what the read returns.
    const started = performance.now();
    const counted = await resolved.driver.query(
      dialect.countedAnalyze(asked.statement),
      { ...limits, maxRows: 1 },
    ).catch((error) => rethrow(error, resolved.label));
    summary.actualTimeMs = Math.round((performance.now() - started) * 100) /
      100;
    summary.actualRows = Number(counted.rows[0]?.[0] ?? 0);
  }
  return { result, plan, summary };
}

/** The longest plan statement the answer echoes whole. */
const ECHO_CHARS = 2_000;

/** The plan statement as the answer echoes it: cut past {@linkcode ECHO_CHARS}. */
function echoOf(text: string): string {
  return text.length <= ECHO_CHARS
    ? text
    : `${text.slice(0, ECHO_CHARS)}…[cut: ${
      text.length - ECHO_CHARS
    } more characters of the statement you sent]`;
}

/**
 * The answer within `budget` once measured whole: a plan cut to its cell
 * share can still pass it by its JSON escapes and the summary beside it, so
 * a text plan is cut further, by what is over.
 */
function fitPlan<T extends { plan: Cell; is_truncated: boolean }>(
  answer: T,
  budget: number,
): T {
  const over = JSON.stringify(answer).length - budget;
  if (over <= 0 || typeof answer.plan !== "string") return answer;
  const keep = Math.max(0, answer.plan.length - over - 80);
  return {
    ...answer,
    plan: `${answer.plan.slice(0, keep)}…[cut: ${
      answer.plan.length - keep
    } more characters]`,
    is_truncated: true,
  };
}

function summaryAnswer(summary: PlanSummary): s.Infer<typeof SUMMARY> {
  return {
    top_node: summary.topNode,
    estimated_rows: summary.estimatedRows,
    estimated_cost: summary.estimatedCost,
    actual_rows: summary.actualRows,
    actual_time_ms: summary.actualTimeMs,
    full_scans: summary.fullScans.map((scan) => ({
      table: scan.table,
      estimated_rows: scan.estimatedRows,
    })),
  };
}
