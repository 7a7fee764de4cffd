/**
 * Alarms on one timer (lib/base/alarms.ts): each fires once, no earlier
 * than asked; a cleared one never fires; the runtime's timer is armed only
 * while an alarm is set.
 */

import { assert, assertEquals, assertThrows } from "@std/assert";
import { AlarmClock, settledWithin } from "../../lib/base/alarms.ts";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

Deno.test("alarms fire in order, each once and no earlier than asked", async () => {
  const clock = new AlarmClock();
  const started = performance.now();
  const fired: [string, number][] = [];
  const at = (name: string) => () =>
    fired.push([name, performance.now() - started]);
  clock.set(120, at("c"));
  clock.set(40, at("a"));
  clock.set(80, at("b"));
  await sleep(250);
  assertEquals(fired.map(([name]) => name), ["a", "b", "c"]);
  for (const [name, ms] of fired) {
    const asked = { a: 40, b: 80, c: 120 }[name]!;
    assert(ms >= asked - 1, `${name} fired at ${ms} ms, asked ${asked}`);
  }
  assertEquals(clock.size, 0);
  assertEquals(clock.armed, false, "no timer outlives the last alarm");
});

Deno.test("a cleared alarm never fires, and the last one cleared clears the timer", async () => {
  const clock = new AlarmClock();
  let fired = 0;
  const first = clock.set(30, () => fired++);
  const second = clock.set(60, () => fired++);
  assert(clock.armed);
  first.clear();
  assert(clock.armed, "one alarm is still set");
  second.clear();
  second.clear();
  assertEquals(clock.armed, false);
  await sleep(100);
  assertEquals(fired, 0);
});

Deno.test("an alarm past the one-second tick fires at its time, not at the tick", async () => {
  const clock = new AlarmClock();
  const started = performance.now();
  let firedAt = -1;
  clock.set(1_300, () => firedAt = performance.now() - started);
  await sleep(1_100);
  assertEquals(firedAt, -1, "not fired at the first tick");
  assert(clock.armed, "re-armed after the tick");
  await sleep(600);
  assert(firedAt >= 1_299, `fired at ${firedAt} ms`);
  assertEquals(clock.armed, false);
});

Deno.test("a new alarm due before the armed one re-arms the timer", async () => {
  const clock = new AlarmClock();
  const late = clock.set(5_000, () => {});
  let fired = false;
  clock.set(20, () => fired = true);
  await sleep(80);
  assert(fired, "the sooner alarm fired");
  assertEquals(clock.size, 1);
  late.clear();
  assertEquals(clock.armed, false);
});

Deno.test("an alarm that throws does not keep the others from firing", async () => {
  const clock = new AlarmClock();
  let other = false;
  clock.set(10, () => {
    throw new Error("boom");
  });
  clock.set(10, () => other = true);
  // The runtime reports the error as uncaught; catch it for the test.
  const errors: unknown[] = [];
  const onError = (event: ErrorEvent) => {
    event.preventDefault();
    errors.push(event.error);
  };
  globalThis.addEventListener("error", onError);
  try {
    await sleep(60);
  } finally {
    globalThis.removeEventListener("error", onError);
  }
  assert(other, "the second alarm fired");
  assertEquals(errors.length, 1);
  assertThrows(
    () => {
      throw errors[0];
    },
    Error,
    "boom",
  );
});

Deno.test("settledWithin: true for work that resolves or fails in time, false for work still pending, and no alarm left", async () => {
  assertEquals(await settledWithin(Promise.resolve(1), 50), true);
  assertEquals(await settledWithin(Promise.reject(new Error("x")), 50), true);
  const never = new Promise<void>(() => {});
  const started = performance.now();
  assertEquals(await settledWithin(never, 60), false);
  assert(performance.now() - started >= 59, "not before its time");
  // An alarm left set would keep the process's timer: the test's own
  // sanitizer fails it.
});
