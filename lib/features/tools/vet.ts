/**
 * The read path's gate, one for every tool that runs a client's statement
 * (`execute_query`, `export_query`): the connection resolved (by id or
 * name), the statement classified by dbport's lexer and the engine's own
 * parser, destructive statements sent to confirm_destructive_operation, a
 * write's gates, and the user's consent where their policy asks.
 *
 * @module
 */

import type { Classified } from "../../db/sql/classifier.ts";
import type { BindValue } from "../../db/types.ts";
import type { CallContext } from "../context.ts";
import type { FeatureDeps } from "../deps.ts";
import { admitStatement, resolveConnection, type Resolved } from "./access.ts";
import { checkParams } from "./bind.ts";
import { ToolFailure } from "./failure.ts";
import { checkPlanLimits } from "./plan_guard.ts";
import type { WritePreview } from "./preview.ts";
import { checkWrite, classifyQuery } from "./statement.ts";
import { privateJoinRefusal } from "../../db/private_joins.ts";

/** A statement let through, with its connection and approved preview. */
export interface Vetted {
  resolved: Resolved;
  statement: Classified & { why?: string | null };
  preview: WritePreview | null;
  /** The values bound to its placeholders (none: empty). */
  params: readonly BindValue[];
}

/** What `vetStatement` is asked to vet. */
interface VetRequest {
  connectionId: string;
  query: string;
  timeoutSeconds: number;
  operation: string;
  readsOnly: boolean;
  /** Values for the statement's placeholders (execute_query's params). */
  params?: readonly BindValue[];
  /** Refuse a read over the connection's plan limits (plan_guard.ts). */
  planLimits?: boolean;
  /** Which of `params` are approximate by type (bind.ts checkParams). */
  approximate?: readonly boolean[];
}

/**
 * Vet `query` for `connection_id`. `readsOnly` (export_query) refuses
 * anything but a read right after classification, asking no one.
 */
export async function vetStatement(
  deps: FeatureDeps,
  ctx: CallContext,
  request: VetRequest,
): Promise<Vetted> {
  const resolved = resolveConnection(deps, ctx, request.connectionId);
  // The statement as it will run (a saved query's, with its placeholders).
  ctx.record?.({ sql: request.query });
  // Counted by the engine's lexer before anything reaches the database.
  const params = checkParams(
    request.params,
    request.query,
    resolved.driver.engine,
    request.approximate,
  );
  await refuseUnheldPrivate(deps, ctx, resolved);
  const statement = await classifyQuery(
    request.query,
    resolved,
    ctx,
    request.timeoutSeconds * 1000,
  );
  checkTier(ctx, resolved, statement, request);
  // The token's budget: rows read or writes per hour (lib/server/budgets.ts).
  const spent = ctx.budget?.refuse(
    statement.tier === "read" ? "read" : "write",
  );
  if (spent !== undefined && spent !== null) {
    throw new ToolFailure("denied", spent);
  }
  // checkPlanLimits is a no-op but for a read on a connection with a limit:
  // not called (an async call, its awaits) for any other.
  const { maxEstimatedRows, maxEstimatedCost } = resolved.connection;
  if (
    request.planLimits === true && statement.tier === "read" &&
    (maxEstimatedRows !== undefined || maxEstimatedCost !== undefined)
  ) {
    // Before anyone is asked: a read refused by its plan asks no one.
    await checkPlanLimits(
      ctx,
      resolved,
      statement,
      request.timeoutSeconds,
      params,
    );
  }
  const preview = await admitStatement(
    deps,
    ctx,
    resolved,
    statement,
    request.operation,
    request.timeoutSeconds,
    params,
  );
  return { resolved, statement, preview, params };
}

/**
 * Refused while the connection's private columns are not held by the
 * database: AI clients run no statement on it until they are. A schema
 * changed since the last re-sync is synced again first.
 */
export async function refuseUnheldPrivate(
  deps: FeatureDeps,
  ctx: CallContext,
  resolved: Resolved,
): Promise<void> {
  const unheld = await deps.privateColumns?.problem(
    resolved.connection,
    () =>
      resolved.driver.fingerprint({ signal: ctx.signal, timeoutMs: 10_000 }),
  );
  if (unheld !== undefined && unheld !== null) {
    throw new ToolFailure(
      "denied",
      `the private columns of ${resolved.label} are not held by the database (${unheld}); AI clients may not run statements on it until they are: ask the user to run harden --apply`,
    );
  }
}

/**
 * The gates of the statement's tier: a read only where only reads run, a
 * destructive statement only through confirm_destructive_operation, a
 * write's gates (`checkWrite`), a read's joins of private columns.
 */
function checkTier(
  ctx: CallContext,
  resolved: Resolved,
  statement: Vetted["statement"],
  request: VetRequest,
): void {
  if (request.readsOnly && statement.tier !== "read") {
    throw new ToolFailure(
      "denied",
      `this statement ${
        statement.tier === "destructive" ? "drops or truncates data" : "writes"
      }: export_query runs reads only (a SELECT and what returns rows without changing them)`,
    );
  }
  if (statement.tier === "destructive") {
    // Name only what this caller can do: confirm_destructive_operation
    // needs the admin scope, which a bridge or readWrite token lacks.
    const because = statement.why ? ` (${statement.why})` : "";
    throw new ToolFailure(
      "denied",
      ctx.principal.scopes.has("admin")
        ? `this statement drops or truncates data${because}; use confirm_destructive_operation for it`
        : `this statement drops or truncates data${because}, which this client may not do: ask the user to run it in the app, or from a client with a fullAccess token (through confirm_destructive_operation)`,
    );
  }
  if (statement.tier === "write") {
    checkWrite(ctx, resolved.connection, statement.why ?? null);
  } else if (statement.tier === "read") {
    // Reads run under the engine's column check, which misses these joins.
    const blind = privateJoinRefusal(
      request.query,
      resolved.driver.engine,
      resolved.connection.privateColumns,
    );
    if (blind !== null) throw new ToolFailure("denied", blind);
  }
}
