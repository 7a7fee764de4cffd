/**
 * Checks a presented bearer token against the tokens in force: the user's
 * (reloaded from `state.db`) and the bridge's (held in memory only).
 *
 * Every candidate's salted hash is computed and compared in constant time,
 * with no early exit, so the time taken does not depend on which token, if
 * any, matched or how much of it did. A token that matched is remembered
 * until the tokens change, so a client's next requests skip the hashing
 * (four SHA-256 per request were a visible part of the bench W1 profile); a
 * presented string that matched nothing is never remembered and always takes
 * the constant-time path.
 *
 * @module
 */

import { hashToken, type StoredToken, tokenStatus } from "../../app/tokens.ts";
import type { Principal } from "../../features/context.ts";
import { bridgePrincipal, tokenPrincipal } from "./principals.ts";
import { constantTimeEqual } from "../../base/constant_time.ts";

/** The outcome of {@linkcode TokenVerifier.verify}. */
export type Verification =
  | { kind: "ok"; principal: Principal }
  | { kind: "unknown" }
  | { kind: "revoked" }
  | { kind: "expired" };

/** A token the verifier checks against. */
export type Candidate = StoredToken & { bridge?: boolean };

export { constantTimeEqual };

/** How many proven tokens are remembered (a few clients each hold one). */
const REMEMBERED = 64;

/** The tokens in force and how to check one. */
export class TokenVerifier {
  #user: readonly Candidate[] = [];
  /** Presented plaintexts that matched, and what they matched. */
  readonly #proven = new Map<string, Candidate>();
  #bridge: readonly Candidate[] = [];
  readonly #instanceId: string;
  readonly #now: () => number;

  constructor(instanceId: string, now: () => number = Date.now) {
    this.#instanceId = instanceId;
    this.#now = now;
  }

  /** Replace the user's tokens (after a reload of `state.db`). */
  setUserTokens(tokens: readonly StoredToken[]): void {
    this.#user = tokens.map((token) => ({ ...token, bridge: false }));
    this.#proven.clear();
  }

  /** Replace the bridge's tokens (after a mint or a rotation). */
  setBridgeTokens(tokens: readonly StoredToken[]): void {
    this.#bridge = tokens.map((token) => ({ ...token, bridge: true }));
    this.#proven.clear();
  }

  /** Check a presented token. */
  verify(plaintext: string): Verification {
    let match = this.#proven.get(plaintext);
    if (match === undefined) {
      for (const token of [...this.#user, ...this.#bridge]) {
        if (constantTimeEqual(hashToken(token.salt, plaintext), token.hash)) {
          match = token;
        }
      }
      if (match === undefined) return { kind: "unknown" };
      if (this.#proven.size >= REMEMBERED) this.#proven.clear();
      this.#proven.set(plaintext, match);
    }
    const status = tokenStatus(match, this.#now());
    if (status !== "active") return { kind: status };
    return {
      kind: "ok",
      principal: match.bridge
        ? bridgePrincipal(match.id, match.name, this.#instanceId)
        : tokenPrincipal(match),
    };
  }
}
