/**
 * How a request ended: a leaf shared by the activity log (which stores it)
 * and its summary (which counts it), so neither imports the other.
 *
 * @module
 */

/** Every outcome of a request. */
export const OUTCOMES = ["success", "denied", "error", "rateLimited"] as const;
/** How a request ended. */
export type Outcome = typeof OUTCOMES[number];
