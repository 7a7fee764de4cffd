/**
 * The console's secret and its browser sessions. The secret key is made at
 * each start and written only to the 0600 handshake; a browser shows it once
 * (`/c/<prefix>/?key=…`) and gets a session cookie for it, so the key leaves the
 * address bar, the history and any screenshot at once. Each session has its
 * own CSRF token for the forms it is shown.
 *
 * @module
 */

/** One browser session. */
export interface ConsoleSession {
  readonly id: string;
  readonly csrf: string;
  /** The listener's port it was opened on: presented on another, refused. */
  readonly port: number;
  /** A new token's plaintext, shown once on the next Tokens page. */
  flash?: { name: string; plaintext: string };
}

/** Sessions kept at most; the oldest is forgotten past it. */
export const MAX_SESSIONS = 32;

/** 32 random bytes as hex. */
export function randomSecret(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(32));
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}

/** Compare secrets in time independent of where they differ. */
export function sameSecret(given: string, expected: string): boolean {
  const a = new TextEncoder().encode(given);
  const b = new TextEncoder().encode(expected);
  let diff = a.length ^ b.length;
  for (let i = 0; i < b.length; i++) diff |= (a[i] ?? 0) ^ b[i]!;
  return diff === 0;
}

/**
 * A per-start path every console URL sits under (`/c/<32 hex>`): the
 * session cookie's `Path`, so a browser never sends it to another server on
 * 127.0.0.1 (cookies ignore the port, RFC 6265 §8.5) unless that server is
 * asked for this very path.
 */
export function randomPrefix(): string {
  return `/c/${randomSecret().slice(0, 32)}`;
}

/** The key, the path prefix and the sessions the key opened. */
export class ConsoleKeys {
  readonly key: string;
  readonly prefix: string;
  readonly #sessions = new Map<string, ConsoleSession>();

  constructor(key: string = randomSecret(), prefix: string = randomPrefix()) {
    this.key = key;
    this.prefix = prefix;
  }

  /** A new session on `port` when `given` is the key, else null. */
  exchange(given: string, port: number): ConsoleSession | null {
    if (!sameSecret(given, this.key)) return null;
    const session = { id: randomSecret(), csrf: randomSecret(), port };
    this.#sessions.set(session.id, session);
    if (this.#sessions.size > MAX_SESSIONS) {
      this.#sessions.delete(this.#sessions.keys().next().value!);
    }
    return session;
  }

  /**
   * The session a cookie names, if it is one of ours and was opened on this
   * listener's `port`.
   */
  session(id: string | undefined, port: number): ConsoleSession | null {
    if (id === undefined || id.length !== 64) return null;
    for (const [known, session] of this.#sessions) {
      if (sameSecret(id, known)) return session.port === port ? session : null;
    }
    return null;
  }
}
