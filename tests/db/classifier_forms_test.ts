/**
 * classify() statement by statement (issue 34): EXPLAIN and ANALYZE forms,
 * PRAGMA side effects, row locks, CTEs that change data, WHERE that belongs
 * to a subquery, and every reach (files, code, libraries, other hosts),
 * each pinned to its tier, dangerous flag, reach and keyword.
 */
import { assertEquals } from "@std/assert";
import { classify } from "../../lib/db/sql/classifier.ts";
import type { Dialect } from "../../lib/db/sql/lexer.ts";

type Verdict =
  | { tier: string; dangerous: boolean; reach: string | null; keyword: string }
  | { refused: string };

const CASES: [string, string, Dialect, Verdict][] = [
  ["no statement: only a comment", "-- c", "sqlite", {
    "refused": "query holds no statement (only comments or semicolons)",
  }],
  ["no statement: only semicolons", " ; ; ", "postgres", {
    "refused": "query holds no statement (only comments or semicolons)",
  }],
  ["two statements", "SELECT 1; DELETE FROM t", "sqlite", {
    "refused": "query holds 2 statements; send one statement at a time",
  }],
  [
    "a parenthesized SELECT is a read with keyword SELECT",
    "((SELECT 1))",
    "postgres",
    { "tier": "read", "dangerous": false, "reach": null, "keyword": "SELECT" },
  ],
  [
    "a statement not starting with a word is a write with no keyword",
    "1",
    "sqlite",
    { "tier": "write", "dangerous": false, "reach": null, "keyword": "" },
  ],
  ["an uncertain SELECT (unclosed string) is a write", "SELECT 'a", "sqlite", {
    "tier": "write",
    "dangerous": false,
    "reach": null,
    "keyword": "SELECT",
  }],
  ["EXPLAIN SELECT reads", "EXPLAIN SELECT 1", "postgres", {
    "tier": "read",
    "dangerous": false,
    "reach": null,
    "keyword": "EXPLAIN",
  }],
  ["EXPLAIN DELETE (not run) reads", "EXPLAIN DELETE FROM t", "postgres", {
    "tier": "read",
    "dangerous": false,
    "reach": null,
    "keyword": "EXPLAIN",
  }],
  [
    "EXPLAIN ANALYZE DELETE runs it: write, dangerous",
    "EXPLAIN ANALYZE DELETE FROM t",
    "postgres",
    { "tier": "write", "dangerous": true, "reach": null, "keyword": "EXPLAIN" },
  ],
  [
    "EXPLAIN ANALYSE VERBOSE UPDATE runs it",
    "EXPLAIN ANALYSE VERBOSE UPDATE t SET a = 1 WHERE b = 2",
    "postgres",
    {
      "tier": "write",
      "dangerous": false,
      "reach": null,
      "keyword": "EXPLAIN",
    },
  ],
  [
    "EXPLAIN (ANALYZE) DELETE runs it",
    "EXPLAIN (ANALYZE) DELETE FROM t WHERE a = 1",
    "postgres",
    {
      "tier": "write",
      "dangerous": false,
      "reach": null,
      "keyword": "EXPLAIN",
    },
  ],
  [
    "EXPLAIN (ANALYZE, BUFFERS) INSERT runs it",
    "EXPLAIN (ANALYZE, BUFFERS) INSERT INTO t VALUES (1)",
    "postgres",
    {
      "tier": "write",
      "dangerous": false,
      "reach": null,
      "keyword": "EXPLAIN",
    },
  ],
  [
    "EXPLAIN (ANALYZE false) DELETE does not run it",
    "EXPLAIN (ANALYZE false) DELETE FROM t",
    "postgres",
    { "tier": "read", "dangerous": false, "reach": null, "keyword": "EXPLAIN" },
  ],
  [
    "EXPLAIN (ANALYZE OFF) DELETE does not run it",
    "EXPLAIN (ANALYZE OFF) DELETE FROM t",
    "postgres",
    { "tier": "read", "dangerous": false, "reach": null, "keyword": "EXPLAIN" },
  ],
  [
    "EXPLAIN (ANALYZE 0) DELETE does not run it",
    "EXPLAIN (ANALYZE 0) DELETE FROM t",
    "postgres",
    { "tier": "read", "dangerous": false, "reach": null, "keyword": "EXPLAIN" },
  ],
  [
    "EXPLAIN (FORMAT JSON, ANALYZE) DELETE runs it",
    "EXPLAIN (FORMAT JSON, ANALYZE) DELETE FROM t WHERE a = 1",
    "postgres",
    {
      "tier": "write",
      "dangerous": false,
      "reach": null,
      "keyword": "EXPLAIN",
    },
  ],
  [
    "EXPLAIN (ANALYZE) DROP: DROP is no statement EXPLAIN takes, so a read the engine refuses",
    "EXPLAIN (ANALYZE) DROP TABLE t",
    "postgres",
    { "tier": "read", "dangerous": false, "reach": null, "keyword": "EXPLAIN" },
  ],
  [
    "MySQL EXPLAIN FORMAT=JSON DELETE does not run it",
    "EXPLAIN FORMAT=JSON DELETE FROM t",
    "mysql",
    { "tier": "read", "dangerous": false, "reach": null, "keyword": "EXPLAIN" },
  ],
  [
    "MySQL EXPLAIN ANALYZE FORMAT=TREE DELETE runs it",
    "EXPLAIN ANALYZE FORMAT=TREE DELETE FROM t",
    "mysql",
    { "tier": "write", "dangerous": true, "reach": null, "keyword": "EXPLAIN" },
  ],
  ["EXPLAIN a table reads", "EXPLAIN t", "mysql", {
    "tier": "read",
    "dangerous": false,
    "reach": null,
    "keyword": "EXPLAIN",
  }],
  ["MySQL DESCRIBE a table reads", "DESCRIBE t", "mysql", {
    "tier": "read",
    "dangerous": false,
    "reach": null,
    "keyword": "DESCRIBE",
  }],
  [
    "MySQL DESC DELETE explains without running",
    "DESC DELETE FROM t",
    "mysql",
    { "tier": "read", "dangerous": false, "reach": null, "keyword": "DESC" },
  ],
  [
    "PostgreSQL DESCRIBE is an unknown keyword: a write",
    "DESCRIBE t",
    "postgres",
    {
      "tier": "write",
      "dangerous": false,
      "reach": null,
      "keyword": "DESCRIBE",
    },
  ],
  ["ANALYZE a table rewrites statistics: write", "ANALYZE t", "postgres", {
    "tier": "write",
    "dangerous": false,
    "reach": null,
    "keyword": "ANALYZE",
  }],
  [
    "MariaDB ANALYZE SELECT runs the SELECT: read",
    "ANALYZE SELECT 1",
    "mysql",
    { "tier": "read", "dangerous": false, "reach": null, "keyword": "ANALYZE" },
  ],
  [
    "MariaDB ANALYZE (DELETE ...) runs the DELETE: write, dangerous",
    "ANALYZE (DELETE FROM t)",
    "mysql",
    { "tier": "write", "dangerous": true, "reach": null, "keyword": "ANALYZE" },
  ],
  ["MariaDB ANALYZE TABLE is a write", "ANALYZE TABLE t", "mysql", {
    "tier": "write",
    "dangerous": false,
    "reach": null,
    "keyword": "ANALYZE",
  }],
  [
    "PostgreSQL ANALYSE SELECT is a write (ANALYZE never runs a statement there)",
    "ANALYSE SELECT 1",
    "postgres",
    {
      "tier": "write",
      "dangerous": false,
      "reach": null,
      "keyword": "ANALYSE",
    },
  ],
  ["DROP is destructive", "DROP TABLE t", "sqlite", {
    "tier": "destructive",
    "dangerous": true,
    "reach": null,
    "keyword": "DROP",
  }],
  ["TRUNCATE is destructive", "TRUNCATE t", "postgres", {
    "tier": "destructive",
    "dangerous": true,
    "reach": null,
    "keyword": "TRUNCATE",
  }],
  ["ALTER ... DROP is destructive", "ALTER TABLE t DROP COLUMN a", "postgres", {
    "tier": "destructive",
    "dangerous": true,
    "reach": null,
    "keyword": "ALTER",
  }],
  ["ALTER ... ADD is a write", "ALTER TABLE t ADD COLUMN a int", "postgres", {
    "tier": "write",
    "dangerous": false,
    "reach": null,
    "keyword": "ALTER",
  }],
  ["DELETE without WHERE is dangerous", "DELETE FROM t", "sqlite", {
    "tier": "write",
    "dangerous": true,
    "reach": null,
    "keyword": "DELETE",
  }],
  [
    "DELETE with WHERE is not dangerous",
    "DELETE FROM t WHERE a = 1",
    "sqlite",
    { "tier": "write", "dangerous": false, "reach": null, "keyword": "DELETE" },
  ],
  [
    "UPDATE whose only WHERE is in a subquery is dangerous",
    "UPDATE t SET a = (SELECT b FROM u WHERE c = 1)",
    "postgres",
    { "tier": "write", "dangerous": true, "reach": null, "keyword": "UPDATE" },
  ],
  [
    "UPDATE with a subquery and its own WHERE is not dangerous",
    "UPDATE t SET a = (SELECT 1) WHERE b = 2",
    "postgres",
    { "tier": "write", "dangerous": false, "reach": null, "keyword": "UPDATE" },
  ],
  [
    "DELETE ... WHERE with DROP only inside strings is a write, not destructive",
    "DELETE FROM t WHERE x IN (SELECT 1) AND 'DROP' = 'DROP'",
    "postgres",
    { "tier": "write", "dangerous": false, "reach": null, "keyword": "DELETE" },
  ],
  ["SHOW reads", "SHOW TABLES", "mysql", {
    "tier": "read",
    "dangerous": false,
    "reach": null,
    "keyword": "SHOW",
  }],
  ["HELP reads", "HELP 'select'", "mysql", {
    "tier": "read",
    "dangerous": false,
    "reach": null,
    "keyword": "HELP",
  }],
  ["INSERT is a write", "INSERT INTO t VALUES (1)", "sqlite", {
    "tier": "write",
    "dangerous": false,
    "reach": null,
    "keyword": "INSERT",
  }],
  [
    "INSERT ... SELECT with a nested DELETE without WHERE is dangerous",
    "INSERT INTO t WITH d AS (DELETE FROM u RETURNING *) SELECT * FROM d",
    "postgres",
    { "tier": "write", "dangerous": true, "reach": null, "keyword": "INSERT" },
  ],
  [
    "SELECT ... FOR UPDATE locks rows: write",
    "SELECT * FROM t FOR UPDATE",
    "postgres",
    { "tier": "write", "dangerous": false, "reach": null, "keyword": "SELECT" },
  ],
  [
    "SELECT ... FOR SHARE locks rows: write",
    "SELECT * FROM t FOR SHARE",
    "postgres",
    { "tier": "write", "dangerous": false, "reach": null, "keyword": "SELECT" },
  ],
  [
    "SELECT ... FOR NO KEY UPDATE: write",
    "SELECT * FROM t FOR NO KEY UPDATE",
    "postgres",
    { "tier": "write", "dangerous": false, "reach": null, "keyword": "SELECT" },
  ],
  [
    "SELECT ... FOR KEY SHARE: write",
    "SELECT * FROM t FOR KEY SHARE",
    "postgres",
    { "tier": "write", "dangerous": false, "reach": null, "keyword": "SELECT" },
  ],
  [
    "MySQL LOCK IN SHARE MODE: write",
    "SELECT * FROM t LOCK IN SHARE MODE",
    "mysql",
    { "tier": "write", "dangerous": false, "reach": null, "keyword": "SELECT" },
  ],
  ["SELECT INTO a new table: write", "SELECT * INTO copy FROM t", "postgres", {
    "tier": "write",
    "dangerous": false,
    "reach": null,
    "keyword": "SELECT",
  }],
  ["MySQL SELECT INTO @variable: read", "SELECT a INTO @v FROM t", "mysql", {
    "tier": "read",
    "dangerous": false,
    "reach": null,
    "keyword": "SELECT",
  }],
  ["SELECT nextval(): write", "SELECT nextval('s')", "postgres", {
    "tier": "write",
    "dangerous": false,
    "reach": null,
    "keyword": "SELECT",
  }],
  ['SELECT "nextval"() quoted: write', "SELECT \"nextval\"('s')", "postgres", {
    "tier": "write",
    "dangerous": false,
    "reach": null,
    "keyword": "SELECT",
  }],
  [
    "SELECT 'nextval'(...) a string is no call: read",
    "SELECT 'nextval' ('s')",
    "postgres",
    { "tier": "read", "dangerous": false, "reach": null, "keyword": "SELECT" },
  ],
  [
    "WITH ... DELETE without WHERE: write, dangerous",
    "WITH d AS (DELETE FROM t RETURNING *) SELECT * FROM d",
    "postgres",
    { "tier": "write", "dangerous": true, "reach": null, "keyword": "WITH" },
  ],
  [
    "WITH ... DELETE with WHERE: write, not dangerous",
    "WITH d AS (DELETE FROM t WHERE a = 1 RETURNING *) SELECT * FROM d",
    "postgres",
    { "tier": "write", "dangerous": false, "reach": null, "keyword": "WITH" },
  ],
  [
    "WITH ... UPDATE whose WHERE lies outside its CTE part: dangerous",
    "WITH d AS (UPDATE t SET a = 1 RETURNING *) SELECT * FROM d WHERE a = 1",
    "postgres",
    { "tier": "write", "dangerous": true, "reach": null, "keyword": "WITH" },
  ],
  [
    "SELECT replace(...) is a function, not REPLACE: read",
    "SELECT replace(a, 'b', 'c') FROM t",
    "mysql",
    { "tier": "read", "dangerous": false, "reach": null, "keyword": "SELECT" },
  ],
  ["SELECT t.update (a column): read", "SELECT t.update FROM t", "postgres", {
    "tier": "read",
    "dangerous": false,
    "reach": null,
    "keyword": "SELECT",
  }],
  [
    "SELECT ... DROP anywhere: destructive",
    "SELECT 1 FROM t WHERE drop = 1",
    "postgres",
    {
      "tier": "destructive",
      "dangerous": true,
      "reach": null,
      "keyword": "SELECT",
    },
  ],
  ["SQLite PRAGMA table_info(t) reads", "PRAGMA table_info(t)", "sqlite", {
    "tier": "read",
    "dangerous": false,
    "reach": null,
    "keyword": "PRAGMA",
  }],
  [
    "SQLite PRAGMA main.table_info(t) reads",
    "PRAGMA main.table_info(t)",
    "sqlite",
    { "tier": "read", "dangerous": false, "reach": null, "keyword": "PRAGMA" },
  ],
  ["SQLite PRAGMA user_version reads", "PRAGMA user_version", "sqlite", {
    "tier": "read",
    "dangerous": false,
    "reach": null,
    "keyword": "PRAGMA",
  }],
  [
    "SQLite PRAGMA main.journal_mode reads",
    "PRAGMA main.journal_mode",
    "sqlite",
    { "tier": "read", "dangerous": false, "reach": null, "keyword": "PRAGMA" },
  ],
  [
    "SQLite PRAGMA user_version = 5 writes",
    "PRAGMA user_version = 5",
    "sqlite",
    { "tier": "write", "dangerous": false, "reach": null, "keyword": "PRAGMA" },
  ],
  [
    "SQLite PRAGMA journal_mode(WAL) switches the journal: write",
    "PRAGMA journal_mode(WAL)",
    "sqlite",
    { "tier": "write", "dangerous": false, "reach": null, "keyword": "PRAGMA" },
  ],
  [
    "SQLite PRAGMA journal_mode = WAL writes",
    "PRAGMA journal_mode = WAL",
    "sqlite",
    { "tier": "write", "dangerous": false, "reach": null, "keyword": "PRAGMA" },
  ],
  [
    "SQLite PRAGMA foreign_keys = OFF writes",
    "PRAGMA foreign_keys = OFF",
    "sqlite",
    { "tier": "write", "dangerous": false, "reach": null, "keyword": "PRAGMA" },
  ],
  [
    "SQLite PRAGMA writable_schema writes (not a read pragma)",
    "PRAGMA writable_schema",
    "sqlite",
    { "tier": "write", "dangerous": false, "reach": null, "keyword": "PRAGMA" },
  ],
  [
    "SQLite PRAGMA integrity_check(10) reads",
    "PRAGMA integrity_check(10)",
    "sqlite",
    { "tier": "read", "dangerous": false, "reach": null, "keyword": "PRAGMA" },
  ],
  [
    "SQLite PRAGMA table_info(t without ) writes",
    "PRAGMA table_info(t",
    "sqlite",
    { "tier": "write", "dangerous": false, "reach": null, "keyword": "PRAGMA" },
  ],
  [
    "SQLite PRAGMA table_info(t) = 1 writes",
    "PRAGMA table_info(t) = 1",
    "sqlite",
    { "tier": "write", "dangerous": false, "reach": null, "keyword": "PRAGMA" },
  ],
  [
    'SQLite PRAGMA "table_info"(t) quoted name writes',
    'PRAGMA "table_info"(t)',
    "sqlite",
    { "tier": "write", "dangerous": false, "reach": null, "keyword": "PRAGMA" },
  ],
  ["SQLite PRAGMA alone writes", "PRAGMA", "sqlite", {
    "tier": "write",
    "dangerous": false,
    "reach": null,
    "keyword": "PRAGMA",
  }],
  ["SQLite PRAGMA table_info x y: writes", "PRAGMA table_info x", "sqlite", {
    "tier": "write",
    "dangerous": false,
    "reach": null,
    "keyword": "PRAGMA",
  }],
  ["PostgreSQL PRAGMA is a write", "PRAGMA user_version", "postgres", {
    "tier": "write",
    "dangerous": false,
    "reach": null,
    "keyword": "PRAGMA",
  }],
  ["MySQL executable comment reaches", "SELECT /*! 1 */", "mysql", {
    "tier": "read",
    "dangerous": false,
    "reach": "a MySQL executable comment /*! ... */ runs as code",
    "keyword": "SELECT",
  }],
  ["COPY reaches", "COPY t TO '/tmp/x'", "postgres", {
    "tier": "write",
    "dangerous": false,
    "reach": "COPY reads or writes files, programs or the client's stream",
    "keyword": "COPY",
  }],
  [
    "(LOAD ...) reaches",
    "(LOAD DATA INFILE '/etc/passwd' INTO TABLE t)",
    "mysql",
    {
      "tier": "write",
      "dangerous": false,
      "reach": "LOAD reads a file or a library",
      "keyword": "LOAD",
    },
  ],
  ["PostgreSQL DO reaches", "DO $$ BEGIN END $$", "postgres", {
    "tier": "write",
    "dangerous": false,
    "reach": "DO runs a block of procedural code",
    "keyword": "DO",
  }],
  ["SQLite DO is no code block", "DO 1", "sqlite", {
    "tier": "write",
    "dangerous": false,
    "reach": null,
    "keyword": "DO",
  }],
  ["VACUUM INTO writes a file", "VACUUM INTO '/tmp/x.db'", "sqlite", {
    "tier": "write",
    "dangerous": false,
    "reach": "VACUUM INTO writes a database file",
    "keyword": "VACUUM",
  }],
  ["VACUUM alone reaches nothing", "VACUUM", "sqlite", {
    "tier": "write",
    "dangerous": false,
    "reach": null,
    "keyword": "VACUUM",
  }],
  [
    "ALTER SYSTEM writes the configuration",
    "ALTER SYSTEM SET work_mem = '1MB'",
    "postgres",
    {
      "tier": "write",
      "dangerous": false,
      "reach": "ALTER SYSTEM writes the server's configuration file",
      "keyword": "ALTER",
    },
  ],
  [
    "CREATE OR REPLACE TRUSTED PROCEDURAL LANGUAGE installs code",
    "CREATE OR REPLACE TRUSTED PROCEDURAL LANGUAGE plx",
    "postgres",
    {
      "tier": "write",
      "dangerous": false,
      "reach": "CREATE LANGUAGE installs code",
      "keyword": "CREATE",
    },
  ],
  ["CREATE EXTENSION installs code", "CREATE EXTENSION dblink", "postgres", {
    "tier": "write",
    "dangerous": false,
    "reach": "CREATE EXTENSION installs code",
    "keyword": "CREATE",
  }],
  [
    "CREATE SERVER reaches other hosts",
    "CREATE SERVER s FOREIGN DATA WRAPPER w",
    "postgres",
    {
      "tier": "write",
      "dangerous": false,
      "reach": "a foreign server or table reaches files or other hosts",
      "keyword": "CREATE",
    },
  ],
  [
    "CREATE FOREIGN TABLE reaches other hosts",
    "CREATE FOREIGN TABLE f (a int) SERVER s",
    "postgres",
    {
      "tier": "write",
      "dangerous": false,
      "reach": "a foreign server or table reaches files or other hosts",
      "keyword": "CREATE",
    },
  ],
  [
    "CREATE UNLOGGED TEMP TABLE reaches nothing",
    "CREATE UNLOGGED TEMP TABLE t (a int)",
    "postgres",
    { "tier": "write", "dangerous": false, "reach": null, "keyword": "CREATE" },
  ],
  [
    "CREATE TEMPORARY TABLE reaches nothing",
    "CREATE TEMPORARY TABLE t (a int)",
    "postgres",
    { "tier": "write", "dangerous": false, "reach": null, "keyword": "CREATE" },
  ],
  ["pg_read_file() reaches", "SELECT pg_read_file('/etc/passwd')", "postgres", {
    "tier": "read",
    "dangerous": false,
    "reach": "pg_read_file() reaches files, code or SQL text",
    "keyword": "SELECT",
  }],
  [
    '"pg_read_file"() quoted reaches',
    "SELECT \"PG_READ_FILE\"('/etc/passwd')",
    "postgres",
    {
      "tier": "read",
      "dangerous": false,
      "reach": "pg_read_file() reaches files, code or SQL text",
      "keyword": "SELECT",
    },
  ],
  [
    "SQLite [load_extension]() bracket-quoted reaches",
    "SELECT [load_extension]('/tmp/x.so')",
    "sqlite",
    {
      "tier": "read",
      "dangerous": false,
      "reach": "load_extension() reaches files, code or SQL text",
      "keyword": "SELECT",
    },
  ],
  ["MySQL `get_lock`() is denied", "SELECT `get_lock`('x', 1)", "mysql", {
    "tier": "read",
    "dangerous": false,
    "reach": "get_lock() takes a lock that outlives the request",
    "keyword": "SELECT",
  }],
  ["benchmark() is denied", "SELECT benchmark(1000000, md5('x'))", "mysql", {
    "tier": "read",
    "dangerous": false,
    "reach": "benchmark() burns CPU on the database server",
    "keyword": "SELECT",
  }],
  [
    "pg_hba_file_rules shows the server's files",
    "SELECT * FROM pg_hba_file_rules",
    "postgres",
    {
      "tier": "read",
      "dangerous": false,
      "reach": "pg_hba_file_rules shows the server's files or configuration",
      "keyword": "SELECT",
    },
  ],
  [
    '"pg_config" quoted shows the server\'s files',
    'SELECT * FROM "pg_config"',
    "postgres",
    {
      "tier": "read",
      "dangerous": false,
      "reach": "pg_config shows the server's files or configuration",
      "keyword": "SELECT",
    },
  ],
  ["pg_config on MySQL is a plain name", "SELECT * FROM pg_config", "mysql", {
    "tier": "read",
    "dangerous": false,
    "reach": null,
    "keyword": "SELECT",
  }],
  ["INTO OUTFILE writes a file", "SELECT 1 INTO OUTFILE '/tmp/x'", "mysql", {
    "tier": "write",
    "dangerous": false,
    "reach": "INTO OUTFILE writes a file",
    "keyword": "SELECT",
  }],
  ["INTO DUMPFILE writes a file", "SELECT 1 INTO DUMPFILE '/tmp/x'", "mysql", {
    "tier": "write",
    "dangerous": false,
    "reach": "INTO DUMPFILE writes a file",
    "keyword": "SELECT",
  }],
  ["OUTFILE not after INTO is a name", "SELECT outfile FROM t", "mysql", {
    "tier": "read",
    "dangerous": false,
    "reach": null,
    "keyword": "SELECT",
  }],
  [
    "SONAME loads a library",
    "CREATE FUNCTION f RETURNS INTEGER SONAME 'x.so'",
    "mysql",
    {
      "tier": "write",
      "dangerous": false,
      "reach": "SONAME loads a shared library",
      "keyword": "CREATE",
    },
  ],
  [
    "shared_preload_libraries loads libraries",
    "SET shared_preload_libraries = 'x'",
    "postgres",
    {
      "tier": "write",
      "dangerous": false,
      "reach": "shared_preload_libraries loads libraries",
      "keyword": "SET",
    },
  ],
  [
    "UESCAPE hides names",
    "SELECT U&\"d!0061t!+000061\" UESCAPE '!' FROM t",
    "postgres",
    {
      "tier": "read",
      "dangerous": false,
      "reach": "UESCAPE hides names behind escapes",
      "keyword": "SELECT",
    },
  ],
  [
    "LANGUAGE plpython3u runs outside",
    "CREATE FUNCTION f() RETURNS int LANGUAGE plpython3u AS $$ return 1 $$",
    "postgres",
    {
      "tier": "write",
      "dangerous": false,
      "reach": "LANGUAGE plpython3u runs outside the database",
      "keyword": "CREATE",
    },
  ],
  [
    "LANGUAGE 'c' quoted runs outside",
    "CREATE FUNCTION f() RETURNS int LANGUAGE 'c' AS 'x'",
    "postgres",
    {
      "tier": "write",
      "dangerous": false,
      "reach": "LANGUAGE c runs outside the database",
      "keyword": "CREATE",
    },
  ],
  [
    "LANGUAGE sql reaches nothing",
    "CREATE FUNCTION f() RETURNS int LANGUAGE sql AS 'select 1'",
    "postgres",
    { "tier": "write", "dangerous": false, "reach": null, "keyword": "CREATE" },
  ],
  [
    'U&"name"( a Unicode-escaped function',
    "SELECT U&\"pg_read_file\"('/x')",
    "postgres",
    {
      "tier": "read",
      "dangerous": false,
      "reach": "a function named with Unicode escapes",
      "keyword": "SELECT",
    },
  ],
  [
    "a column named u is no Unicode escape",
    "SELECT u FROM t",
    "postgres",
    { tier: "read", dangerous: false, reach: null, keyword: "SELECT" },
  ],
  [
    'u & "name" without a call is no Unicode-escaped function',
    'SELECT u & "x" FROM t',
    "postgres",
    { tier: "read", dangerous: false, reach: null, keyword: "SELECT" },
  ],
];

for (const [spec, sql, dialect, expected] of CASES) {
  Deno.test(`classify(${JSON.stringify(sql)}, ${dialect}): ${spec}`, () => {
    const r = classify(sql, dialect);
    assertEquals(
      r.ok
        ? {
          tier: r.tier,
          dangerous: r.dangerous,
          reach: r.reach,
          keyword: r.keyword,
        }
        : { refused: r.message },
      expected,
    );
  });
}

Deno.test("classify() keeps the statement's text without its trailing ; and comment", () => {
  const r = classify("  SELECT 1 ; -- done", "sqlite");
  assertEquals(r.ok && r.text, "SELECT 1");
  assertEquals(r.ok && r.uncertain, []);
});
