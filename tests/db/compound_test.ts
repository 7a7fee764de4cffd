/**
 * CREATE PROCEDURE|FUNCTION|TRIGGER|EVENT … BEGIN … END is one statement
 * (MySQL/MariaDB; SQLite CREATE TRIGGER; PostgreSQL CREATE FUNCTION|PROCEDURE
 * … BEGIN ATOMIC … END), and fails closed: anything after
 * its END but `;` and a label is another statement.
 */

import { assert, assertEquals } from "@std/assert";
import { classify } from "../../lib/db/sql/classifier.ts";
import type { Dialect } from "../../lib/db/sql/lexer.ts";
import { splitStatements } from "../../lib/db/sql/lexer.ts";

function count(sql: string, dialect: Dialect): number {
  return splitStatements(sql, dialect).length;
}

Deno.test("compound bodies: one statement, a write (MariaDB procedures, functions, triggers, events; SQLite triggers; PostgreSQL BEGIN ATOMIC bodies)", () => {
  const one: [string, Dialect][] = [
    ["CREATE PROCEDURE p() BEGIN SELECT 1; SELECT 2; END", "mysql"],
    ["CREATE PROCEDURE p() BEGIN SELECT 1; SELECT 2; END;", "mysql"],
    ["create or replace procedure p() begin select 1; end", "mysql"],
    [
      "CREATE DEFINER=`root`@`localhost` PROCEDURE p(IN begin INT) lbl: BEGIN IF begin > 1 THEN BEGIN SELECT CASE WHEN 1 THEN 2 END; END; END IF; WHILE 0 DO SELECT 1; END WHILE; REPEAT SET @x = 1; UNTIL 1 END REPEAT; END lbl",
      "mysql",
    ],
    [
      "CREATE DEFINER = CURRENT_USER FUNCTION f() RETURNS INT DETERMINISTIC BEGIN DECLARE x INT; SET x = 1; RETURN x; END",
      "mysql",
    ],
    [
      "CREATE AGGREGATE FUNCTION agg(x INT) RETURNS INT BEGIN DECLARE s INT DEFAULT 0; DECLARE CONTINUE HANDLER FOR NOT FOUND RETURN s; LOOP FETCH GROUP NEXT ROW; SET s = s + x; END LOOP; END",
      "mysql",
    ],
    [
      "CREATE TRIGGER begin BEFORE INSERT ON t FOR EACH ROW BEGIN SET NEW.a = 1; SET NEW.b = 2; END",
      "mysql",
    ],
    [
      "CREATE EVENT e ON SCHEDULE EVERY 1 DAY DO BEGIN DELETE FROM t; INSERT INTO t VALUES (1); END",
      "mysql",
    ],
    [
      "CREATE TRIGGER t AFTER INSERT ON a BEGIN INSERT INTO b VALUES (1); UPDATE c SET x = CASE WHEN 1 THEN 2 END; END",
      "sqlite",
    ],
    [
      "CREATE TEMP TRIGGER IF NOT EXISTS t BEFORE DELETE ON a FOR EACH ROW WHEN old.x > 0 BEGIN SELECT RAISE(ABORT, 'no; never'); END;",
      "sqlite",
    ],
  ];
  one.push(
    // PostgreSQL 14+: a SQL-standard body (psql reads it as one statement).
    [
      "CREATE FUNCTION f() RETURNS int LANGUAGE sql BEGIN ATOMIC SELECT 1; END",
      "postgres",
    ],
    [
      "create function s.one() returns int language sql begin atomic; select 1; end",
      "postgres",
    ],
    [
      'CREATE OR REPLACE PROCEDURE p(x int, "begin" int) LANGUAGE sql BEGIN ATOMIC INSERT INTO t VALUES (CASE WHEN x > 0 THEN 1 ELSE (CASE x WHEN 0 THEN 2 END) END); SELECT begin FROM t; END;',
      "postgres",
    ],
    [
      "CREATE FUNCTION f(a int DEFAULT 1) RETURNS TABLE (x int) LANGUAGE sql BEGIN ATOMIC SELECT ';'; SELECT $$;$$; END",
      "postgres",
    ],
  );
  for (const [sql, dialect] of one) {
    assertEquals(count(sql, dialect), 1, sql);
    const verdict = classify(sql, dialect);
    assert(verdict.ok, sql);
    assertEquals([verdict.tier, verdict.keyword], ["write", "CREATE"], sql);
  }
});

