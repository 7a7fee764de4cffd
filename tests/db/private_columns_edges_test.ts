/**
 * The private-column grammar's edges (lib/db/private_columns.ts): the
 * 200-entry limit, what a list must hold, every engine schema never
 * matched, wildcards and escaped characters, and the label of a column.
 */

import { assertEquals, assertThrows } from "@std/assert";
import {
  checkPrivateColumns,
  columnLabel,
  MAX_PRIVATE_ENTRIES,
  parsePrivateList,
  privateMatch,
  privatePatterns,
} from "../../lib/db/private_columns.ts";

const entries = (n: number) =>
  Array.from({ length: n }, (_, i) => `t${i}.secret`);

Deno.test("checkPrivateColumns: 200 entries pass, 201 are refused with both counts", () => {
  assertEquals(MAX_PRIVATE_ENTRIES, 200);
  assertEquals(checkPrivateColumns(entries(200)), null);
  assertEquals(
    checkPrivateColumns(entries(201)),
    "holds 201 entries; at most 200",
  );
  assertThrows(() => parsePrivateList(entries(201).join(",")), Error, "201");
});

Deno.test("checkPrivateColumns: not a list, a non-string entry, a bad entry and a repeat are refused; an empty list passes", () => {
  assertEquals(
    checkPrivateColumns("*.email"),
    'must be a list of "schema.table.column" entries or patterns',
  );
  assertEquals(checkPrivateColumns(["*.email", 3]), "must hold strings only");
  assertEquals(checkPrivateColumns([]), null);
  assertEquals(
    checkPrivateColumns(["a.b", "A.B"]),
    'lists "A.B" twice',
  );
  assertEquals(checkPrivateColumns(["a.b", "a.c"]), null);
});

Deno.test("privateMatch: no entry of the engines' own schemas or sqlite_/pragma_ tables is ever matched, whatever the case", () => {
  const patterns = privatePatterns(["*.*.email"]);
  for (
    const schema of [
      "pg_catalog",
      "information_schema",
      "mysql",
      "performance_schema",
      "sys",
      "PG_TOAST",
      "pg_temp_3",
      "Information_Schema",
    ]
  ) {
    assertEquals(privateMatch(patterns, schema, "t", "email"), null, schema);
  }
  assertEquals(privateMatch(patterns, "main", "SQLITE_master", "email"), null);
  assertEquals(
    privateMatch(patterns, "main", "pragma_table_info", "email"),
    null,
  );
  // A schema or table that merely holds those words is a user's own.
  for (
    const [schema, table] of [["mypg_x", "t"], ["sysx", "t"], [
      "main",
      "my_sqlite_t",
    ], ["main", "pragmatic"]]
  ) {
    assertEquals(
      privateMatch(patterns, schema!, table!, "email")?.text,
      "*.*.email",
      `${schema}.${table}`,
    );
  }
  assertEquals(privateMatch([], "public", "t", "email"), null);
});

Deno.test("privateMatch: a three-part entry needs its schema; every part must match, the first matching entry is named", () => {
  const patterns = privatePatterns(["hr.staff.salary", "*.staff.sal*"]);
  assertEquals(
    privateMatch(patterns, "HR", "Staff", "SALARY")?.text,
    "hr.staff.salary",
  );
  assertEquals(
    privateMatch(patterns, "shop", "staff", "salary")?.text,
    "*.staff.sal*",
  );
  assertEquals(privateMatch(patterns, "hr", "staffs", "salary"), null);
  assertEquals(privateMatch(patterns, "hr", "staff", "wage"), null);
  assertEquals(privatePatterns(undefined), []);
  const [parsed] = privatePatterns(["s.t.c", "t.c"]);
  assertEquals(parsed!.text, "s.t.c");
  assertEquals(privatePatterns(["t.c"])[0]!.schema, null);
});

Deno.test("privateMatch: `*` matches any run (none included); . ? + ( [ { $ ^ | \\ are themselves", () => {
  const one = (entry: string, column: string) =>
    privateMatch(privatePatterns([entry]), "s", "t", column) !== null;
  assertEquals(one("t.a*b", "ab"), true);
  assertEquals(one("t.a*b", "axxb"), true);
  assertEquals(one("t.a*b", "abx"), false);
  assertEquals(one("t.a*b", "xab"), false);
  for (
    const special of [
      "?",
      "+",
      "(",
      ")",
      "[",
      "]",
      "{",
      "}",
      "$",
      "^",
      "|",
      "\\",
    ]
  ) {
    assertEquals(one(`t.a${special}b`, `a${special}b`), true, special);
    assertEquals(one(`t.a${special}b`, "ab"), false, special);
    assertEquals(one(`t.a${special}b`, "aab"), false, special);
  }
});

Deno.test("columnLabel: table.column in the usual schema, schema.table.column elsewhere", () => {
  assertEquals(columnLabel("public", "t", "c", "public"), "t.c");
  assertEquals(columnLabel("hr", "t", "c", "public"), "hr.t.c");
  assertEquals(columnLabel("main", "t", "c", null), "main.t.c");
});
