/**
 * What a page showed and waits for a second click on (a write's preview on
 * the Query page, a Harden plan): kept under a random id for the session it
 * was shown to, taken once, forgotten after `ttlMs`; at most `max` wait
 * (past it the oldest is forgotten).
 *
 * @module
 */

import { randomSecret } from "./keys.ts";

interface Shown<T> {
  session: string;
  value: T;
  expiresAt: number;
}

/** The plans of one kind that wait for their second click. */
export class ShownPlans<T> {
  readonly #plans = new Map<string, Shown<T>>();
  readonly #ttlMs: number;
  readonly #max: number;
  readonly #now: () => number;

  constructor(ttlMs: number, max: number, now: () => number) {
    this.#ttlMs = ttlMs;
    this.#max = max;
    this.#now = now;
  }

  /** Keep `value`, shown to `session`; its id, for the page's form. */
  keep(session: string, value: T): string {
    this.#forget();
    const id = randomSecret();
    this.#plans.set(id, {
      session,
      value,
      expiresAt: this.#now() + this.#ttlMs,
    });
    if (this.#plans.size > this.#max) {
      this.#plans.delete(this.#plans.keys().next().value!);
    }
    return id;
  }

  /**
   * The plan `id` if it waits for `session` (and `fits`): taken, so it is
   * used once; undefined otherwise (used, expired or another page's).
   */
  take(
    id: string,
    session: string,
    fits: (value: T) => boolean = () => true,
  ): T | undefined {
    this.#forget();
    const shown = this.#plans.get(id);
    if (
      shown === undefined || shown.session !== session || !fits(shown.value)
    ) {
      return undefined;
    }
    this.#plans.delete(id);
    return shown.value;
  }

  #forget(): void {
    for (const [id, shown] of this.#plans) {
      if (shown.expiresAt <= this.#now()) this.#plans.delete(id);
    }
  }
}
