/**
 * The per-token budgets' arithmetic on a fake clock: calls per minute, rows
 * read and writes per hour, each refused with when to retry, and the kill
 * switch (docs/tokens.md "Budgets and pausing").
 */

import { assert, assertEquals, assertMatch } from "@std/assert";
import { NO_BUDGET, type TokenBudget } from "../../lib/app/token_budgets.ts";
import {
  bridgePrincipal,
  tokenPrincipal,
} from "../../lib/server/auth/principals.ts";
import { budgetKey, TokenBudgets } from "../../lib/server/budgets.ts";
import { ANONYMOUS } from "../../lib/server/auth/principals.ts";
import { fakeClock } from "../_clock.ts";

const agent = tokenPrincipal({
  id: "t1",
  name: "agent",
  level: "readWrite",
  connections: null,
});

function budgets(entries: [string, Partial<TokenBudget>][]) {
  return new Map(entries.map(([k, b]) => [k, { ...NO_BUDGET, ...b }]));
}

Deno.test("a token limited to 10 calls a minute gets its 11th refused with the retry time", () => {
  const clock = fakeClock(1_000_000);
  const limiter = new TokenBudgets(clock.now);
  limiter.update(budgets([["t1", { maxCallsPerMinute: 10 }]]));
  for (let i = 0; i < 10; i++) {
    assertEquals(limiter.admit(agent), null, `call ${i + 1}`);
    clock.advance(1_000);
  }
  // The first call was 10 s ago: it leaves the window in 50 s.
  const refused = limiter.admit(agent);
  assert(refused !== null);
  assertEquals(refused.retryAfterSeconds, 50);
  assertEquals(refused.paused, false);
  assertMatch(
    refused.message,
    /^the token "agent" may make 10 calls a minute \(its budget\), and made them; try again in 50 s, or ask the user to raise it \(.* tokens set "agent" --max-calls-per-minute N\)$/,
  );
  // A refused call spends nothing: at the retry time one call gets in.
  clock.advance(49_000);
  assert(limiter.admit(agent) !== null);
  clock.advance(1_000);
  assertEquals(limiter.admit(agent), null);
  assert(limiter.admit(agent) !== null);
  // Other principals are not held by this budget.
  assertEquals(limiter.admit(ANONYMOUS), null);
  assertEquals(budgetKey(ANONYMOUS), null);
});

Deno.test("rows read and writes per hour refuse the next read or write with the retry time", () => {
  const clock = fakeClock(0);
  const limiter = new TokenBudgets(clock.now);
  limiter.update(
    budgets([["t1", { maxRowsPerHour: 1_000, maxWritesPerHour: 2 }]]),
  );
  const call = limiter.callBudget(agent)!;
  assertEquals(call.refuse("read"), null);
  call.spent("read", 600);
  clock.advance(60_000);
  call.spent("read", 600);
  assertMatch(
    call.refuse("read") ?? "",
    /has spent its 1,000 rows read an hour \(its budget\); try again in 3540 s/,
  );
  // When the first read leaves the hour, 600 rows remain: reads run again.
  clock.advance(3_540_000);
  assertEquals(call.refuse("read"), null);
  call.spent("write", 0);
  call.spent("write", 0);
  assertMatch(
    call.refuse("write") ?? "",
    /2 writes an hour.*try again in 3600 s.*--max-writes-per-hour N/,
  );
  assertEquals(limiter.callBudget(ANONYMOUS), undefined);
});

Deno.test("pausing a token refuses everything and names the keys whose requests must stop", () => {
  const limiter = new TokenBudgets(fakeClock().now);
  const bridge = bridgePrincipal("b1", "__stdio_bridge__", "inst");
  assertEquals(budgetKey(bridge), "bridge");
  assertEquals(
    limiter.update(budgets([["t1", { pausedAt: 5 }], ["bridge", {}]])),
    ["t1"],
  );
  // Already paused: no new stop.
  assertEquals(limiter.update(budgets([["t1", { pausedAt: 5 }]])), []);
  const refused = limiter.admit(agent);
  assertEquals(refused?.paused, true);
  assertEquals(refused?.retryAfterSeconds, null);
  assertMatch(
    refused?.message ?? "",
    /is paused by the user.*tokens resume "agent"/,
  );
  assertEquals(limiter.admit(bridge), null);
  limiter.update(budgets([["bridge", { pausedAt: 9 }]]));
  assertEquals(limiter.admit(agent), null);
  assertMatch(limiter.admit(bridge)?.message ?? "", /tokens resume --bridge/);
});

Deno.test("nothing is counted without a limit: a limit set later counts from then on", () => {
  const limiter = new TokenBudgets(fakeClock().now);
  for (let i = 0; i < 100; i++) assertEquals(limiter.admit(agent), null);
  limiter.callBudget(agent)!.spent("read", 1_000_000);
  limiter.update(
    budgets([["t1", { maxCallsPerMinute: 10, maxRowsPerHour: 5 }]]),
  );
  assertEquals(limiter.callBudget(agent)!.refuse("read"), null);
  for (let i = 0; i < 10; i++) assertEquals(limiter.admit(agent), null);
  assert(limiter.admit(agent) !== null);
});

Deno.test("writes admitted at once hold their places until they run or their call ends", () => {
  const clock = fakeClock(0);
  const limiter = new TokenBudgets(clock.now);
  limiter.update(budgets([["t1", { maxWritesPerHour: 2 }]]));
  const calls = Array.from({ length: 4 }, () => limiter.callBudget(agent)!);
  const admitted = calls.map((call) => call.refuse("write"));
  assertEquals(admitted.slice(0, 2), [null, null]);
  assertMatch(admitted[2] ?? "", /spent its 2 writes an hour/);
  assertMatch(admitted[3] ?? "", /spent its 2 writes an hour/);
  assertMatch(
    admitted[2] ?? "",
    /2 of them still running or awaiting approval/,
  );
  // One ran, one ended without running (declined, failed): its place is back.
  calls[0]!.spent("write", 0);
  calls[0]!.release();
  calls[1]!.release();
  calls[1]!.release();
  const next = limiter.callBudget(agent)!;
  assertEquals(next.refuse("write"), null);
  next.spent("write", 0);
  assertMatch(
    limiter.callBudget(agent)!.refuse("write") ?? "",
    /spent its 2 writes an hour.*try again in 3600 s/,
  );
});

Deno.test("a cancelled call's handler that reaches a write after its call ended holds no place", () => {
  const limiter = new TokenBudgets(fakeClock(0).now);
  limiter.update(budgets([["t1", { maxWritesPerHour: 1 }]]));
  const abandoned = limiter.callBudget(agent)!;
  abandoned.release();
  assertEquals(abandoned.refuse("write"), null);
  // Nothing would ever give that place back: the next call may write.
  assertEquals(limiter.callBudget(agent)!.refuse("write"), null);
});