Deno.test("compound bodies: a second statement after END still counts, and an unclosed body splits as before", () => {
  const several: [string, Dialect, number][] = [
    ["CREATE PROCEDURE p() BEGIN SELECT 1; END; DROP TABLE x", "mysql", 2],
    ["CREATE PROCEDURE p() BEGIN SELECT 1; END; DROP TABLE x; END", "mysql", 3],
    ["CREATE PROCEDURE p() BEGIN SELECT 1; END lbl DROP TABLE x", "mysql", 2],
    ["CREATE PROCEDURE p() BEGIN SELECT 1; SELECT 2;", "mysql", 2],
    ["CREATE TABLE t (a INT); BEGIN; DELETE FROM t; END", "mysql", 4],
    ["CREATE TABLE event (a INT); BEGIN; DELETE FROM t; END", "mysql", 4],
    ["BEGIN; DELETE FROM t; END", "mysql", 3],
    ["CREATE VIEW v AS SELECT 1; BEGIN; SELECT 2; END", "sqlite", 4],
    [
      "CREATE TRIGGER t AFTER INSERT ON a BEGIN INSERT INTO b VALUES (1); END; DELETE FROM a",
      "sqlite",
      2,
    ],
    [
      "CREATE TRIGGER t AFTER INSERT ON a BEGIN INSERT INTO b VALUES (1); END x y; DELETE FROM a",
      "sqlite",
      3,
    ],
    // A column named "end" ends the body early: more statements, refused.
    [
      "CREATE TRIGGER t AFTER INSERT ON a BEGIN SELECT end FROM b; SELECT 2; END",
      "sqlite",
      3,
    ],
    // An unterminated string makes the text uncertain: no compound reading.
    ["CREATE PROCEDURE p() BEGIN SELECT 1; SELECT 'x; END", "mysql", 2],
    // PostgreSQL: only BEGIN ATOMIC opens a body; after its END, only `;`.
    [
      "CREATE FUNCTION f() RETURNS int BEGIN ATOMIC SELECT 1; END; SELECT 2",
      "postgres",
      2,
    ],
    [
      "CREATE FUNCTION f() RETURNS int BEGIN ATOMIC SELECT 1; END x; SELECT 2",
      "postgres",
      3,
    ],
    [
      "CREATE FUNCTION f() RETURNS int BEGIN ATOMIC SELECT 1; SELECT 2;",
      "postgres",
      2,
    ],
    ["CREATE FUNCTION f() RETURNS int BEGIN SELECT 1; END", "postgres", 2],
    ["CREATE TABLE t (a int); BEGIN ATOMIC; SELECT 1; END", "postgres", 4],
    ["BEGIN; SELECT 1; END", "postgres", 3],
    // A `;` before the body: no body.
    [
      "CREATE FUNCTION f() RETURNS int; BEGIN ATOMIC SELECT 1; END",
      "postgres",
      3,
    ],
  ];
  for (const [sql, dialect, n] of several) {
    assertEquals(count(sql, dialect), n, sql);
  }
  const refused = classify(
    "CREATE PROCEDURE p() BEGIN SELECT 1; END; DROP TABLE x",
    "mysql",
  );
  assertEquals(refused.ok, false);
});

Deno.test("compound bodies: what reaches outside inside a body is still seen", () => {
  const atomic = classify(
    "CREATE FUNCTION f() RETURNS text LANGUAGE sql BEGIN ATOMIC SELECT 1; SELECT pg_read_file('PG_VERSION'); END",
    "postgres",
  );
  assert(atomic.ok);
  assert(atomic.reach !== null, "pg_read_file() inside a BEGIN ATOMIC body");
  const reach = classify(
    "CREATE PROCEDURE p() BEGIN SELECT 1; SELECT * FROM t INTO OUTFILE '/tmp/x'; END",
    "mysql",
  );
  assert(reach.ok);
  assertEquals(reach.reach, "INTO OUTFILE writes a file");
  const load = classify(
    "CREATE TRIGGER t BEFORE INSERT ON a FOR EACH ROW BEGIN SET NEW.x = LOAD_FILE('/etc/passwd'); END",
    "mysql",
  );
  assert(load.ok);
  assert(load.reach !== null, "load_file() inside the body");
});
