import { assertEquals } from "@std/assert";
import { splitStatements, tokenize } from "../../lib/db/sql/lexer.ts";

Deno.test("splitStatements() never splits inside strings, identifiers, comments or dollar quotes", () => {
  const cases: [string, "postgres" | "mysql" | "sqlite", number][] = [
    ["select ';' as a; -- ; comment", "postgres", 1],
    ["select $$ a; b $$, $tag$ ; $tag$", "postgres", 1],
    ["select E'it\\'s; ok'", "postgres", 1],
    ["select 1 /* a /* nested; */ still; */", "postgres", 1],
    ['select "a;b" from t', "postgres", 1],
    ["select `a;b`, 'it\\'s;' # ;\n", "mysql", 1],
    ["select [a;b] from t", "sqlite", 1],
    ["select 1; select 2", "sqlite", 2],
    [";;select 1;;", "postgres", 1],
  ];
  for (const [sql, dialect, count] of cases) {
    assertEquals(splitStatements(sql, dialect).length, count, sql);
  }
});

Deno.test("tokenize() reads MySQL and MariaDB executable comments as code", () => {
  for (const sql of ["select 1 /*! , 2 */", "select 1 /*M! , 2 */"]) {
    const kinds = tokenize(sql, "mysql").map((token) => token.kind);
    assertEquals(kinds.at(-1), "exec_comment", sql);
  }
  // Elsewhere they are ordinary comments.
  assertEquals(tokenize("select 1 /*! , 2 */", "postgres").length, 2);
});
