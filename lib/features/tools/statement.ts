/**
 * What `execute_query` and `confirm_destructive_operation` share: checking
 * the query text and timeout, classifying the statement, the gates a write
 * passes (docs/wire.md "Authentication" 2–4), and running it with progress
 * (docs/wire.md "Progress streaming": 0.0, 0.3, 1.0) into the result set.
 *
 * @module
 */

import * as s from "../../base/schema.ts";
import type { SavedConnection } from "../../app/connections.ts";
import type { Settings } from "../../app/settings.ts";
import type { Classified } from "../../db/sql/classifier.ts";
import { wire } from "../../protocol/errors.ts";
import { type CallContext, withinDeadline } from "../context.ts";
import { DbError } from "../../db/errors.ts";
import type { BindValue, QueryOptions, QueryResult } from "../../db/types.ts";
import { callSettings, type FeatureDeps } from "../deps.ts";
import { approvedAtOf, type Resolved } from "./access.ts";
import { invalidArgument, rethrow, ToolFailure } from "./failure.ts";
import { HOLD_TRACK, holdTo, type WritePreview } from "./preview.ts";
import { answerBudget } from "./answer_budget.ts";
import { refusePrivate } from "./private_refusal.ts";
import { signatureOf } from "./sign.ts";
import { classifyQuery } from "./classify.ts";
import { EveryRowFound, stopOnEveryRow } from "./every_row_found.ts";
import { type ResultSet } from "./result_schema.ts";
import {
  answerLimits,
  checkColumnNames,
  countRows,
  fitRows,
  isCut,
  narrowWrite,
  truncationOf,
} from "./result_set.ts";

export { classifyQuery };
export {
  CELL_ENCODING,
  RESULT_SET_SCHEMA,
  type ResultSet,
  TRUNCATION_REASONS,
  TRUNCATION_SCHEMA,
} from "./result_schema.ts";

/** `1 row`, `3 rows`: the activity log is read by people. */
function rowCount(n: number): string {
  return `${n} ${n === 1 ? "row" : "rows"}`;
}

/** The activity log's account of a write's preview. */
function previewNote(preview: WritePreview): string {
  if (preview.tables.length > 0) {
    return `previewed ${
      preview.tables.map((t) => `${t.table}: ${rowCount(t.rows)}`).join(", ")
    }`;
  }
  return preview.rowsAffected === null
    ? "no preview"
    : `previewed ${preview.exact ? "" : "about "}${
      rowCount(preview.rowsAffected)
    }`;
}

/** The longest query text, in UTF-16 code units ("100 KB"). */
export const MAX_QUERY_LENGTH = 102_400;
/** The longest statement timeout a client may ask for. */
export const MAX_TIMEOUT_SECONDS = 300;

/** `query`: one statement. */
export const QUERY = s.string({ maxLength: MAX_QUERY_LENGTH });

/** `timeout_seconds`: the statement timeout. */
export const TIMEOUT_SECONDS = s.integer({
  minimum: 1,
  maximum: MAX_TIMEOUT_SECONDS,
});

/** The query text, checked: not blank, at most 100 KB. */
export function queryText(args: { readonly query: string }): string {
  const { query } = args;
  if (query.trim() === "") throw invalidArgument("query must not be blank");
  if (query.length > MAX_QUERY_LENGTH) {
    throw invalidArgument(
      `query is ${query.length} characters; the limit is 100KB (${MAX_QUERY_LENGTH} characters)`,
    );
  }
  return query;
}

/** `timeout_seconds`, or the user's default. */
export function timeoutSeconds(
  args: { readonly timeout_seconds?: number },
  settings: Settings,
): number {
  const seconds = args.timeout_seconds ?? settings.queryTimeoutSeconds;
  if (seconds < 1 || seconds > MAX_TIMEOUT_SECONDS) {
    throw invalidArgument(
      `timeout_seconds must be from 1 to ${MAX_TIMEOUT_SECONDS}, got ${seconds}`,
    );
  }
  return seconds;
}

/**
 * The gates of a write: the `tools:write` scope (else `-33007` naming it), a
 * connection open to writes from external clients, and a Safe Mode that is
 * not read-only.
 */
