/**
 * Legacy-era sessions (docs/wire.md "Legacy session").
 *
 * A session is minted by `initialize`, bound to the principal that created it,
 * and lives until the server stops; the store holds at most 16 and evicts the
 * least recently used - of the principal that holds the most, so one token
 * opening session after session ends its own, never another token's.
 *
 * @module
 */

import type { ClientInfo } from "../protocol/envelope.ts";
import type { JsonObject } from "../protocol/jsonrpc.ts";

/** The most sessions kept at once. */
export const MAX_SESSIONS = 16;

/** One legacy session. */
export interface LegacySession {
  id: string;
  protocolVersion: string;
  /** The principal key of the token that created it. */
  principalKey: string;
  clientCapabilities: JsonObject;
  clientInfo?: ClientInfo;
  /** Level set by `logging/setLevel`. */
  logLevel: string;
  createdAt: number;
}

/** Why a session id was refused. */
export type SessionLookup = { ok: true; session: LegacySession } | {
  ok: false;
  problem: "unknown" | "other_principal";
};

/** An LRU store of legacy sessions. */
export class SessionStore {
  // A Map iterates in insertion order: re-inserting on use keeps the least
  // recently used session first.
  readonly #sessions = new Map<string, LegacySession>();
  readonly #capacity: number;

  constructor(capacity = MAX_SESSIONS) {
    this.#capacity = capacity;
  }

  /**
   * Mint a session; when full, evicts the least recently used session of
   * the principal holding the most (with one principal: the least recently
   * used).
   */
  create(
    init: Omit<LegacySession, "id" | "createdAt" | "logLevel">,
  ): LegacySession {
    const session: LegacySession = {
      ...init,
      id: crypto.randomUUID(),
      logLevel: "info",
      createdAt: Date.now(),
    };
    this.#sessions.set(session.id, session);
    while (this.#sessions.size > this.#capacity) this.#evict();
    return session;
  }

  /** Drop the least recently used session of the largest holder. */
  #evict(): void {
    const held = new Map<string, number>();
    for (const { principalKey } of this.#sessions.values()) {
      held.set(principalKey, (held.get(principalKey) ?? 0) + 1);
    }
    const most = Math.max(...held.values());
    for (const [id, session] of this.#sessions) {
      if (held.get(session.principalKey) === most) {
        this.#sessions.delete(id);
        return;
      }
    }
  }

  /** Find a session for a principal and mark it used. */
  lookup(id: string, principalKey: string): SessionLookup {
    const session = this.#sessions.get(id);
    if (session === undefined) return { ok: false, problem: "unknown" };
    if (session.principalKey !== principalKey) {
      return { ok: false, problem: "other_principal" };
    }
    this.#sessions.delete(id);
    this.#sessions.set(id, session);
    return { ok: true, session };
  }

  /** Drop every session bound to a principal (its token was revoked). */
  dropPrincipal(principalKey: string): number {
    let dropped = 0;
    for (const [id, session] of this.#sessions) {
      if (session.principalKey === principalKey) {
        this.#sessions.delete(id);
        dropped++;
      }
    }
    return dropped;
  }

  /** How many sessions are open. */
  get size(): number {
    return this.#sessions.size;
  }
}
