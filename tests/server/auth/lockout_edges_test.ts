/**
 * The lockout's limits, window edges and pruning, pinned to exact counts
 * (issue 34): which keys a prune drops, and at which millisecond.
 */
import { assertEquals } from "@std/assert";
import { Lockout, LOCKOUT_LIMITS } from "../../../lib/server/auth/lockout.ts";
import { fakeClock } from "../../_clock.ts";

Deno.test("LOCKOUT_LIMITS are 5 failures within 60 000 ms, locking for 300 000 ms", () => {
  assertEquals({ ...LOCKOUT_LIMITS }, {
    failures: 5,
    windowMs: 60_000,
    lockMs: 300_000,
  });
});

Deno.test("Lockout: a failure 59 999 ms old still counts toward the fifth", () => {
  const clock = fakeClock(0);
  const lockout = new Lockout(clock.now);
  for (let i = 0; i < 4; i++) lockout.fail(["k"]);
  clock.advance(LOCKOUT_LIMITS.windowMs - 1);
  lockout.fail(["k"]);
  assertEquals(lockout.lockedFor(["k"]), LOCKOUT_LIMITS.lockMs);
});

Deno.test("Lockout: one failure at t=0 locks nothing (lockedFor is 0), an unknown key neither", () => {
  const lockout = new Lockout(fakeClock(0).now);
  lockout.fail(["k"]);
  assertEquals(lockout.lockedFor(["k"]), 0);
  assertEquals(lockout.lockedFor(["unknown"]), 0);
  assertEquals(lockout.lockedFor([]), 0);
});

Deno.test("Lockout: lockedFor answers the longest lock of the keys given", () => {
  const clock = fakeClock(0);
  const lockout = new Lockout(clock.now);
  for (let i = 0; i < 5; i++) lockout.fail(["a"]);
  clock.advance(1_000);
  for (let i = 0; i < 5; i++) lockout.fail(["b"]);
  assertEquals(lockout.lockedFor(["a", "b"]), LOCKOUT_LIMITS.lockMs);
  assertEquals(lockout.lockedFor(["b", "a"]), LOCKOUT_LIMITS.lockMs);
  assertEquals(lockout.lockedFor(["a"]), LOCKOUT_LIMITS.lockMs - 1_000);
});

Deno.test("Lockout: 10 000 keys counting at once, then one more, prunes the oldest unlocked to 9 000 (size 9 001)", () => {
  const lockout = new Lockout(fakeClock(0).now);
  for (let i = 0; i < 10_000; i++) lockout.fail([`k${i}`]);
  assertEquals(lockout.size, 10_000);
  lockout.fail(["one more"]);
  assertEquals(lockout.size, 9_001);
  // The oldest went first; the newest stayed.
  lockout.fail(["k9999"]);
  assertEquals(lockout.size, 9_001);
});

Deno.test("Lockout: 10 000 keys whose failures are exactly 60 000 ms old are all pruned by the next failure (size 1)", () => {
  const clock = fakeClock(0);
  const lockout = new Lockout(clock.now);
  for (let i = 0; i < 10_000; i++) lockout.fail([`k${i}`]);
  clock.advance(LOCKOUT_LIMITS.windowMs);
  lockout.fail(["fresh"]);
  assertEquals(lockout.size, 1);
});

Deno.test("Lockout: a prune keeps a locked key among 9 999 stale ones and drops the stale ones", () => {
  const clock = fakeClock(0);
  const lockout = new Lockout(clock.now);
  for (let i = 0; i < 5; i++) lockout.fail(["locked"]);
  for (let i = 0; i < 9_999; i++) lockout.fail([`k${i}`]);
  assertEquals(lockout.size, 10_000);
  clock.advance(LOCKOUT_LIMITS.windowMs + 1);
  lockout.fail(["fresh"]);
  assertEquals(lockout.size, 2);
  assertEquals(
    lockout.lockedFor(["locked"]),
    LOCKOUT_LIMITS.lockMs - LOCKOUT_LIMITS.windowMs - 1,
  );
});

Deno.test("Lockout: a prune at the very millisecond a lock ends drops that key too (size 1)", () => {
  const clock = fakeClock(0);
  const lockout = new Lockout(clock.now);
  for (let i = 0; i < 5; i++) lockout.fail(["locked"]);
  for (let i = 0; i < 9_999; i++) lockout.fail([`k${i}`]);
  clock.advance(LOCKOUT_LIMITS.lockMs);
  lockout.fail(["fresh"]);
  assertEquals(lockout.size, 1);
});

Deno.test("Lockout: a flood prune keeps keys still locked even past the 90% target", () => {
  const clock = fakeClock(0);
  const lockout = new Lockout(clock.now);
  for (let i = 0; i < 10_000; i++) {
    for (let j = 0; j < 5; j++) lockout.fail([`locked${i}`]);
  }
  lockout.fail(["one more"]);
  // Every locked key is kept; only unlocked ones made room.
  assertEquals(lockout.size >= 10_000, true);
  assertEquals(lockout.lockedFor(["locked0"]), LOCKOUT_LIMITS.lockMs);
  assertEquals(lockout.lockedFor(["locked9998"]), LOCKOUT_LIMITS.lockMs);
});
