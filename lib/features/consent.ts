/**
 * Consent as features see it: what a call asks the user, and when a call
 * must ask at all. How it is asked - an `input_required` form, the host
 * dialog, or both - is the server's business (`lib/server/approvals.ts`).
 *
 * @module
 */

import type { SavedConnection } from "../app/connections.ts";
import { statementForApproval } from "../app/visible_text.ts";
import type { Tier } from "../db/sql/classifier.ts";
import type { JsonObject } from "../protocol/jsonrpc.ts";
import type { CallContext, Principal } from "./context.ts";
import type { WritePreview } from "./tools/write_preview.ts";

/** What the user is asked to allow. */
export type ConsentKind = "read" | "write" | "destructive" | "connection";

/** One question to the user. */
export interface ConsentAsk {
  kind: ConsentKind;
  /** The statement's tier, when there is a statement. */
  tier: Tier | null;
  connection: SavedConnection;
  /** The statement verbatim, when there is one. */
  statement: string | null;
  /** The message's operation: "a query", "a destructive statement". */
  operation: string;
  /** Why the user is asked (shown to them). */
  reasons: string[];
  /** Approving also grants this client the connection (`aiPolicy: askEachTime`). */
  grantsConnection: boolean;
  /** What the write changes, measured before asking; null for none. */
  preview: WritePreview | null;
}

/** Asks the user. */
export interface Consent {
  /**
   * Resolve once the user agreed. Otherwise throws: {@linkcode NeedsInput}
   * (answer the client `input_required`), a `ToolFailure` (`denied`,
   * `user_cancelled`) or a `WireError` (`-32602` for a bad `requestState`).
   */
  obtain(ctx: CallContext, ask: ConsentAsk): Promise<void>;
  /** Whether `principal` was granted `connectionId` (askEachTime). */
  granted(principal: Principal, connectionId: string): boolean;
}

/** Thrown to answer the call with an `input_required` result. */
export class NeedsInput extends Error {
  override name = "NeedsInput";
  readonly result: JsonObject;

  constructor(result: JsonObject) {
    super("the client must answer an input request");
    this.result = result;
  }
}

/**
 * Why a statement on `connection` needs consent (none: an empty list). Safe
 * Mode `alert` asks for writes and `alertFull` for every statement; a
 * destructive or dangerous statement always asks; so does the first use of
 * an `askEachTime` connection by a client.
 */
export function consentReasons(
  connection: SavedConnection,
  statement: { tier: Tier; dangerous: boolean; danger?: string } | null,
  firstUse: boolean,
): string[] {
  const reasons: string[] = [];
  if (firstUse) {
    reasons.push(
      "the connection's AI policy asks before each new client uses it",
    );
  }
  if (statement === null) return reasons;
  if (statement.tier === "destructive") {
    reasons.push("the statement drops or truncates data");
  } else if (statement.dangerous) {
    reasons.push(
      statement.danger ?? "the statement changes every row (no WHERE)",
    );
  }
  if (
    (connection.safeMode === "alert" && statement.tier !== "read") ||
    connection.safeMode === "alertFull"
  ) {
    reasons.push(`the connection's Safe Mode is "${connection.safeMode}"`);
  }
  return reasons;
}

/** The `approve_statement` form's description: the statement, bounded. */
export const DESCRIPTION_LIMIT = 2_000;

/**
 * The statement verbatim with its line breaks, after the preview's line when
 * there is one, cut at 2,000 characters.
 */
export function describeStatement(
  statement: string,
  previewLine: string | null = null,
): string {
  const text = statementForApproval(statement.trim());
  const trimmed = previewLine === null ? text : `${previewLine}\n\n${text}`;
  return trimmed.length <= DESCRIPTION_LIMIT
    ? trimmed
    : `${trimmed.slice(0, DESCRIPTION_LIMIT - 1)}\u2026`;
}
