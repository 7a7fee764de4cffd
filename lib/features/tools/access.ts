/**
 * Which connections a caller may see and use. The connection's external
 * access, its AI policy and the token's allowlist apply on top of each other
 * (docs/wire.md "What the service does", "Authentication" 3–4): a connection
 * that any of them excludes is hidden from `list_connections` and refused
 * elsewhere with `-33007`.
 *
 * @module
 */

import {
  driverSpec,
  isUuid,
  type SavedConnection,
} from "../../app/connections.ts";
import type { Classified } from "../../db/sql/classifier.ts";
import { DbError } from "../../db/errors.ts";
import type { BindValue } from "../../db/types.ts";
import { wire } from "../../protocol/errors.ts";
import { consentReasons } from "../consent.ts";
import {
  type CallContext,
  type Principal,
  withinDeadline,
} from "../context.ts";
import { callSettings, type FeatureDeps } from "../deps.ts";
import { withValues } from "./bind.ts";
import { invalidArgument, rethrow, ToolFailure } from "./failure.ts";
import { didYouMean, nearest } from "./nearest.ts";
import { previewWrite, type WritePreview } from "./preview.ts";
import { markPrivate } from "./private_marks.ts";
import type { Resolved } from "./resolved.ts";

/** A connection AI clients may see: neither blocked nor `never`. */
export type VisibleConnection = SavedConnection & {
  externalAccess: Exclude<SavedConnection["externalAccess"], "blocked">;
  aiPolicy: Exclude<SavedConnection["aiPolicy"], "never">;
};

/** Whether `principal` may see `connection` at all. */
export function isVisible(
  connection: SavedConnection,
  principal: Principal,
): connection is VisibleConnection {
  return connection.externalAccess !== "blocked" &&
    connection.aiPolicy !== "never" &&
    (principal.connections === null ||
      principal.connections.has(connection.id));
}

/**
 * Whether `principal` may read `connection` without asking the user now:
 * visible, and granted already if its AI policy asks each new client. What
 * cannot ask (completion, change notifications) serves only these.
 */
export function readableWithoutAsking(
  deps: FeatureDeps,
  connection: SavedConnection,
  principal: Principal,
): boolean {
  return isVisible(connection, principal) &&
    (connection.aiPolicy !== "askEachTime" ||
      deps.consent.granted(principal, connection.id));
}

/** The connections `principal` may see. */
export function visibleConnections(
  deps: FeatureDeps,
  principal: Principal,
): VisibleConnection[] {
  return deps.connections.all().filter((connection) =>
    isVisible(connection, principal)
  );
}

/** The longest connection name a `connection_id` may carry. */
const MAX_NAME_LENGTH = 200;

/**
 * A `connection_id` that can name no connection (blank, or longer than any
 * name) is the tool error `invalid_argument`.
 */
export function checkConnectionId(id: string): void {
  if (id.trim() === "" || id.length > MAX_NAME_LENGTH) {
    throw invalidArgument(
      `connection_id must be a connection's id or name from list_connections, got ${
        JSON.stringify(id.slice(0, 80))
      }`,
    );
  }
}

/**
 * The connection `idOrName` names for `principal`: an id, or a name of a
 * connection it may see (exact, any case). Unknown is `not_found` and two
 * of one name `invalid_argument`, each naming the closest visible names; a
 * name never reveals a connection the caller may not see.
 */
function findConnection(
  deps: FeatureDeps,
  principal: Principal,
  idOrName: string,
): SavedConnection {
  if (isUuid(idOrName)) {
    const connection = deps.connections.byId(idOrName);
    if (connection !== undefined) return connection;
  }
  const visible = visibleConnections(deps, principal);
  const wanted = idOrName.toLowerCase();
  const named = visible.filter((c) => c.name.toLowerCase() === wanted);
  if (named.length === 1) return named[0]!;
  if (named.length > 1) {
    throw invalidArgument(
      `${named.length} connections are named ${
        JSON.stringify(idOrName)
      }: pass one's id (${named.map((c) => c.id).join(", ")})`,
    );
  }
  const names = nearest(idOrName, visible.map((c) => c.name));
  throw new ToolFailure(
    "not_found",
    `no connection you can use has the id or name ${
      JSON.stringify(idOrName.slice(0, 80))
    }${didYouMean(names)}; list_connections shows them`,
  );
}

export type { Resolved };

/**
 * Resolve `connection_id` for a tool call: a malformed id is
 * `invalid_argument`, an unknown one `not_found`, a hidden one `-33007`.
 * The connection found is recorded for the call's log entry (`ctx.record`),
 * by its id even when it was named.
 * Consent (an `askEachTime` connection's first use, Safe Mode) is
 * {@linkcode admit}'s.
 *
 * @example The first steps of a tool's `run`
 * ```ts
 * import { admit, resolveConnection } from "./access.ts";
 * import type { CallContext } from "../context.ts";
 * import type { FeatureDeps } from "../deps.ts";
 *
 * async function firstSteps(deps: FeatureDeps, ctx: CallContext, id: string) {
 *   const resolved = resolveConnection(deps, ctx, id);
 *   await admit(deps, ctx, resolved.connection, null, "listing tables");
 *   return resolved.driver; // the connection's driver, opened on first use
 * }
 * ```
 */
