/**
 * The text of anything thrown: an Error's message, anything else as a string.
 * (Fifteen places spelled it out before.)
 *
 * @module
 */

/** `error`'s message, whatever was thrown. */
export function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
