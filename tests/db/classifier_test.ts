import { assert, assertEquals } from "@std/assert";
import { classify } from "../../lib/db/sql/classifier.ts";
import { CORPUS, type Expect } from "./_classifier_corpus.ts";

function outcome(sql: string, dialect: Parameters<typeof classify>[1]) {
  const result = classify(sql, dialect);
  if (!result.ok) {
    return /one statement at a time/.test(result.message) ? "multi" : "empty";
  }
  if (result.reach !== null) return "reach";
  if (result.tier === "write" && result.dangerous) return "write!";
  return result.tier;
}

Deno.test("the classifier corpus holds at least 150 statements and 40 bypass attempts on every dialect", () => {
  assert(CORPUS.length >= 150, `only ${CORPUS.length} statements`);
  const bypasses = CORPUS.filter((c) => c.bypass);
  assert(bypasses.length >= 40, `only ${bypasses.length} bypass attempts`);
  for (const dialect of ["postgres", "mysql", "sqlite"] as const) {
    assert(CORPUS.filter((c) => c.dialect === dialect).length >= 30, dialect);
    assert(bypasses.some((c) => c.dialect === dialect), dialect);
  }
});

Deno.test("classify() gives every corpus statement its expected tier and flags", () => {
  const wrong: string[] = [];
  for (const { dialect, sql, expect } of CORPUS) {
    const got: Expect = outcome(sql, dialect);
    if (got !== expect) {
      wrong.push(
        `${dialect}: ${JSON.stringify(sql)} expected ${expect}, got ${got}`,
      );
    }
  }
  assertEquals(wrong, []);
});

Deno.test("classify() refuses more than one statement naming the rule", () => {
  const result = classify("SELECT 1; SELECT 2", "postgres");
  assertEquals(result.ok, false);
  if (!result.ok) {
    assertEquals(result.code, "invalid_argument");
    assertEquals(
      result.message,
      "query holds 2 statements; send one statement at a time",
    );
  }
});

Deno.test("classify() returns the statement without its trailing semicolon and comments", () => {
  const result = classify("  -- lead\n SELECT 1 ; -- trail\n", "postgres");
  assert(result.ok);
  assertEquals(result.text, "SELECT 1");
  assertEquals(result.keyword, "SELECT");
});

Deno.test("classify() marks destructive statements dangerous and names the reach", () => {
  const drop = classify("DROP TABLE books", "sqlite");
  assert(drop.ok);
  assertEquals([drop.tier, drop.dangerous, drop.reach], [
    "destructive",
    true,
    null,
  ]);
  const copy = classify("COPY books TO '/tmp/x'", "postgres");
  assert(copy.ok);
  assertEquals(
    copy.reach,
    "COPY reads or writes files, programs or the client's stream",
  );
});

Deno.test("classify(): U&'…' UESCAPE '!' is a string literal and reads; U&\"…\" UESCAPE still hides a name", () => {
  for (
    const sql of [
      "SELECT U&'d!0061t!+000061' UESCAPE '!'",
      "select u&'\\0061' uescape '\\'",
      "SELECT U&'x' UESCAPE '#' || 'y'",
    ]
  ) {
    const read = classify(sql, "postgres");
    assert(read.ok, sql);
    assertEquals([read.tier, read.reach], ["read", null], sql);
  }
  for (
    const sql of [
      "SELECT U&\"pg!005fsleep\" UESCAPE '!'(1)",
      "SELECT U&\"d!0061t\" UESCAPE '!'",
      "SELECT U & 'x' UESCAPE '!'",
      "SELECT U&'x' UESCAPE '!', U&\"x\" UESCAPE '!'",
    ]
  ) {
    const hidden = classify(sql, "postgres");
    assert(hidden.ok, sql);
    assertEquals(hidden.reach, "UESCAPE hides names behind escapes", sql);
  }
});

Deno.test("classify(): MariaDB `SELECT 1; # comment` is one statement", () => {
  for (
    const sql of [
      "SELECT 1; # comment",
      "SELECT 1;# comment; DROP TABLE t",
      "SELECT 1; # it's\n",
      "SELECT 1 # a; b\n;",
    ]
  ) {
    const one = classify(sql, "mysql");
    assert(one.ok, sql);
    assertEquals([one.tier, one.text], ["read", "SELECT 1"], sql);
  }
  assertEquals(classify("SELECT 1; # c\nDROP TABLE t", "mysql").ok, false);
});

