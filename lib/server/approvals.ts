/**
 * Approvals: how a call that needs the user's consent gets it (docs/wire.md
 * "Result state of a call", "Authentication" 10; docs/wire.md "Asking the user").
 *
 * - A modern client that declared form elicitation in this request is
 *   answered `input_required` with an `approve_statement` form and a sealed
 *   `requestState`. Its retry must carry the same params; the state is bound
 *   to the principal, the method, a digest of the params (without `_meta`,
 *   `requestState`, `inputResponses`) and a 5-minute expiry, and is used once.
 * - Any other client (legacy clients above all) waits on the host dialog.
 * - After an accepted form, a `fullAccess` token's form stands in for the host
 *   dialog; every other principal is asked on the host as well ("confirmed
 *   twice").
 *
 * Connection grants (`aiPolicy: askEachTime`) are remembered per principal
 * until its token is revoked or the server stops.
 *
 * @module
 */

import { sha256Hex } from "../app/digest.ts";
import type {
  Dialog,
  DialogAnswer,
  DialogRequest,
} from "../app/host_dialog.ts";
import {
  changedMessage,
  type Consent,
  type ConsentAsk,
  describeStatement,
  NeedsInput,
  previewDigest,
  previewHeadline,
  previewJson,
  ToolFailure,
} from "../features/approval.ts";
import type { CallContext, Principal } from "../features/context.ts";
import { wire } from "../protocol/errors.ts";
import { isJsonObject, type JsonObject } from "../protocol/jsonrpc.ts";
import { Sealer } from "../protocol/seal.ts";

/** The one input request key (docs/wire.md "Asking the user"). */
export const APPROVAL_KEY = "approve_statement";
/** How long a `requestState` stays valid (docs/wire.md "Limits"). */
export const STATE_LIFETIME_MS = 5 * 60_000;

/** What approvals need from the server. */
export interface ApprovalDeps {
  /** The host dialog per the live settings. */
  dialog(): Dialog;
  /**
   * How long the host dialog may wait for the user (`approvalTimeoutSeconds`);
   * past it the call ends `user_cancelled`. No limit when not given.
   */
  timeoutMs?: () => number;
  now?: () => number;
  sealer?: Sealer;
}

interface State {
  v: 1;
  principal: string;
  method: string;
  digest: string;
  expiresAt: number;
  nonce: string;
  /** The digest of the write preview the user was shown ("" for none). */
  preview?: string;
  /** Its rows_affected, to say what changed when it no longer matches. */
  previewRows?: number | null;
}

/** The server's consent. */
export class Approvals implements Consent {
  readonly #deps: ApprovalDeps;
  readonly #now: () => number;
  readonly #sealer: Sealer;
  /** principal key -> connection ids it was granted. */
  readonly #grants = new Map<string, Set<string>>();
  /** nonce -> expiry of states already answered (single use). */
  readonly #used = new Map<string, number>();

  constructor(deps: ApprovalDeps) {
    this.#deps = deps;
    this.#now = deps.now ?? Date.now;
    this.#sealer = deps.sealer ?? new Sealer();
  }

  granted(principal: Principal, connectionId: string): boolean {
    return this.#grants.get(principal.key)?.has(connectionId) ?? false;
  }

  /** Forget a principal's grants (its token was revoked). */
  forget(principalKey: string): void {
    this.#grants.delete(principalKey);
  }