export function checkWrite(
  ctx: CallContext,
  connection: SavedConnection,
  why: string | null = null,
) {
  if (!ctx.principal.scopes.has("tools:write")) {
    // A read the engine's catalog made a write says why (pg_vet.ts).
    throw wire.insufficientScope(
      ["tools:write"],
      why === null
        ? "a statement that writes"
        : `this statement counts as a write because ${why}; a statement that writes`,
    );
  }
  if (connection.externalAccess !== "readWrite") {
    throw new ToolFailure(
      "denied",
      "this connection is read only for external clients",
    );
  }
  if (connection.safeMode === "readOnly") {
    throw new ToolFailure(
      "denied",
      `the Safe Mode of ${
        JSON.stringify(connection.name)
      } is "readOnly": it refuses every write`,
    );
  }
}

/** What a result set says was left out of it. */
type Truncation = NonNullable<ResultSet["truncation"]>;

/** What `runClassified` runs a statement within. */
interface RunLimits {
  maxRows: number;
  timeoutSeconds: number;
  /** The approved preview the write is held to (access.ts admitStatement). */
  preview?: WritePreview | null;
  /** Values bound to the statement's placeholders. */
  params?: readonly BindValue[];
  /**
   * A write no one was asked about: stopped before COMMIT when it changed
   * every row of a table (every_row.ts, which asks then).
   */
  everyRow?: boolean;
}

/** Run a classified statement, record it in the history, shape its result set. */
export async function runClassified(
  deps: FeatureDeps,
  ctx: CallContext,
  resolved: Resolved,
  statement: Classified,
  limits: RunLimits,
): Promise<ResultSet> {
  const settings = callSettings(deps, ctx);
  const write = statement.tier !== "read";
  // The engine's own timeout, held within the call's deadline.
  const timeoutMs = withinDeadline(ctx, limits.timeoutSeconds * 1000);
  ctx.progress(0.3, 1, `Running the statement on ${resolved.label}`);
  ctx.waiting?.(`the statement on ${resolved.label}`, timeoutMs);
  const started = performance.now();
  const params = limits.params ?? [];
  const options = queryOptions(ctx, settings, limits, write, timeoutMs);
  const history = { deps, ctx, settings, resolved, statement };
  let result: QueryResult;
  try {
    result = await resolved.driver.query(statement.text, options);
  } catch (error) {
    // Rolled back to be asked about (every_row.ts): not a run of its own.
    if (error instanceof EveryRowFound) throw error;
    remember(history, elapsedSince(started), null, error);
    if (limits.preview) ctx.note?.(`${previewNote(limits.preview)}, not run`);
    if (!write) await refusePrivate(resolved, ctx, error);
    return rethrow(error, resolved.label);
  }
  if (limits.preview) {
    ctx.note?.(
      `${previewNote(limits.preview)}, ran ${rowCount(result.rowsAffected)}`,
    );
  }
  const took = elapsedSince(started);
  remember(history, took, result, null);
  if (!write) checkColumnNames(result.columns, answerBudget(settings));
  ctx.budget?.spent(write ? "write" : "read", result.rows.length);
  // A write's RETURNING rows are rows returned too (docs/tokens.md).
  if (write && result.rows.length > 0) {
    ctx.budget?.spent("read", result.rows.length);
  }
  if (write) narrowWrite(result, answerBudget(settings));
  const { answer, truncation } = await fittedAnswer(
    result,
    took,
    settings,
    limits.maxRows,
    // The rows a read would have given, for the truncation's message.
    write ? null : () => countRows(resolved, ctx, statement.text, params),
  );
  ctx.progress(1, 1, doneMessage(write, result, answer.row_count, truncation));
  return truncation === null ? answer : { ...answer, truncation };
}

/** The driver's options for a statement `runClassified` runs. */
function queryOptions(
  ctx: CallContext,
  settings: Settings,
  limits: RunLimits,
  write: boolean,
  timeoutMs: number,
): QueryOptions {
  const params = limits.params ?? [];
  // Built field by field (issue 38: no object a call to spread in).
  const room = answerLimits(settings);
  const options: QueryOptions = {
    mode: write ? "write" : "read",
    maxRows: limits.maxRows,
    maxBytes: room.maxBytes,
    maxCellChars: room.maxCellChars,
    timeoutMs,
    signal: ctx.signal,
    onCommit: () => ctx.holdAnswer(),
    sign: signatureOf(ctx),
  };
  if (params.length > 0) options.params = params;
  const beforeCommit = holdTo(limits.preview ?? null);
  if (beforeCommit !== undefined) {
    options.beforeCommit = beforeCommit;
    options.track = HOLD_TRACK;
  }
  if (write && limits.everyRow === true) options.everyRow = stopOnEveryRow;
  return options;
}

