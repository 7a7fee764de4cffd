import { assert, assertEquals, assertThrows } from "@std/assert";
import {
  checkColumnNames,
  fitRows,
  namesWithin,
  narrowWrite,
  truncationOf,
} from "../../lib/features/tools/result_set.ts";
import { ToolFailure } from "../../lib/features/tools/failure.ts";
import { DEFAULT_SETTINGS } from "../../lib/app/settings.ts";

Deno.test("checkColumnNames() refuses names that alone take half the budget, saying nothing was returned", () => {
  const names = Array.from(
    { length: 1_600 },
    (_, i) => `${"x".repeat(1_000)}${i}`,
  );
  const error = assertThrows(
    () => checkColumnNames(names, 40_000),
    ToolFailure,
  );
  assertEquals(error.code, "invalid_argument");
  assert(error.message.includes("1600 column names"), error.message);
  assert(error.message.includes("nothing was returned"), error.message);
  checkColumnNames(["id", "name"], 40_000);
});

Deno.test("fitRows() drops the first row too when it alone is wider than the budget", () => {
  const row = Array.from(
    { length: 1_600 },
    () => "x".repeat(20) + "…[cut: 29980 more characters]",
  );
  const answer = { columns: row.map((_, i) => `c${i}`), rows: [row, row] };
  assertEquals(fitRows(answer, 40_000), 0);
  assertEquals(fitRows({ columns: ["a"], rows: [["1"], ["2"]] }, 40_000), 2);
  const truncation = truncationOf({
    truncation: { rows: false, bytes: true, cells: 1_600 },
    rowsReturned: 0,
    maxRows: 500,
    total: null,
  }, DEFAULT_SETTINGS);
  assert(
    String(truncation.message).includes(
      "the first row alone is wider than the budget",
    ),
    String(truncation.message),
  );
});

Deno.test("namesWithin() cuts long names and leaves out those past the room, and says so", () => {
  const names = Array.from({ length: 1_600 }, () => "x".repeat(1_000));
  const listed = namesWithin(names, 10_000);
  assert(JSON.stringify(listed).length < 10_500);
  assert(listed.columns.length < 1_600);
  assert(listed.columns_cut!.includes(`of 1600 column names left out`));
  assertEquals(namesWithin(["a", "b"], 10_000), { columns: ["a", "b"] });
});

Deno.test("narrowWrite() keeps a run write's answer: its returned rows left out, its names cut, said as cut", () => {
  const columns = Array.from({ length: 1_600 }, () => "x".repeat(1_000));
  const result = {
    columns,
    rows: [columns.map(() => 1)],
    rowsAffected: 1,
    truncated: false,
    truncation: { rows: false, bytes: false, cells: 0 },
  };
  narrowWrite(result, 40_000);
  assertEquals(result.rows, []);
  assertEquals(result.rowsAffected, 1);
  assertEquals(result.truncation.bytes, true);
  assert(JSON.stringify(result.columns).length <= 10_000);
  const small = {
    columns: ["id"],
    rows: [[1]],
    rowsAffected: 1,
    truncated: false,
    truncation: { rows: false, bytes: false, cells: 0 },
  };
  narrowWrite(small, 40_000);
  assertEquals(small.rows, [[1]]);
});
