import { assertEquals } from "@std/assert";
import {
  delayPercentile,
  type LoopDelaySnapshot,
} from "../../lib/server/loop_delay.ts";

const snapshot = (counts: Record<number, number>): LoopDelaySnapshot => {
  const all = new Array(1_000).fill(0);
  for (const [bucket, n] of Object.entries(counts)) all[Number(bucket)] = n;
  return { bucketMs: 0.1, counts: all, max: 0 };
};

Deno.test("delayPercentile() reads one phase: the samples between two snapshots", () => {
  // Before: 1,000 samples of 30 ms (an earlier phase) that must not count.
  const before = snapshot({ 300: 1_000 });
  // After: 98 more of 0–0.1 ms and 2 more of 5.0–5.1 ms.
  const after = snapshot({ 0: 98, 50: 2, 300: 1_000 });
  assertEquals(delayPercentile(before, after, 50), 0.1);
  assertEquals(delayPercentile(before, after, 98), 0.1);
  assertEquals(delayPercentile(before, after, 99).toFixed(1), "5.1");
});

Deno.test("delayPercentile() is 0 when nothing was sampled", () => {
  const same = snapshot({ 3: 10 });
  assertEquals(delayPercentile(same, same, 99), 0);
});
