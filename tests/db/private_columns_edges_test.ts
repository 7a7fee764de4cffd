/**
 * The private-column grammar's edges (lib/db/private_columns.ts): the
 * 200-entry limit, what a list must hold, every engine schema never
 * matched, wildcards and escaped characters, and the label of a column.
 */

import type { Engine } from "../../lib/db/engines.ts";
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

Deno.test("privateMatch: no entry of an engine's own schemas or tables is ever matched, whatever the case; the same names elsewhere are the user's", () => {
  const patterns = privatePatterns(["*.*.email"]);
  const own: [Engine, string, string][] = [
    ["postgres", "pg_catalog", "t"],
    ["postgres", "information_schema", "t"],
    ["postgres", "PG_TOAST", "t"],
    ["postgres", "pg_temp_3", "t"],
    ["postgres", "Information_Schema", "t"],
    ["mysql", "mysql", "t"],
    ["mysql", "performance_schema", "t"],
    ["mysql", "sys", "t"],
    ["mysql", "information_schema", "t"],
    ["sqlite", "main", "SQLITE_master"],
    ["sqlite", "main", "pragma_table_info"],
  ];
  for (const [engine, schema, table] of own) {
    assertEquals(
      privateMatch(patterns, schema, table, "email", engine),
      null,
      `${engine} ${schema}.${table}`,
    );
  }
  // A name that is one engine's own, or merely holds its words, is a
  // user's own elsewhere.
  const users: [Engine, string, string][] = [
    ["postgres", "mypg_x", "t"],
    ["postgres", "sys", "t"],
    ["postgres", "mysql", "t"],
    ["postgres", "shop", "sqlite_export"],
    ["mysql", "sysx", "t"],
    ["mysql", "pg_x", "t"],
    ["sqlite", "main", "my_sqlite_t"],
    ["sqlite", "main", "pragmatic"],
    ["sqlite", "main", "pragma_notes"],
  ];
  for (const [engine, schema, table] of users) {
    assertEquals(
      privateMatch(patterns, schema, table, "email", engine)?.text,
      "*.*.email",
      `${engine} ${schema}.${table}`,
    );
  }
  assertEquals(privateMatch([], "public", "t", "email", "postgres"), null);
});

Deno.test("privateMatch: a three-part entry needs its schema; every part must match, the first matching entry is named", () => {
  const patterns = privatePatterns(["hr.staff.salary", "*.staff.sal*"]);
  assertEquals(
    privateMatch(patterns, "HR", "Staff", "SALARY", "postgres")?.text,
    "hr.staff.salary",
  );
  assertEquals(
    privateMatch(patterns, "shop", "staff", "salary", "postgres")?.text,
    "*.staff.sal*",
  );
  assertEquals(
    privateMatch(patterns, "hr", "staffs", "salary", "postgres"),
    null,
  );
  assertEquals(privateMatch(patterns, "hr", "staff", "wage", "postgres"), null);
  assertEquals(privatePatterns(undefined), []);
  const [parsed] = privatePatterns(["s.t.c", "t.c"]);
  assertEquals(parsed!.text, "s.t.c");
  assertEquals(privatePatterns(["t.c"])[0]!.schema, null);
});

Deno.test("privateMatch: `*` matches any run (none included); . ? + ( [ { $ ^ | \\ are themselves", () => {
  const one = (entry: string, column: string) =>
    privateMatch(privatePatterns([entry]), "s", "t", column, "postgres") !==
      null;
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
