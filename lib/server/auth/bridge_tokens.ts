/**
 * The stdio bridge's token (docs/wire.md "The stdio bridge" 3, "Limits"): minted at
 * each server start, level `readWrite`, all connections, one hour; rotated 15
 * minutes before it expires. The previous token stays valid until its own
 * expiry, so a bridge holding it is never cut off mid-session.
 *
 * Held in memory only (as a salted hash): it is never in `state.db`, never in
 * `tokens list`, and gone when the server stops. Its plaintext exists on disk
 * only in the 0600 handshake file.
 *
 * @module
 */

import {
  displayPrefix,
  generateSalt,
  generateToken,
  hashToken,
  type StoredToken,
} from "../../app/tokens.ts";
import { BRIDGE_TOKEN_NAME } from "../../base/identity.ts";

/** The bridge token's lifetime. */
export const BRIDGE_TOKEN_LIFETIME_MS = 3_600_000;

/** How long before expiry a new bridge token is minted. */
export const BRIDGE_ROTATE_BEFORE_MS = 900_000;

/** A minted bridge token, plaintext included (for the handshake only). */
export interface MintedBridgeToken {
  id: string;
  plaintext: string;
  expiresAt: number;
}

/** The bridge tokens in force. */
export class BridgeTokens {
  #tokens: StoredToken[] = [];
  #current: MintedBridgeToken | null = null;
  readonly #now: () => number;

  constructor(now: () => number = Date.now) {
    this.#now = now;
  }

  /** Mint a new current token; older ones stay until they expire. */
  mint(): MintedBridgeToken {
    const now = this.#now();
    const plaintext = generateToken();
    const salt = generateSalt();
    const minted: MintedBridgeToken = {
      id: crypto.randomUUID(),
      plaintext,
      expiresAt: now + BRIDGE_TOKEN_LIFETIME_MS,
    };
    this.#tokens.push({
      id: minted.id,
      name: BRIDGE_TOKEN_NAME,
      prefix: displayPrefix(plaintext),
      salt,
      hash: hashToken(salt, plaintext),
      level: "readWrite",
      connections: null,
      createdAt: now,
      expiresAt: minted.expiresAt,
      revokedAt: null,
      lastUsedAt: null,
    });
    this.#current = minted;
    return minted;
  }

  /** The token the handshake names. */
  get current(): MintedBridgeToken | null {
    return this.#current;
  }

  /** Whether the current token is within 15 minutes of expiry. */
  dueForRotation(): boolean {
    return this.#current === null ||
      this.#now() >= this.#current.expiresAt - BRIDGE_ROTATE_BEFORE_MS;
  }

  /** Forget expired tokens; true when any was dropped. */
  prune(): boolean {
    const now = this.#now();
    const before = this.#tokens.length;
    this.#tokens = this.#tokens.filter((t) => (t.expiresAt ?? 0) > now);
    return this.#tokens.length !== before;
  }

  /** The verifiers of every bridge token still held. */
  verifiers(): readonly StoredToken[] {
    return this.#tokens;
  }

  /** Forget every token (shutdown). */
  clear(): void {
    this.#tokens = [];
    this.#current = null;
  }
}
