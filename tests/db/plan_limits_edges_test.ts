/**
 * Plan-limit arithmetic at its edges (lib/db/plan_limits.ts): a limit just
 * met or just passed, both limits over at once, a LIMIT inside parentheses,
 * MySQL's `filtered` share and its floor of one row, string numbers, SQLite
 * SEARCH lines, and aliases with quotes.
 */

import { assertEquals } from "@std/assert";
import {
  aliasPairs,
  hasPlanLimits,
  mysqlRowEstimate,
  planLimitRefusal,
  sqliteScans,
  statRows,
  trailingLimit,
} from "../../lib/db/plan_limits.ts";

Deno.test("hasPlanLimits: either limit alone counts; none is off", () => {
  assertEquals(hasPlanLimits({}), false);
  assertEquals(hasPlanLimits({ maxEstimatedRows: 0 }), true);
  assertEquals(hasPlanLimits({ maxEstimatedCost: 0 }), true);
});

Deno.test("trailingLimit: LIMIT inside parentheses is not the statement's; the last LIMIT at depth 0 is", () => {
  assertEquals(
    trailingLimit("select * from (select * from t limit 5) s", "sqlite"),
    null,
  );
  assertEquals(
    trailingLimit(
      "select * from (select * from t limit 5) s limit 7",
      "sqlite",
    ),
    7,
  );
  assertEquals(
    trailingLimit("select (select 1 limit 1) from t limit 3", "mysql"),
    3,
  );
  assertEquals(trailingLimit("select * from t limit 0", "mysql"), 0);
  assertEquals(trailingLimit("select * from t limit 1.5", "mysql"), null);
  assertEquals(
    trailingLimit("select * from t limit 5 offset x", "mysql"),
    null,
  );
  assertEquals(trailingLimit("select * from t limit 5, ?", "mysql"), null);
  assertEquals(trailingLimit("select * from t limit 5 foo 6", "mysql"), null);
  assertEquals(trailingLimit("select * from t limit", "mysql"), null);
  assertEquals(trailingLimit("select * from t limit 5 offset", "mysql"), null);
});

Deno.test("mysqlRowEstimate: filtered shares rows, never below one row per access; strings read as numbers", () => {
  const table = (name: string, rows: unknown, filtered?: unknown) => ({
    table: {
      table_name: name,
      access_type: "ref",
      rows_examined_per_scan: rows,
      ...(filtered === undefined ? {} : { filtered }),
    },
  });
  // 1000 rows at 10% filtered: 100.
  assertEquals(
    mysqlRowEstimate({ query_block: table("a", 1000, 10) } as never).rows,
    100,
  );
  // 10 rows at 1%: 0.1, raised to 1.
  assertEquals(
    mysqlRowEstimate({ query_block: table("a", 10, "1.00") } as never).rows,
    1,
  );
  // MariaDB's "rows" and string numbers; no filtered: all of them.
  assertEquals(
    mysqlRowEstimate({
      query_block: { nested_loop: [table("a", "20"), table("b", "30")] },
    } as never),
    { rows: 600, fullScans: [] },
  );
  // A table without a number adds nothing; a non-finite one neither.
  assertEquals(
    mysqlRowEstimate({
      query_block: { nested_loop: [table("a", 4), table("b", "many")] },
    } as never).rows,
    4,
  );
  // An object that is not a table access is walked into, not counted.
  assertEquals(
    mysqlRowEstimate({ table: { rows: 9 } } as never).rows,
    null,
  );
});

Deno.test("sqliteScans: SEARCH reads whole only with an automatic index; SCAN always; other lines never", () => {
  const names = ["big", "small"];
  assertEquals(
    sqliteScans(["SEARCH big USING INDEX i (a=?)"], names),
    [],
  );
  assertEquals(
    sqliteScans(["  SEARCH big USING AUTOMATIC COVERING INDEX (a=?)"], names),
    ["big"],
  );
  assertEquals(sqliteScans(["SCAN BIG"], names), ["big"]);
  assertEquals(sqliteScans(["USE TEMP B-TREE FOR ORDER BY big"], names), []);
  assertEquals(sqliteScans(["SCAN big", "SCAN big"], names), ["big"]);
  assertEquals(sqliteScans(["SCANbig"], names), []);
});

Deno.test("aliasPairs and statRows: AS optional, quoted names unquoted; a stat's first number", () => {
  const pairs = aliasPairs(
    "select * from `Big` as b join `ot``her` o on 1",
    "mysql",
  );
  assertEquals([...pairs.get("b") ?? []], ["big"]);
  assertEquals([...pairs.get("o") ?? []], ["ot`her"]);
  assertEquals(pairs.has("as"), false);
  assertEquals(
    [...(aliasPairs("select * from t x", "sqlite").get("x") ?? [])],
    ["t"],
  );
  // SQLite's doubled quote is one character in the name a
  // plan line says (`SCAN q"r`).
  assertEquals(
    [
      ...(aliasPairs('select * from "x""y" "q""r"', "sqlite").get('q"r') ??
        []),
    ],
    ['x"y'],
  );
  assertEquals(statRows("  42 1"), 42);
  assertEquals(statRows("x 42"), null);
  assertEquals(statRows(undefined), null);
});

Deno.test("planLimitRefusal: a limit met is no refusal, one past is; both over are said together", () => {
  const estimate = { rows: 101, cost: 51, how: "the top node" };
  assertEquals(
    planLimitRefusal(
      { ...estimate, rows: 100 },
      { maxEstimatedRows: 100 },
      '"S"',
      "dbport",
    ),
    null,
  );
  assertEquals(
    planLimitRefusal(
      estimate,
      { maxEstimatedRows: 100, maxEstimatedCost: 50 },
      '"S"',
      "dbport",
    ),
    'the plan of this read expects about 101 rows (the top node), over the limit of 100 rows (maxEstimatedRows) and a cost of 51, over the limit of 50 (maxEstimatedCost) on "S"; nothing was run. Narrow it with a WHERE on an indexed column or a LIMIT, use export_query to write every row to a file, or ask the user to raise the limit (dbport connections set "S" --max-estimated-rows N --max-estimated-cost N)',
  );
  // Only the cost over: only its flag.
  assertEquals(
    planLimitRefusal(
      { ...estimate, rows: 1 },
      { maxEstimatedRows: 100, maxEstimatedCost: 50 },
      '"S"',
      "dbport",
    )?.endsWith('set "S" --max-estimated-cost N)'),
    true,
  );
  // No estimate: nothing to compare, no refusal here.
  assertEquals(
    planLimitRefusal(
      { rows: null, cost: null, how: "x" },
      { maxEstimatedRows: 0, maxEstimatedCost: 0 },
      '"S"',
      "dbport",
    ),
    null,
  );
  // A cost of exactly the limit passes; a fraction is rounded in the text.
  assertEquals(
    planLimitRefusal(
      { rows: 1, cost: 50, how: "x" },
      { maxEstimatedCost: 50 },
      '"S"',
      "d",
    ),
    null,
  );
});
