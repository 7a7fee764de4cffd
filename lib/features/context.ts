/**
 * What a feature handler sees of a request: never HTTP, only the call.
 *
 * @module
 */

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
  /** Aborts when the request is cancelled, times out or its client leaves. */
  readonly signal: AbortSignal;
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
  /** Send a notification on this request's own stream (opens it). */
  notify(method: string, params: JsonObject): void;
  /** The calling token's budget; absent when none applies. */
  readonly budget?: CallBudget;
}

/** A method handler: returns the result object or throws a WireError. */
export type Handler = (ctx: CallContext) => Promise<JsonObject>;
