/**
 * What a feature handler sees of a request: never HTTP, only the call.
 *
 * @module
 */

import type { Settings } from "../app/settings.ts";
import type { ClientInfo, TraceContext } from "../protocol/envelope.ts";
import type { JsonObject } from "../protocol/jsonrpc.ts";
import type { Era } from "../protocol/versions.ts";

/** A scope a method or tool may require (docs/wire.md "Authentication"). */
export type Scope = "tools:read" | "tools:write" | "resources:read" | "admin";

/** Who is calling. Authentication decides it; features only read it. */
export interface Principal {
  /** Stable key for sessions, cancellation and caches (never the token itself). */
  readonly key: string;
  /** The anonymous loopback caller, a user token, or the stdio bridge's token. */
  readonly kind: "anonymous" | "token" | "bridge";
  /** Display name: the token's name, or "anonymous". */
  readonly name: string;
  /** The token's id (null for the anonymous principal). */
  readonly tokenId: string | null;
  readonly scopes: ReadonlySet<Scope>;
  /** Connection ids the token may use; null means all (docs/wire.md "Authentication" 3). */
  readonly connections: ReadonlySet<string> | null;
}

/**
 * The budget of the calling token (docs/tokens.md "Budgets and pausing"):
 * features ask it before a read or a write runs and tell it what ran.
 */
export interface CallBudget {
  /** Why a read (rows read per hour) or a write (writes per hour) may not run now. */
  refuse(kind: "read" | "write"): string | null;
  /** Count what ran: a read's rows, or one write. */
  spent(kind: "read" | "write", rows: number): void;
  /** The call ended: give back the places of writes admitted but not run. */
  release(): void;
}

/**
 * What a call resolved, for its activity log entry: the log reads this, never
 * the call's arguments (a tool's SQL may come from a saved query or an
 * argument of another name; a connection may be named rather than given by
 * id). Each field is set where the feature resolved it; a later value of a
 * field replaces an earlier one.
 */
export interface CallRecord {
  /** The id of the connection the call resolved (never a name). */
  connectionId?: string;
  /**
   * The SQL text the call vetted or ran; the log keeps only its SHA-256
   * digest, taken before anything queues (server/activity.ts).
   */
  sql?: string;
  /** The object the call worked on: a table, a schema, a saved query. */
  object?: string;
}

/** A handler's view of one request. */
export interface CallContext {
  readonly era: Era;
  readonly protocolVersion: string;
  readonly method: string;
  readonly params: JsonObject;
  readonly clientCapabilities: JsonObject;
  readonly clientInfo: ClientInfo | undefined;
  readonly trace: TraceContext;
  readonly principal: Principal;
  /**
   * The request's one signal: aborts when it is cancelled, its handler
   * deadline runs out or its client leaves (the reason says which).
   */
  readonly signal: AbortSignal;
  /**
   * When the handler deadline runs out (epoch ms, `Date.now()`'s clock);
   * absent when none applies. An engine's own statement timeout is held
   * within it by {@linkcode withinDeadline}.
   */
  readonly deadlineAt?: number;
  /**
   * The settings as they were when the call started: one snapshot per call,
   * so a call never sees two versions of them (features read it through
   * `callSettings`, features/deps.ts). Absent outside the dispatcher.
   */
  readonly settings?: Settings;
  /** Aborts when the server begins to stop (long-lived streams end cleanly). */
  readonly shutdown: AbortSignal;
  /** The legacy session the request belongs to (null in the modern era). */
  readonly session: { logLevel: string } | null;
  /** The JSON-RPC id of this request. */
  readonly id: string | number;
  /**
   * Report progress; a no-op without a progressToken. Values must advance:
   * a non-advancing update is dropped (docs/wire.md "Progress streaming").
   */
  progress(progress: number, total: number, message: string): void;
  /**
   * Say what the request now waits for (null: nothing in particular), and
   * how long at most: heartbeat frames name it while no other progress goes
   * out (server/heartbeat.ts). A no-op without a progressToken.
   */
  waiting?(what: string | null, leftMs?: number): void;
  /**
   * The handler's work can no longer be undone (a COMMIT was sent): from now
   * on a cancellation, deadline or disconnect no longer pre-empts its answer,
   * so a committed write is reported as committed (docs/wire.md "Request
   * lifecycle").
   */
  holdAnswer(): void;
  /**
   * Add a short, already redacted note to this request's activity log entry
   * (a write's previewed and actual rows). Absent where nothing is logged.
   */
  note?(text: string): void;
  /**
   * Say what the call resolved, for its activity log entry (see
   * {@linkcode CallRecord}). Absent where nothing is logged.
   */
  record?(what: CallRecord): void;
  /** Send a notification on this request's own stream (opens it). */
  notify(method: string, params: JsonObject): void;
  /** The calling token's budget; absent when none applies. */
  readonly budget?: CallBudget;
}

/** A method handler: returns the result object or throws a WireError. */
export type Handler = (ctx: CallContext) => Promise<JsonObject>;

/**
 * `ms` held within the call's handler deadline: the number an engine's own
 * statement timeout gets, so the engine stops the statement no later than
 * the call's signal would. At least 1 ms (a 0 turns some engines' timeout
 * off).
 */
export function withinDeadline(
  ctx: { readonly deadlineAt?: number },
  ms: number,
): number {
  if (ctx.deadlineAt === undefined) return ms;
  return Math.max(1, Math.min(ms, Math.ceil(ctx.deadlineAt - Date.now())));
}