  async obtain(ctx: CallContext, ask: ConsentAsk): Promise<void> {
    let formAccepted = false;
    const state = ctx.params.requestState;
    if (typeof state === "string" && state !== "") {
      const opened = await this.#open(state, ctx);
      const answer = answerOf(ctx.params.inputResponses);
      if (answer !== null) {
        this.#use(opened);
        // An accepted form is bound to the preview it showed: measured again
        // now, it must still say the same (docs/security.md "Write previews").
        if (
          answer === "approved" &&
          (opened.preview ?? "") !== previewDigest(ask.preview)
        ) {
          throw new ToolFailure("denied", changedSince(opened, ask));
        }
        if (answer !== "approved") {
          throw new ToolFailure(
            "denied",
            `the user did not approve ${ask.operation} on ${
              JSON.stringify(ask.connection.name)
            }`,
          );
        }
        formAccepted = true;
      }
    }
    if (!formAccepted && ctx.era === "modern" && declaresForm(ctx)) {
      // A valid state with no answer asks again (docs/wire.md "Asking the user").
      throw new NeedsInput(await this.#inputRequired(ctx, ask));
    }
    const formStandsIn = formAccepted && ctx.principal.kind === "token" &&
      ctx.principal.scopes.has("admin");
    if (!formStandsIn) await this.#askHost(ctx, ask);
    if (ask.grantsConnection) {
      let set = this.#grants.get(ctx.principal.key);
      if (set === undefined) {
        this.#grants.set(ctx.principal.key, set = new Set());
      }
      set.add(ask.connection.id);
    }
  }

  async #inputRequired(ctx: CallContext, ask: ConsentAsk): Promise<JsonObject> {
    const state: State = {
      v: 1,
      principal: ctx.principal.key,
      method: ctx.method,
      digest: paramsDigest(ctx.params),
      expiresAt: this.#now() + STATE_LIFETIME_MS,
      nonce: crypto.randomUUID(),
      preview: previewDigest(ask.preview),
      previewRows: ask.preview?.rowsAffected ?? null,
    };
    const name = JSON.stringify(ask.connection.name);
    const headline = ask.preview === null ? null : previewHeadline(ask.preview);
    return {
      resultType: "input_required",
      inputRequests: {
        [APPROVAL_KEY]: {
          method: "elicitation/create",
          params: {
            mode: "form",
            message: `Allow ${ask.operation} on ${name}? ${
              ask.reasons.map((reason) => `Asked because ${reason}.`).join(" ")
            }`.trim(),
            requestedSchema: {
              type: "object",
              properties: {
                approved: {
                  type: "boolean",
                  title: "Approve",
                  description: ask.statement === null
                    ? `Let this client use the connection ${name}.`
                    : describeStatement(ask.statement, headline),
                },
              },
              required: ["approved"],
            },
          },
        },
      },
      requestState: await this.#sealer.seal(state),
    };
  }

  /** Open and check a `requestState`; anything wrong is `-32602`. */
  async #open(text: string, ctx: CallContext): Promise<State> {
    const refuse = (why: string) =>
      wire.invalidParams(
        `Invalid params: requestState ${why}; repeat the call without requestState and inputResponses`,
      );
    const opened = await this.#sealer.open(text);
    if (!opened.ok) {
      throw refuse(
        opened.problem === "forged"
          ? "was altered or was not issued by this server"
          : "is malformed",
      );
    }
    const state = opened.value as Partial<State>;
    if (
      !isJsonObject(state) || state.v !== 1 ||
      typeof state.expiresAt !== "number" || typeof state.nonce !== "string"
    ) {
      throw refuse("is malformed");
    }
    if (state.principal !== ctx.principal.key) {
      throw refuse("belongs to another client");
    }
    if (state.method !== ctx.method) {
      throw refuse(`was issued for ${state.method}, not ${ctx.method}`);
    }
    if (state.digest !== paramsDigest(ctx.params)) {
      throw refuse("was issued for other arguments (they changed)");
    }
    if (this.#now() >= state.expiresAt) {
      throw refuse("has expired (it lives 5 minutes)");
    }
    if (this.#used.has(state.nonce)) throw refuse("was already answered");
    return state as State;
  }

