/**
 * The one constant-time comparison: token hashes (the verifier) and the
 * console's keys compare without an early exit, so the time taken does not
 * say where two texts first differ.
 *
 * @example
 * ```ts
 * import { constantTimeEqual } from "./constant_time.ts";
 *
 * constantTimeEqual("a3f1", "a3f1"); // true
 * constantTimeEqual("a3f1", "a3f2"); // false, after as long a loop
 * ```
 *
 * @module
 */

/** Whether two strings are equal, compared over the whole of the longer one. */
export function constantTimeEqual(a: string, b: string): boolean {
  let difference = a.length ^ b.length;
  const length = Math.max(a.length, b.length);
  for (let i = 0; i < length; i++) {
    difference |= (a.charCodeAt(i) | 0) ^ (b.charCodeAt(i) | 0);
  }
  return difference === 0;
}
