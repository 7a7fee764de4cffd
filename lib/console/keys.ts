/**
 * The console's key and its browser sessions. The key is derived from the
 * console's kept secret (secret.ts) and written only to the 0600 handshake;
 * a browser shows it once (`/?key=…`) and gets a session cookie for it, so
 * the key leaves the address bar, the history and any screenshot at once.
 * A session id is a random nonce and its MAC under the secret, and its CSRF
 * token is derived from it: a session outlives a restart of `serve`, so an
 * open tab keeps working. Each session has its own CSRF token.
 *
 * @module
 */

import { deriveSecret as mac, randomSecret, sameSecret } from "./secret.ts";

export { randomSecret, sameSecret };

/** One browser session. */
export interface ConsoleSession {
  readonly id: string;
  readonly csrf: string;
  /** A new token's plaintext, shown once on the next Tokens page. */
  flash?: { name: string; plaintext: string };
}

/** Sessions remembered (for their flash) at most; the oldest is forgotten past it. */
export const MAX_SESSIONS = 32;

/** The key and the sessions it opened. */
export class ConsoleKeys {
  readonly key: string;
  readonly #secret: string;
  /** Sessions seen lately, for their flash; a valid id is a session anyway. */
  readonly #sessions = new Map<string, ConsoleSession>();

  /** `secret`: the console's kept secret (a random one when not given). */
  constructor(secret: string = randomSecret()) {
    this.#secret = secret;
    this.key = mac(secret, "console key");
  }

  /** A new session when `given` is the key, else null. */
  exchange(given: string): ConsoleSession | null {
    if (!sameSecret(given, this.key)) return null;
    const nonce = randomSecret().slice(0, 32);
    return this.#remember(nonce + this.#seal(nonce));
  }

  /** The session a cookie names, if it is one of ours (from any start). */
  session(id: string | undefined): ConsoleSession | null {
    if (id === undefined || !/^[0-9a-f]{64}$/.test(id)) return null;
    const nonce = id.slice(0, 32);
    if (!sameSecret(id.slice(32), this.#seal(nonce))) return null;
    return this.#sessions.get(id) ?? this.#remember(id);
  }

  #seal(nonce: string): string {
    return mac(this.#secret, `console session ${nonce}`).slice(0, 32);
  }

  #remember(id: string): ConsoleSession {
    const session = { id, csrf: mac(this.#secret, `console csrf ${id}`) };
    this.#sessions.set(id, session);
    if (this.#sessions.size > MAX_SESSIONS) {
      this.#sessions.delete(this.#sessions.keys().next().value!);
    }
    return session;
  }
}
