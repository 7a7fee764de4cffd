import { assertEquals } from "@std/assert";
import { splitStatements } from "../../lib/db/lexer.ts";
import { checkRead } from "../../lib/db/read_gate.ts";

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

Deno.test("checkRead() lets one read through, without its trailing semicolon", () => {
  assertEquals(checkRead("  (select 1);  -- done", "postgres"), {
    ok: true,
    text: "(select 1)",
    keyword: "SELECT",
  });
  for (
    const sql of [
      "with x as (select 1) select * from x",
      "values (1)",
      "explain select 1",
      "show tables",
    ]
  ) assertEquals(checkRead(sql, "mysql").ok, true, sql);
  assertEquals(checkRead("pragma table_info(users)", "sqlite").ok, true);
});

Deno.test("checkRead() refuses several statements, an empty one, and non-reads", () => {
  const refuse = (
    sql: string,
    dialect: "postgres" | "mysql" | "sqlite",
    code: string,
  ) => {
    const result = checkRead(sql, dialect);
    assertEquals(result.ok ? "ok" : result.code, code, sql);
  };
  refuse("select 1; drop table t", "postgres", "invalid_argument");
  refuse("-- only a comment", "postgres", "invalid_argument");
  refuse("insert into t values (1)", "postgres", "denied");
  refuse("set session transaction read write", "mysql", "denied");
  refuse("pragma query_only = 0", "sqlite", "denied");
  refuse("pragma query_only(0)", "sqlite", "denied");
  refuse("attach database '/tmp/x' as x", "sqlite", "denied");
  refuse("select /*! 1; drop table t */", "mysql", "denied");
  refuse("select * from t into outfile '/tmp/x'", "mysql", "denied");
  refuse("select pg_read_file('/etc/passwd')", "postgres", "denied");
  refuse("select load_extension('x')", "sqlite", "denied");
});

Deno.test("checkRead() reads keywords in strings as data", () => {
  assertEquals(
    checkRead("select 'drop table t; insert' as text", "postgres").ok,
    true,
  );
  assertEquals(checkRead("select 'pg_read_file(1)'", "postgres").ok, true);
});
