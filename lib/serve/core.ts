/**
 * Step 2 of a start: the server's state and what every request goes through -
 * approvals, requests in flight, sessions, token verification, sync and
 * budgets.
 *
 * @module
 */

import type { Logger } from "../base/log.ts";
import { TokenBudgets } from "../server/budgets.ts";
import { tokenKey } from "../server/auth/principals.ts";
import { BRIDGE_BUDGET, loadBudgets } from "../app/token_budgets.ts";
import { TokenSync } from "../server/auth/token_sync.ts";
import { TokenVerifier } from "../server/auth/verifier.ts";
import { Approvals } from "../server/approvals.ts";
import { dialogFor } from "../app/host_dialog.ts";
import type { RunningConsole } from "../console/console_server.ts";
import { InFlightRegistry } from "../server/inflight.ts";
import { SessionStore } from "../server/sessions.ts";
import type { ServerState } from "../server/state.ts";
import type { StartOptions } from "./options.ts";
import type { Stores } from "./stores.ts";

/** The request-independent parts every request goes through. */
export interface Core {
  state: ServerState;
  approvals: Approvals;
  inflight: InFlightRegistry;
  sessions: SessionStore;
  /** Aborted at stop: long-lived streams end with a complete result. */
  shutdown: AbortController;
  /** The browser console, once started (its pages follow the log). */
  browser: RunningConsole | null;
  verifier: TokenVerifier;
  tokenSync: TokenSync;
  /** Per-token budgets and the kill switch. */
  budgets: TokenBudgets;
}

/** Step 2: the server's state, approvals, requests in flight and token sync. */
export function buildCore(
  options: StartOptions,
  stores: Stores,
  now: () => number,
  log: Logger,
): Core {
  const state: ServerState = {
    settings: stores.settings,
    port: 0,
    stopping: false,
    instanceId: crypto.randomUUID(),
  };
  const core = {} as Core;
  const approvals = new Approvals({
    dialog: () =>
      dialogFor(state.settings.hostDialog, undefined, core.browser?.dialog),
    timeoutMs: () => state.settings.approvalTimeoutSeconds * 1000,
    now,
  });
  const inflight = new InFlightRegistry();
  const sessions = new SessionStore();
  const verifier = new TokenVerifier(state.instanceId, now);
  const budgets = new TokenBudgets(now);
  const tokenSync = new TokenSync({
    store: stores.tokens,
    verifier,
    // Revoking a token ends its requests and its sessions (docs/wire.md
    // "Authentication", "Request lifecycle").
    onRevoked: (keys) => {
      for (const key of keys) {
        inflight.stopPrincipal(key, "revoked");
        approvals.forget(key);
        sessions.dropPrincipal(key);
      }
    },
    // Pausing a token (the kill switch) stops its running requests at once.
    budgets: () => loadBudgets(stores.db),
    onBudgets: (loaded) => {
      for (const key of budgets.update(loaded)) {
        inflight.stopPrincipal(
          key === BRIDGE_BUDGET ? `bridge:${state.instanceId}` : tokenKey(key),
          "paused",
        );
      }
    },
    log,
    now,
    ...(options.tokenPollMs === undefined
      ? {}
      : { intervalMs: options.tokenPollMs }),
  });
  return Object.assign(core, {
    state,
    approvals,
    inflight,
    sessions,
    shutdown: new AbortController(),
    browser: null,
    verifier,
    tokenSync,
    budgets,
  });
}