export function resolveConnection(
  deps: FeatureDeps,
  ctx: Pick<CallContext, "principal" | "record">,
  id: string,
): Resolved {
  checkConnectionId(id);
  const { principal } = ctx;
  const connection = findConnection(deps, principal, id);
  // Recorded before the visibility check: a refusal is logged with it.
  ctx.record?.({ connectionId: connection.id });
  if (!isVisible(connection, principal)) {
    throw wire.forbidden(
      `Forbidden: the connection ${connection.id} is not available to this client (the user's external access, AI policy or the token's connection list excludes it)`,
      { connectionId: connection.id },
    );
  }
  return {
    connection,
    label: JSON.stringify(connection.name),
    driver: markPrivate(
      deps.pool.get(driverSpec(connection), principal.key),
      connection.privateColumns,
    ),
  };
}

/**
 * Get the user's consent where the connection's policy asks for it: the
 * first use of an `askEachTime` connection by this client, and for a
 * statement what Safe Mode, its tier and its danger require.
 */
export async function admit(
  deps: FeatureDeps,
  ctx: CallContext,
  connection: SavedConnection,
  statement: Classified | null,
  operation: string,
): Promise<void> {
  const firstUse = connection.aiPolicy === "askEachTime" &&
    !deps.consent.granted(ctx.principal, connection.id);
  const reasons = consentReasons(connection, statement, firstUse);
  if (reasons.length === 0) return;
  await deps.consent.obtain(ctx, {
    // The first use of an askEachTime connection asks for the connection
    // itself; the statement's tier rides along.
    kind: firstUse || statement === null ? "connection" : statement.tier,
    tier: statement?.tier ?? null,
    connection,
    statement: statement?.text ?? null,
    operation,
    reasons,
    grantsConnection: firstUse,
    preview: null,
  });
}

/**
 * {@linkcode admit} for a statement that may write: where the user is asked
 * about a write, it is first previewed (a dry run, rolled back) and the
 * question says what it changes. A dry run that fails ends the call with
 * its error, asking no one. Returns the preview the user approved, which
 * the write is then held to (null: none was asked or none is exact).
 */
export async function admitStatement(
  deps: FeatureDeps,
  ctx: CallContext,
  resolved: Resolved,
  statement: Classified,
  operation: string,
  timeoutSeconds: number,
  params: readonly BindValue[] = [],
  /** Why else to ask: what a write that ran was found to do (every_row.ts). */
  found: readonly string[] = [],
): Promise<WritePreview | null> {
  const connection = resolved.connection;
  const firstUse = connection.aiPolicy === "askEachTime" &&
    !deps.consent.granted(ctx.principal, connection.id);
  const reasons = [
    ...found,
    ...consentReasons(connection, statement, firstUse),
  ];
  if (reasons.length === 0) return null;
  let preview: WritePreview | null = null;
  if (statement.tier !== "read") {
    const seconds = Math.min(
      timeoutSeconds,
      callSettings(deps, ctx).previewTimeoutSeconds,
    );
    preview = await previewWrite(resolved, statement, {
      // In whole seconds, as the preview's engines take it, within the
      // call's deadline.
      timeoutSeconds: Math.ceil(withinDeadline(ctx, seconds * 1000) / 1000),
      signal: ctx.signal,
      params,
    }).catch((error) => {
      // A lock wait or a long write: said as the preview's own limit.
      if (error instanceof DbError && error.kind === "timeout") {
        throw new ToolFailure(
          "timeout",
          `the write's preview did not finish within ${seconds} s (previewTimeoutSeconds); nothing was written and no one was asked`,
        );
      }
      return rethrow(error, resolved.label);
    });
  }
  await deps.consent.obtain(ctx, {
    kind: firstUse ? "connection" : statement.tier,
    tier: statement.tier,
    connection,
    // The user sees the values the statement will bind, not just "$1".
    statement: withValues(statement.text, params),
    operation,
    reasons,
    grantsConnection: firstUse,
    preview,
  });
  // Asked and answered yes: the log says by whom and when, and so does the
  // history's entry (statement.ts).
  const at = Date.now();
  approvals.set(ctx, at);
  ctx.note?.(`approved by you at ${new Date(at).toISOString()}`);
  return preview;
}

/** When the user approved the call's statement, per call. */
const approvals = new WeakMap<CallContext, number>();

/** When the user approved this call's statement (null: not asked). */
export function approvedAtOf(ctx: CallContext): number | null {
  return approvals.get(ctx) ?? null;
}
