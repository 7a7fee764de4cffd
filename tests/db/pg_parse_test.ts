import { assert, assertEquals, assertThrows } from "@std/assert";
import { parsePostgres } from "../../lib/db/postgres/pg_parse.ts";

async function tierOf(sql: string) {
  const parsed = await parsePostgres(sql);
  return parsed.ok && parsed.analysis !== null
    ? `${parsed.analysis.tier}${parsed.analysis.dangerous ? "!" : ""}`
    : "none";
}

Deno.test("parsePostgres() runs EXPLAIN's statement only when ANALYZE is on", async () => {
  const cases: [string, string][] = [
    ["EXPLAIN DELETE FROM t", "read"],
    ["EXPLAIN (ANALYZE false) DELETE FROM t", "read"],
    ["EXPLAIN (ANALYZE off) DELETE FROM t", "read"],
    ["EXPLAIN (ANALYZE 0) DELETE FROM t", "read"],
    ["EXPLAIN (ANALYZE) DELETE FROM t", "write!"],
    ["EXPLAIN (ANALYZE on) DELETE FROM t", "write!"],
    ["EXPLAIN (ANALYZE 1) DELETE FROM t", "write!"],
    ["EXPLAIN ANALYZE DROP TABLE t", "none"], // not a statement EXPLAIN takes
    ["EXPLAIN ANALYZE UPDATE t SET a = 1 WHERE b", "write"],
  ];
  for (const [sql, tier] of cases) assertEquals(await tierOf(sql), tier, sql);
});

Deno.test("parsePostgres() finds writes nested anywhere", async () => {
  assertEquals(
    await tierOf("WITH d AS (DELETE FROM t RETURNING *) SELECT * FROM d"),
    "write!",
  );
  assertEquals(await tierOf("SELECT * INTO x FROM t"), "write");
  assertEquals(await tierOf("SELECT 1 FOR UPDATE"), "write");
});

Deno.test("parsePostgres() hands out a frozen parse: the cached one cannot be changed by a caller", async () => {
  const text = "SELECT lower(name) FROM frozen_parse_probe";
  const first = await parsePostgres(text);
  const again = await parsePostgres(text);
  assert(first.ok && first.analysis !== null);
  assert(again.ok && again.analysis !== null);
  assertThrows(() =>
    first.analysis!.functions.push({ schema: null, name: "x", args: 0 })
  );
  assertThrows(() => {
    (again.analysis as { tier: string }).tier = "write";
  });
  assertEquals(again.analysis.functions.map((fn) => fn.name), ["lower"]);
  assertEquals(again.analysis.tier, "read");
});
