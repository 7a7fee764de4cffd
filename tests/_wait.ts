/**
 * Waiting for a condition instead of sleeping and hoping: a test that waits
 * until something is true is as fast as the machine allows and fails with
 * what it waited for, never by a timing guess on a busy machine.
 *
 * @module
 */

/** How long and how often {@linkcode waitUntil} looks. */
export interface WaitOptions {
  /** Give up after this long (default 10 s: generous on a loaded CI machine). */
  timeoutMs?: number;
  /** Look again after this long (default 10 ms). */
  intervalMs?: number;
}

/** What a condition's truthy value can be: its type without the falsy ones. */
export type Truthy<T> = Exclude<T, false | 0 | "" | null | undefined>;

/**
 * Wait until `condition` holds; throw naming `what` when it does not within
 * the time. Returns the condition's first truthy value, so a condition can
 * hand back what it looked at (`answer.status === 503 && answer`).
 */
export async function waitUntil<T>(
  what: string,
  condition: () => T | Promise<T>,
  options: WaitOptions = {},
): Promise<Truthy<T>> {
  const timeoutMs = options.timeoutMs ?? 10_000;
  const intervalMs = options.intervalMs ?? 10;
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await condition();
    // A truthy value is none of the falsy ones Truthy<T> takes out.
    if (value) return value as Truthy<T>;
    if (Date.now() > deadline) {
      throw new Error(`waited ${timeoutMs} ms for ${what}; it never happened`);
    }
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}
