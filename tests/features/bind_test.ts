/**
 * `execute_query`'s `params` check (lib/features/tools/bind.ts) without a
 * database: the count against the statement's placeholders per engine, the
 * 1000-value limit, integers past 2^53, approximate (float) values, and the
 * text the user is asked about.
 */

import { assertEquals, assertThrows } from "@std/assert";
import {
  checkParams,
  MAX_PARAMS,
  withValues,
} from "../../lib/features/tools/bind.ts";
import { ToolFailure } from "../../lib/features/tools/failure.ts";

function refusal(run: () => unknown): string {
  const error = assertThrows(run, ToolFailure);
  assertEquals(error.code, "invalid_argument");
  return error.message;
}

Deno.test("checkParams: no params means nothing bound, even with placeholders in the text", () => {
  assertEquals(checkParams(undefined, "select $1", "postgres"), []);
  assertEquals(checkParams(undefined, "select ?", "mysql"), []);
});

Deno.test("checkParams: one value per placeholder is accepted and returned as given", () => {
  assertEquals(checkParams([1, "a"], "select $1, $2", "postgres"), [1, "a"]);
  assertEquals(checkParams([null], "select ?", "mysql"), [null]);
  assertEquals(checkParams([], "select 1", "sqlite"), []);
});

Deno.test("checkParams: a count mismatch names both counts, the engine's placeholders and singular/plural", () => {
  assertEquals(
    refusal(() => checkParams([1, 2], "select $1", "postgres")),
    "the statement has 1 placeholder ($1, $2, …) but params has 2 values: pass one value per placeholder, in order",
  );
  assertEquals(
    refusal(() => checkParams([1], "select ?, ?", "mysql")),
    "the statement has 2 placeholders (?) but params has 1 value: pass one value per placeholder, in order",
  );
  assertEquals(
    refusal(() => checkParams([1], "select 1", "sqlite")),
    "the statement has 0 placeholders (?, ?NNN or :name) but params has 1 value: pass one value per placeholder, in order",
  );
});

Deno.test("checkParams: 1000 values pass, 1001 are refused with the limit named", () => {
  const sql = (n: number) =>
    `select ${Array.from({ length: n }, () => "?").join(", ")}`;
  const thousand = Array.from({ length: MAX_PARAMS }, (_, i) => i);
  assertEquals(MAX_PARAMS, 1000);
  assertEquals(checkParams(thousand, sql(1000), "mysql").length, 1000);
  assertEquals(
    refusal(() => checkParams([...thousand, 0], sql(1001), "mysql")),
    "params has 1001 values; the limit is 1000",
  );
});

Deno.test("checkParams: an integer past 2^53 is refused with its position, its value and the string to send", () => {
  const big = 2 ** 53; // not a safe integer
  assertEquals(
    refusal(() => checkParams([1, big], "select $1, $2", "postgres")),
    `params[1] is ${big}, an integer past 2^53, where a JSON number loses digits: pass it as a string ("9007199254740992" is what arrived)`,
  );
  // The largest safe integer, a fraction, and the same digits as a string pass.
  assertEquals(
    checkParams(
      [Number.MAX_SAFE_INTEGER, 0.5, "9007199254740993"],
      "select $1, $2, $3",
      "postgres",
    ),
    [Number.MAX_SAFE_INTEGER, 0.5, "9007199254740993"],
  );
  // Negative too.
  refusal(() => checkParams([-big], "select $1", "postgres"));
});

Deno.test("checkParams: a value declared approximate (a float) may be large; only at its own position", () => {
  assertEquals(
    checkParams([1e20], "select $1", "postgres", [true]),
    [1e20],
  );
  // approximate[0] says nothing of the value at position 1.
  refusal(() => checkParams([1, 1e20], "select $1, $2", "postgres", [true]));
  refusal(() => checkParams([1e20], "select $1", "postgres", [false]));
});

Deno.test("withValues: the statement as written without values; with them, a comment line listing them in order", () => {
  assertEquals(withValues("select 1", []), "select 1");
  assertEquals(
    withValues("select $1, $2", [1, "x"]),
    'select $1, $2\n-- bound values, in order: [1,"x"]',
  );
});
