/**
 * Membership in a list of string literals, typed: the list narrows the value,
 * so no cast is needed to read an enum-like field.
 *
 * @module
 */

/** `value` when it is one of `values`, else `fallback`. */
export function oneOf<T extends string>(
  values: readonly T[],
  value: unknown,
  fallback: T,
): T {
  return isOneOf(values, value) ? value : fallback;
}

/** Whether `value` is one of `values` (a typed `includes`). */
export function isOneOf<T extends string>(
  values: readonly T[],
  value: unknown,
): value is T {
  return values.some((candidate) => candidate === value);
}