  #use(state: State): void {
    const now = this.#now();
    for (const [nonce, expiresAt] of this.#used) {
      if (expiresAt <= now) this.#used.delete(nonce);
    }
    this.#used.set(state.nonce, state.expiresAt);
  }

  async #askHost(ctx: CallContext, ask: ConsentAsk): Promise<void> {
    const name = JSON.stringify(ask.connection.name);
    // The call's settings snapshot, where it has one.
    const limit = ctx.settings === undefined
      ? this.#deps.timeoutMs?.()
      : ctx.settings.approvalTimeoutSeconds * 1000;
    const request: DialogRequest = {
      kind: ask.kind,
      tier: ask.tier,
      connection: { id: ask.connection.id, name: ask.connection.name },
      client: ctx.clientInfo?.name ?? "an MCP client",
      token: ctx.principal.name,
      statement: ask.statement,
      safeMode: ask.connection.safeMode,
      message: `Allow ${ask.operation} on ${name}?`,
      reasons: ask.reasons,
      ...(ask.preview === null ? {} : {
        preview: previewJson(ask.preview),
        previewLine: previewHeadline(ask.preview),
      }),
    };
    ctx.waiting?.(
      `your approval of ${ask.operation} on ${name} on this machine`,
      limit,
    );
    const answer = await this.#waitHost(request, ctx.signal, limit).finally(
      () => ctx.waiting?.(null),
    );
    if (answer === "timeout") {
      const seconds = Math.round((limit ?? 0) / 1000);
      throw new ToolFailure(
        "user_cancelled",
        `no one answered the approval for ${ask.operation} on ${name} within ${seconds} s (approvalTimeoutSeconds); nothing was run`,
      );
    }
    switch (answer.answer) {
      case "approve":
        return;
      case "deny":
        throw new ToolFailure(
          "denied",
          `the user did not approve ${ask.operation} on ${name}`,
        );
      case "dismissed":
        throw new ToolFailure(
          "user_cancelled",
          `the approval dialog for ${ask.operation} on ${name} was closed without an answer`,
        );
      case "unavailable":
        throw new ToolFailure(
          "denied",
          `${ask.operation} on ${name} needs the user's approval, and ${answer.why}`,
        );
    }
  }

  /**
   * Ask the host dialog, withdrawing the question when the request ends or
   * when no one answers within `approvalTimeoutSeconds`: a dialog no one is
   * looking at must not hold a call (and its connection) for ever.
   */
  async #waitHost(
    request: DialogRequest,
    signal: AbortSignal,
    limit: number | undefined,
  ): Promise<DialogAnswer | "timeout"> {
    const asked = new AbortController();
    const withdraw = () => asked.abort(signal.reason);
    if (signal.aborted) withdraw();
    signal.addEventListener("abort", withdraw, { once: true });
    let timedOut = false;
    const timer = limit === undefined ? undefined : setTimeout(() => {
      timedOut = true;
      asked.abort();
    }, limit);
    try {
      const answer = await this.#deps.dialog().ask(request, asked.signal);
      // A dialog killed by the timeout answers as if closed (or denied, for
      // a command's exit code): what counts is that no one answered.
      return timedOut ? "timeout" : answer;
    } finally {
      clearTimeout(timer);
      signal.removeEventListener("abort", withdraw);
    }
  }
}

/** Why an accepted form no longer stands: the write's preview changed. */
function changedSince(state: State, ask: ConsentAsk): string {
  const now = ask.preview?.rowsAffected;
  const then = state.previewRows;
  if (typeof now === "number" && typeof then === "number" && now !== then) {
    return changedMessage(now, then);
  }
  return "what the statement would change is no longer what the user approved; nothing was written; ask again";
}

/** Whether this request's capabilities declare form elicitation. */
function declaresForm(ctx: CallContext): boolean {
  const elicitation = ctx.clientCapabilities.elicitation;
  if (!isJsonObject(elicitation)) return false;
  // `{}` means form only (2025-11-25); otherwise `form` must be named.
  return Object.keys(elicitation).length === 0 || "form" in elicitation;
}

/** The client's answer under our key: approved, refused, or none. */
function answerOf(responses: unknown): "approved" | "refused" | null {
  if (!isJsonObject(responses)) return null;
  const answer = responses[APPROVAL_KEY];
  if (!isJsonObject(answer)) return null;
  // Unknown actions are not an answer (docs/wire.md "Asking the user": ask again).
  if (
    answer.action !== "accept" && answer.action !== "decline" &&
    answer.action !== "cancel"
  ) return null;
  const content = answer.content;
  return answer.action === "accept" && isJsonObject(content) &&
      content.approved === true
    ? "approved"
    : "refused";
}

/** SHA-256 of the params' canonical JSON, without the retry's own fields. */
export function paramsDigest(params: JsonObject): string {
  const { _meta: _m, requestState: _s, inputResponses: _i, ...rest } = params;
  return sha256Hex(canonical(rest));
}

/** JSON with object keys sorted, so key order never changes a digest. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(",")}]`;
  if (isJsonObject(value)) {
    return `{${
      Object.keys(value).sort().map((key) =>
        `${JSON.stringify(key)}:${canonical(value[key])}`
      ).join(",")
    }}`;
  }
  return JSON.stringify(value);
}
