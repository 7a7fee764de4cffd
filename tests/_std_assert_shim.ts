/**
 * `@std/assert`'s names and argument order over `node:assert/strict`, because
 * jsr.io is unreachable from our machines. Mapped as `"@std/assert"` in
 * deno.dev.json: moving to `jsr:@std/assert` is a one-line change there.
 *
 * @module
 */

import assert from "node:assert/strict";

export { AssertionError } from "node:assert/strict";

/** Assert that `expr` is truthy. */
export function assert_(expr: unknown, msg?: string): asserts expr {
  assert.ok(expr, msg as string);
}
export { assert_ as assert };

/** Deep structural equality. */
export function assertEquals<T>(actual: T, expected: T, msg?: string): void {
  assert.deepStrictEqual(actual, expected, msg as string);
}

/** Deep structural inequality. */
export function assertNotEquals<T>(actual: T, expected: T, msg?: string): void {
  assert.notDeepStrictEqual(actual, expected, msg as string);
}

/** `Object.is` equality. */
export function assertStrictEquals<T>(
  actual: unknown,
  expected: T,
  msg?: string,
): asserts actual is T {
  assert.strictEqual(actual, expected, msg as string);
}

/** Not null and not undefined. */
export function assertExists<T>(
  actual: T,
  msg?: string,
): asserts actual is NonNullable<T> {
  if (actual === null || actual === undefined) {
    throw new assert.AssertionError({
      message: msg ?? `Expected a value, got ${actual}`,
    });
  }
}

/** Falsy. */
export function assertFalse(expr: unknown, msg?: string): void {
  assert.ok(!expr, msg ?? `Expected a falsy value, got ${String(expr)}`);
}

/** `instanceof`. */
export function assertInstanceOf<
  T extends abstract new (...args: never[]) => unknown,
>(
  actual: unknown,
  type: T,
  msg?: string,
): asserts actual is InstanceType<T> {
  assert.ok(
    actual instanceof type,
    msg ?? `Expected an instance of ${type.name}`,
  );
}

/** Regular-expression match. */
export function assertMatch(
  actual: string,
  expected: RegExp,
  msg?: string,
): void {
  assert.match(actual, expected, msg as string);
}

/** Substring. */
export function assertStringIncludes(
  actual: string,
  expected: string,
  msg?: string,
): void {
  assert.ok(
    actual.includes(expected),
    msg ??
      `Expected ${JSON.stringify(actual)} to include ${
        JSON.stringify(expected)
      }`,
  );
}

/** Every expected item is in the array (deep equality). */
export function assertArrayIncludes<T>(
  actual: readonly T[],
  expected: readonly T[],
  msg?: string,
): void {
  for (const item of expected) {
    assert.ok(
      actual.some((candidate) => {
        try {
          assert.deepStrictEqual(candidate, item);
          return true;
        } catch {
          return false;
        }
      }),
      msg ?? `Expected the array to include ${JSON.stringify(item)}`,
    );
  }
}

/** `actual` has every property of `expected` with equal values (recursively). */
export function assertObjectMatch(
  actual: Record<PropertyKey, unknown>,
  expected: Record<PropertyKey, unknown>,
  msg?: string,
): void {
  assert.deepStrictEqual(pick(actual, expected), expected, msg as string);
}

function pick(actual: unknown, expected: unknown): unknown {
  if (
    typeof actual !== "object" || actual === null ||
    typeof expected !== "object" ||
    expected === null || Array.isArray(expected)
  ) return actual;
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(expected)) {
    out[key] = pick(
      (actual as Record<string, unknown>)[key],
      (expected as Record<string, unknown>)[key],
    );
  }
  return out;
}

type ErrorClass<E extends Error> = abstract new (...args: never[]) => E;

/** `fn` throws (optionally of a class, with a message substring); returns the error. */
export function assertThrows<E extends Error = Error>(
  fn: () => unknown,
  errorClass?: ErrorClass<E>,
  msgIncludes?: string,
): E {
  try {
    fn();
  } catch (error) {
    return checkError(error, errorClass, msgIncludes);
  }
  throw new assert.AssertionError({
    message: "Expected the function to throw",
  });
}

/** `fn` rejects (optionally of a class, with a message substring); returns the error. */
export async function assertRejects<E extends Error = Error>(
  fn: () => PromiseLike<unknown>,
  errorClass?: ErrorClass<E>,
  msgIncludes?: string,
): Promise<E> {
  try {
    await fn();
  } catch (error) {
    return checkError(error, errorClass, msgIncludes);
  }
  throw new assert.AssertionError({
    message: "Expected the promise to reject",
  });
}

function checkError<E extends Error>(
  error: unknown,
  errorClass?: ErrorClass<E>,
  msgIncludes?: string,
): E {
  if (errorClass !== undefined && !(error instanceof errorClass)) {
    throw new assert.AssertionError({
      message: `Expected error to be an instance of ${errorClass.name}, got ${
        String(error)
      }`,
    });
  }
  if (msgIncludes !== undefined) {
    const message = error instanceof Error ? error.message : String(error);
    assertStringIncludes(message, msgIncludes);
  }
  return error as E;
}

/** Fail unconditionally. */
export function fail(msg?: string): never {
  throw new assert.AssertionError({ message: msg ?? "Failed assertion" });
}

/** Code that must never run. */
export function unreachable(msg?: string): never {
  throw new assert.AssertionError({
    message: msg ?? "Unreachable code was reached",
  });
}
