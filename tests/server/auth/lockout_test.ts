import { assertEquals } from "@std/assert";
import { Lockout, LOCKOUT_LIMITS } from "../../../lib/server/auth/lockout.ts";
import { fakeClock } from "../../_clock.ts";

Deno.test("Lockout locks a key on its fifth failure within the window", () => {
  const clock = fakeClock(0);
  const lockout = new Lockout(clock.now);
  for (let i = 0; i < 4; i++) lockout.fail(["address:a"]);
  assertEquals(lockout.lockedFor(["address:a"]), 0);
  lockout.fail(["address:a"]);
  assertEquals(lockout.lockedFor(["address:a"]), LOCKOUT_LIMITS.lockMs);
  clock.advance(LOCKOUT_LIMITS.lockMs - 1);
  assertEquals(lockout.lockedFor(["address:a"]), 1);
  clock.advance(1);
  assertEquals(lockout.lockedFor(["address:a"]), 0);
});

Deno.test("Lockout counts each key on its own: a credential locks wherever it is presented", () => {
  const lockout = new Lockout(fakeClock(0).now);
  for (let i = 0; i < 5; i++) {
    lockout.fail([`address:${i}`, "credential:x"]);
  }
  // No address reached five, the credential did.
  assertEquals(lockout.lockedFor(["address:0"]), 0);
  assertEquals(lockout.lockedFor(["address:9", "credential:x"]) > 0, true);
  assertEquals(lockout.lockedFor(["address:9", "credential:y"]), 0);
});

Deno.test("Lockout forgets failures older than 60 seconds", () => {
  const clock = fakeClock(0);
  const lockout = new Lockout(clock.now);
  for (let i = 0; i < 4; i++) lockout.fail(["k"]);
  clock.advance(LOCKOUT_LIMITS.windowMs);
  lockout.fail(["k"]);
  assertEquals(lockout.lockedFor(["k"]), 0);
});

Deno.test("Lockout keeps bounded memory under a flood of distinct keys", () => {
  const clock = fakeClock(0);
  const lockout = new Lockout(clock.now);
  for (let i = 0; i < 30_000; i++) lockout.fail([`credential:${i}`]);
  // A key locked just now survives the pruning of stale ones.
  for (let i = 0; i < 5; i++) lockout.fail(["address:a"]);
  clock.advance(LOCKOUT_LIMITS.windowMs + 1);
  for (let i = 0; i < 20_000; i++) lockout.fail([`credential:b${i}`]);
  assertEquals(lockout.lockedFor(["address:a"]) > 0, true);
  assertEquals(lockout.size <= 10_000, true);
});