Deno.test("classify(): code installed to run later and rows a table change rewrites ask with their own reason; a table named like a trigger does not", () => {
  const danger = (sql: string, dialect: "postgres" | "mysql" | "sqlite") => {
    const found = classify(sql, dialect);
    if (!found.ok) throw new Error(found.message);
    return [found.tier, found.dangerous, found.danger ?? null];
  };
  const trigger =
    "it installs a trigger, which runs on later writes to its table";
  assertEquals(
    danger(
      "create definer = root@localhost trigger x after delete on t for each row delete from u where true",
      "mysql",
    ),
    ["write", true, trigger],
  );
  assertEquals(
    danger(
      "create temp trigger x after update of v on s begin delete from s where id <> new.id; end",
      "sqlite",
    ),
    ["write", true, trigger],
  );
  assertEquals(
    danger(
      "create or replace rule r as on insert to a do also delete from b where true",
      "postgres",
    ),
    [
      "write",
      true,
      "it installs a rule, which rewrites later statements on its table",
    ],
  );
  const event = "it installs an event, which runs on a schedule";
  assertEquals(
    danger(
      "create event e on schedule every 1 day do delete from t where true",
      "mysql",
    ),
    ["write", true, event],
  );
  assertEquals(
    danger("alter event e do delete from t where true", "mysql"),
    ["write", true, event],
  );
  assertEquals(
    danger("alter ignore table t add unique (w)", "mysql"),
    [
      "write",
      true,
      "ALTER IGNORE TABLE deletes the rows a new unique key would refuse",
    ],
  );
  assertEquals(
    danger("alter table t alter column v type text using 'x'", "postgres"),
    ["write", true, "ALTER ... TYPE ... USING rewrites a column of every row"],
  );
  // A definer named like an object kind hides nothing (outsider stop 60).
  for (
    const sql of [
      "create definer = type@localhost trigger x after insert on t for each row set @a = 1",
      "create definer = `role`@`%` trigger x after insert on t for each row set @a = 1",
      "create definer = current_user() trigger x after insert on t for each row set @a = 1",
    ]
  ) assertEquals(danger(sql, "mysql"), ["write", true, trigger], sql);
  assertEquals(
    danger("alter definer = user@localhost event e enable", "mysql"),
    ["write", true, event],
  );
  assertEquals(
    danger(
      "create schema s create table x (id int) create trigger xt after insert on x for each row execute function f()",
      "postgres",
    ),
    ["write", true, trigger],
  );
  assertEquals(
    danger("alter table p exchange partition p0 with table e", "mysql"),
    [
      "write",
      true,
      "ALTER TABLE ... EXCHANGE PARTITION swaps every row of a partition and a table",
    ],
  );
  // MariaDB's ALTER TABLE … TRUNCATE PARTITION is destructive, as DROP is.
  assertEquals(
    danger("alter table p truncate partition all", "mysql"),
    ["destructive", true, null],
  );
  // Not dangerous: a table named for triggers, an index USING a method, a
  // CREATE FUNCTION (a type change without USING asks as a type change:
  // typechange_classifier_test.ts).
  for (
    const [sql, dialect] of [
      ["create table trigger_log (event text, rule text)", "postgres"],
      ["alter table t add index i (a) using btree", "mysql"],
      [
        "create function f() returns int language sql as $$ select 1 $$",
        "postgres",
      ],
    ] as const
  ) {
    assertEquals(danger(sql, dialect), ["write", false, null], sql);
  }
});

Deno.test("classify(): a nested write is dangerous only when it is a DELETE or UPDATE without WHERE; only FOR UPDATE|SHARE|NO KEY|KEY locks rows; ON DELETE SET NULL and SET DEFAULT are actions, not statements", () => {
  const verdict = (sql: string, dialect: "postgres" | "mysql") => {
    const found = classify(sql, dialect);
    if (!found.ok) throw new Error(found.message);
    return [found.tier, found.dangerous];
  };
  assertEquals(
    verdict(
      "WITH a AS (INSERT INTO t VALUES (1) RETURNING id) SELECT * FROM a",
      "postgres",
    ),
    ["write", false],
  );
  assertEquals(
    verdict(
      "WITH a AS (DELETE FROM t WHERE id = 1 RETURNING id) SELECT * FROM a",
      "postgres",
    ),
    ["write", false],
  );
  assertEquals(
    verdict(
      "WITH a AS (DELETE FROM t RETURNING id) SELECT * FROM a",
      "postgres",
    ),
    ["write", true],
  );
  // Only FOR UPDATE|SHARE|NO KEY|KEY SHARE locks rows: a column named key
  // or no is read.
  assertEquals(
    verdict("SELECT key, x AS no, y AS share FROM t", "postgres"),
    ["read", false],
  );
  assertEquals(verdict("SELECT * FROM t FOR NO KEY UPDATE", "postgres"), [
    "write",
    false,
  ]);
  for (const action of ["SET NULL", "SET DEFAULT", "CASCADE", "NO ACTION"]) {
    for (const dialect of ["postgres", "mysql"] as const) {
      assertEquals(
        verdict(
          `CREATE TABLE c (id int, pid int REFERENCES p (id) ON DELETE ${action} ON UPDATE ${action})`,
          dialect,
        ),
        ["write", false],
        `${action} (${dialect})`,
      );
    }
  }
});
