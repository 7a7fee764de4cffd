/**
 * The authentication lockout (docs/wire.md "Authentication lockout"): 5 failed
 * attempts within 60 seconds lock that caller out for 5 minutes. Failures are
 * counted per key - the client address and the presented credential, each on
 * its own - so one key reaching the limit locks every request that carries it.
 *
 * Held in memory only: restarting the server clears it. A success never
 * shortens a lockout.
 *
 * @module
 */

/** The limits. */
export const LOCKOUT_LIMITS = Object.freeze({
  failures: 5,
  windowMs: 60_000,
  lockMs: 300_000,
});

/** How many keys are tracked before old ones are dropped. */
const MAX_KEYS = 10_000;

interface Bucket {
  failures: number[];
  lockedUntil: number;
}

/** Failure counters and lockouts by key. */
export class Lockout {
  readonly #buckets = new Map<string, Bucket>();
  readonly #now: () => number;

  constructor(now: () => number = Date.now) {
    this.#now = now;
  }

  /** Milliseconds until every given key is unlocked; 0 when none is locked. */
  lockedFor(keys: readonly string[]): number {
    const now = this.#now();
    let remaining = 0;
    for (const key of keys) {
      const bucket = this.#buckets.get(key);
      if (bucket !== undefined && bucket.lockedUntil > now) {
        remaining = Math.max(remaining, bucket.lockedUntil - now);
      }
    }
    return remaining;
  }

  /** Count one failed attempt against each key; the fifth in 60 s locks it. */
  fail(keys: readonly string[]): void {
    const now = this.#now();
    if (this.#buckets.size >= MAX_KEYS) this.#prune(now);
    for (const key of keys) {
      const bucket = this.#buckets.get(key) ?? { failures: [], lockedUntil: 0 };
      bucket.failures = bucket.failures.filter((t) =>
        now - t < LOCKOUT_LIMITS.windowMs
      );
      bucket.failures.push(now);
      if (bucket.failures.length >= LOCKOUT_LIMITS.failures) {
        bucket.lockedUntil = now + LOCKOUT_LIMITS.lockMs;
        bucket.failures = [];
      }
      this.#buckets.set(key, bucket);
    }
  }

  /** How many keys are tracked. */
  get size(): number {
    return this.#buckets.size;
  }

  /**
   * Drop keys that are neither locked nor counting; under a flood of distinct
   * keys, also the oldest unlocked ones, down to 90% so the scan is rare.
   */
  #prune(now: number): void {
    for (const [key, bucket] of this.#buckets) {
      const counting = bucket.failures.some((t) =>
        now - t < LOCKOUT_LIMITS.windowMs
      );
      if (!counting && bucket.lockedUntil <= now) this.#buckets.delete(key);
    }
    const target = Math.floor(MAX_KEYS * 0.9);
    for (const [key, bucket] of this.#buckets) {
      if (this.#buckets.size <= target) break;
      if (bucket.lockedUntil <= now) this.#buckets.delete(key);
    }
  }
}