/**
 * A statement's answer within the answer budget: whatever was left out is
 * said, and how to get it (docs/wire.md "Results"); rows past the budget
 * once the whole text is measured are left out too. `total` counts the
 * rows a read would have given when its rows were cut (null: a write's).
 */
async function fittedAnswer(
  result: QueryResult,
  took: number,
  settings: Settings,
  maxRows: number,
  total: (() => Promise<number | null>) | null,
): Promise<{
  answer: Omit<ResultSet, "truncation">;
  truncation: Truncation | null;
}> {
  const answer = {
    columns: result.columns,
    rows: result.rows,
    row_count: result.rows.length,
    rows_affected: result.rowsAffected,
    execution_time_ms: took,
    is_truncated: isCut(result.truncation),
  };
  const budget = answerBudget(settings);
  if (JSON.stringify(answer).length > budget) {
    const keep = fitRows(answer, budget);
    if (keep < answer.rows.length) result.truncation.bytes = true;
    answer.rows = answer.rows.slice(0, keep);
  }
  let truncation: Truncation | null = null;
  if (isCut(result.truncation)) {
    answer.is_truncated = true;
    const rowsCut = result.truncation.rows || result.truncation.bytes;
    const left = {
      truncation: result.truncation,
      rowsReturned: answer.rows.length,
      maxRows,
      total: rowsCut && total !== null ? await total() : null,
    };
    truncation = truncationOf(left, settings);
    // The message itself may push the rows past the budget.
    const keep = fitRows({ ...answer, truncation }, budget);
    if (keep < answer.rows.length) {
      answer.rows = answer.rows.slice(0, keep);
      result.truncation.bytes = true;
      truncation = truncationOf({ ...left, rowsReturned: keep }, settings);
    }
  }
  answer.row_count = answer.rows.length;
  return { answer, truncation };
}

/** The progress message of a statement that ran: what it read or changed. */
function doneMessage(
  write: boolean,
  result: QueryResult,
  rowCount: number,
  truncation: Truncation | null,
): string {
  const cut = truncation === null ? "" : ` (${truncation.reasons})`;
  return write
    ? `Committed: ${result.rowsAffected} row${
      result.rowsAffected === 1 ? "" : "s"
    } affected${
      result.columns.length > 0 ? `, returned ${rowCount} rows${cut}` : ""
    }`
    : `Read ${rowCount} row${rowCount === 1 ? "" : "s"}${cut}`;
}

/** Milliseconds since `started` (`performance.now()`), to two decimals. */
function elapsedSince(started: number): number {
  return Math.round((performance.now() - started) * 100) / 100;
}

/** What the query history records a statement's run with. */
interface HistoryOf {
  deps: FeatureDeps;
  ctx: CallContext;
  settings: Settings;
  resolved: Resolved;
  statement: Classified;
}

/**
 * Records the statement's run in the query history while the user keeps it
 * (setting `queryHistory`). Only statements that reached the database are
 * recorded; a driver error's text is already redacted.
 */
function remember(
  of: HistoryOf,
  durationMs: number,
  result: QueryResult | null,
  error: unknown,
): void {
  const { deps, ctx, settings, resolved, statement } = of;
  if (!settings.queryHistory) return;
  const kind = error instanceof DbError ? error.kind : null;
  // The deadline stops a statement through the call's one signal: what
  // the driver calls a cancellation is then a timeout.
  const late = ctx.deadlineAt !== undefined && Date.now() >= ctx.deadlineAt;
  deps.history.record({
    time: Date.now(),
    connectionId: resolved.connection.id,
    sql: statement.text,
    statementType: statement.tier,
    durationMs,
    rowCount: result?.rows.length ?? 0,
    rowsAffected: result?.rowsAffected ?? 0,
    outcome: error === null
      ? "success"
      : kind === "cancelled" && !late
      ? "cancelled"
      : kind === "timeout" || kind === "cancelled"
      ? "timeout"
      : "error",
    error: error === null
      ? null
      : error instanceof DbError
      ? error.message
      : "internal failure",
    clientName: ctx.clientInfo?.name ?? null,
    tokenName: ctx.principal.kind === "anonymous" ? null : ctx.principal.name,
    approvedAt: approvedAtOf(ctx),
  });
}
