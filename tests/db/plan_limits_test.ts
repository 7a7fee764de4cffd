/**
 * The plan guard's estimates, pure: a statement's trailing LIMIT, MariaDB's
 * examined rows, the tables SQLite's plan scans (aliases traced), and the refusal's
 * words (docs/security.md "Reads refused by their plan").
 */

import { assertEquals, assertMatch } from "@std/assert";
import {
  aliasPairs,
  mysqlRowEstimate,
  planLimitRefusal,
  sqliteScans,
  statRows,
  trailingLimit,
} from "../../lib/db/plan_limits.ts";

Deno.test("trailingLimit reads only a literal LIMIT ending the statement", () => {
  assertEquals(trailingLimit("select * from t limit 10", "sqlite"), 10);
  // The skipped rows are read too.
  assertEquals(trailingLimit("select * from t LIMIT 10 OFFSET 5", "mysql"), 15);
  assertEquals(trailingLimit("select * from t limit 5, 20", "mysql"), 25);
  assertEquals(
    trailingLimit("select * from t limit 10 offset ?", "mysql"),
    null,
  );
  assertEquals(
    trailingLimit("select * from (select * from t limit 3) x", "sqlite"),
    null,
  );
  assertEquals(trailingLimit("select * from t limit ?", "sqlite"), null);
  assertEquals(trailingLimit("select * from t limit 2 + 3", "sqlite"), null);
  assertEquals(trailingLimit("select * from t", "mysql"), null);
  assertEquals(trailingLimit("select 'limit 3' from t", "mysql"), null);
});

Deno.test("mysqlRowEstimate multiplies the rows each access examines", () => {
  const plan = {
    query_block: {
      select_id: 1,
      nested_loop: [
        {
          table: {
            table_name: "a",
            access_type: "ALL",
            rows: 1000,
            filtered: 50,
          },
        },
        {
          table: {
            table_name: "b",
            access_type: "eq_ref",
            rows: 1,
            filtered: 100,
          },
        },
      ],
    },
  };
  assertEquals(mysqlRowEstimate(plan), { rows: 500, fullScans: ["a"] });
  assertEquals(mysqlRowEstimate({ query_block: {} }).rows, null);
});

Deno.test("sqliteScans and aliasPairs name the tables read whole", () => {
  const names = ["b", "big", "main.big", "c", "t", "small"];
  assertEquals(
    sqliteScans([
      "SCAN b",
      "SCAN main.big USING COVERING INDEX bv",
      "SEARCH c USING INTEGER PRIMARY KEY (rowid<?)",
      "SCAN CONSTANT ROW",
      "SCAN (subquery-2)",
      "SCAN pragma_table_info VIRTUAL TABLE INDEX 0:",
      "SEARCH t USING AUTOMATIC COVERING INDEX (x=?)",
    ], names),
    ["b", "main.big", "t"],
  );
  // An alias is matched as a whole, whatever words or dots it holds.
  for (
    const alias of [
      "q.r",
      "constant row",
      "x using index y",
      "(z",
      "a virtual table b",
    ]
  ) {
    const line = `SCAN ${alias.toUpperCase()}`;
    assertEquals(sqliteScans([line], [...names, alias]), [alias], line);
  }
  assertEquals(sqliteScans(["SCAN smaller"], names), []);
  const pairs = aliasPairs('select * from big as b join "Other T" o', "sqlite");
  assertEquals([...pairs.get("b") ?? []], ["big"]);
  assertEquals([...pairs.get("o") ?? []], ["other t"]);
  assertEquals(statRows("1000000 2 1"), 1_000_000);
  assertEquals(statRows(null), null);
});

Deno.test("the refusal holds the estimate, the limit and what to do", () => {
  const refusal = planLimitRefusal(
    { rows: 1_000_000, cost: 15_406, how: "the plan's top node, Seq Scan" },
    { maxEstimatedRows: 100_000 },
    '"Shop"',
    "dbport",
  );
  assertMatch(
    refusal ?? "",
    /^the plan of this read expects about 1,000,000 rows \(the plan's top node, Seq Scan\), over the limit of 100,000 rows \(maxEstimatedRows\) on "Shop"; nothing was run\. .*WHERE.*LIMIT.*export_query.*raise the limit \(dbport connections set "Shop" --max-estimated-rows N\)$/,
  );
  const floor = planLimitRefusal(
    {
      rows: 100_001,
      cost: null,
      how: "the whole table t, counted",
      atLeast: true,
    },
    { maxEstimatedRows: 100_000 },
    '"S"',
    "dbport",
  );
  assertMatch(floor ?? "", /expects more than 100,000 rows/);
  assertEquals(
    planLimitRefusal(
      { rows: 10, cost: 5, how: "x" },
      { maxEstimatedRows: 10, maxEstimatedCost: 5 },
      '"S"',
      "dbport",
    ),
    null,
  );
  assertMatch(
    planLimitRefusal(
      { rows: 1, cost: 5_000, how: "x" },
      { maxEstimatedCost: 1_000 },
      '"S"',
      "dbport",
    ) ?? "",
    /a cost of 5,000, over the limit of 1,000 \(maxEstimatedCost\).*--max-estimated-cost N/,
  );
});
