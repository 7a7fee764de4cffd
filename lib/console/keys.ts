/**
 * The console's key, its path prefix and its browser sessions. The key and
 * the prefix are derived from the console's kept secret (secret.ts); the key
 * is written only to the 0600 handshake, and a browser shows it once
 * (`/c/<prefix>/?key=...`) and gets a session cookie for it, so the key leaves
 * the address bar, the history and any screenshot at once.
 *
 * Every console URL sits under the prefix, which is the cookie's `Path`: a
 * browser never sends the cookie to another server on 127.0.0.1 (cookies
 * ignore the port, RFC 6265 §8.5) unless that server is asked for this very
 * path. A session id is a random nonce and its MAC under the secret and the
 * listener's port, so a cookie presented on another port is refused; its
 * CSRF token is derived from it. Both survive a restart of `serve` (the
 * secret and the port are kept), so an open tab keeps working.
 *
 * @module
 */

import { deriveSecret as mac, randomSecret, sameSecret } from "./secret.ts";

export { randomSecret, sameSecret };

/** One browser session. */
export interface ConsoleSession {
  readonly id: string;
  readonly csrf: string;
  /** The listener's port it was opened on: presented on another, refused. */
  readonly port: number;
  /** A new token's plaintext, shown once on the next Tokens page. */
  flash?: { name: string; plaintext: string };
}

/** Sessions remembered (for their flash) at most; the oldest is forgotten past it. */
export const MAX_SESSIONS = 32;

/** The key, the path prefix and the sessions the key opened. */
export class ConsoleKeys {
  readonly key: string;
  /** `/c/<32 hex>`: every console URL sits under it. */
  readonly prefix: string;
  readonly #secret: string;
  /** Sessions seen lately, for their flash; a valid id is a session anyway. */
  readonly #sessions = new Map<string, ConsoleSession>();

  /** `secret`: the console's kept secret (a random one when not given). */
  constructor(secret: string = randomSecret()) {
    this.#secret = secret;
    this.key = mac(secret, "console key");
    this.prefix = `/c/${mac(secret, "console prefix").slice(0, 32)}`;
  }

  /** A new session on `port` when `given` is the key, else null. */
  exchange(given: string, port: number): ConsoleSession | null {
    if (!sameSecret(given, this.key)) return null;
    const nonce = randomSecret().slice(0, 32);
    return this.#remember(nonce + this.#seal(nonce, port), port);
  }

  /**
   * The session a cookie names, if it is one of ours (from any start) and
   * was opened on this listener's `port`.
   */
  session(id: string | undefined, port: number): ConsoleSession | null {
    if (id === undefined || !/^[0-9a-f]{64}$/.test(id)) return null;
    const nonce = id.slice(0, 32);
    if (!sameSecret(id.slice(32), this.#seal(nonce, port))) return null;
    const known = this.#sessions.get(id);
    return known?.port === port ? known : this.#remember(id, port);
  }

  #seal(nonce: string, port: number): string {
    return mac(this.#secret, `console session ${port} ${nonce}`).slice(0, 32);
  }

  #remember(id: string, port: number): ConsoleSession {
    const session = {
      id,
      csrf: mac(this.#secret, `console csrf ${id}`),
      port,
    };
    this.#sessions.set(id, session);
    if (this.#sessions.size > MAX_SESSIONS) {
      this.#sessions.delete(this.#sessions.keys().next().value!);
    }
    return session;
  }
}
