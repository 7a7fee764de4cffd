import { assert, assertEquals } from "@std/assert";
import { fitHistory } from "../../lib/features/resources/history_fit.ts";

const entry = (i: number, query: string) => ({
  id: i,
  query,
  outcome: "ok",
  client: "test",
});

Deno.test("fitHistory() cuts long statements to a share of the budget and says how many", () => {
  const entries = Array.from(
    { length: 50 },
    (_, i) => entry(i, `select ${i}, '${"x".repeat(100_000)}'`),
  );
  const fitted = fitHistory(entries, 40_000);
  assert(JSON.stringify(fitted).length <= 40_000);
  assertEquals((fitted.history as unknown[]).length, 50);
  assertEquals(fitted.cut_statements, 50);
  assertEquals(fitted.entries_left_out, 0);
  assert(String(fitted.note).includes("50 statements were cut"));
});

Deno.test("fitHistory() leaves out the oldest entries when even the shares do not fit", () => {
  const entries = Array.from(
    { length: 500 },
    (_, i) => entry(i, "x".repeat(1_000)),
  );
  const fitted = fitHistory(entries, 40_000);
  const kept = fitted.history as { id: number }[];
  assert(JSON.stringify(fitted).length <= 40_000);
  assert(kept.length < 500);
  assertEquals(kept[0]!.id, 0);
  assertEquals(fitted.entries_left_out, 500 - kept.length);
  const small = fitHistory([entry(1, "select 1")], 40_000);
  assertEquals(small, { history: [entry(1, "select 1")] });
});
