import { assertEquals } from "@std/assert";
import {
  figuresOf,
  percentile,
  type StatRow,
  windowStats,
} from "../../lib/app/activity_stats.ts";

const row = (
  time: number,
  durationMs: number,
  outcome: StatRow["outcome"] = "success",
  clientName: string | null = "a",
  connectionId: string | null = "c1",
): StatRow => ({ time, durationMs, outcome, clientName, connectionId });

Deno.test("percentile() is the nearest rank", () => {
  assertEquals(percentile([], 0.5), null);
  assertEquals(percentile([7], 0.95), 7);
  const hundred = Array.from({ length: 100 }, (_, i) => i + 1);
  assertEquals(percentile(hundred, 0.5), 50);
  assertEquals(percentile(hundred, 0.95), 95);
  assertEquals(percentile([1, 2, 3], 0.5), 2);
});

Deno.test("figuresOf() counts calls, denials, errors (rate limits too) and the rate", () => {
  const figures = figuresOf([
    row(0, 10),
    row(1, 30, "denied"),
    row(2, 20, "error"),
    row(3, 40, "rateLimited"),
  ], 2);
  assertEquals(figures, {
    calls: 4,
    perMinute: 2,
    p50: 20,
    p95: 40,
    denied: 1,
    errors: 2,
  });
});

Deno.test("windowStats() keeps the window, buckets by time and groups by client and connection", () => {
  const from = 0;
  const to = 60 * 60_000;
  const stats = windowStats(
    [
      row(-1, 5),
      row(0, 5, "success", "a", "c1"),
      row(30 * 60_000, 15, "denied", "b", "c2"),
      row(to - 1, 25, "success", "a", null),
      row(to, 99),
    ],
    from,
    to,
    60,
  );
  assertEquals(stats.total.calls, 3);
  assertEquals(stats.buckets.length, 60);
  assertEquals(stats.buckets[0]!.calls, 1);
  assertEquals(stats.buckets[30]!.denied, 1);
  assertEquals(stats.buckets[59]!.calls, 1);
  assertEquals(
    stats.byClient.map((g) => [g.name, g.figures.calls]),
    [["a", 2], ["b", 1]],
  );
  assertEquals(
    stats.byConnection.map((g) => [g.id, g.figures.calls]).sort(),
    [["c1", 1], ["c2", 1], [null, 1]].sort(),
  );
});
