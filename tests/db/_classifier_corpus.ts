/**
 * The classifier corpus: statements per dialect with the tier and flags they
 * must get. `bypass` marks an attempt to get a write, a destructive statement
 * or file/code reach past the classifier (comment and string tricks, CTE
 * writes, EXPLAIN ANALYZE, executable comments, side-effect functions,
 * multi-statement smuggling, case and whitespace games).
 *
 * Expectations: `read`, `write`, `write!` (a write marked dangerous),
 * `destructive`, `reach` (refused whatever the tier), `multi` (more than one
 * statement), `empty` (no statement).
 */

import type { Dialect } from "../../lib/db/sql/lexer.ts";

export type Expect =
  | "read"
  | "write"
  | "write!"
  | "destructive"
  | "reach"
  | "multi"
  | "empty";

export interface Case {
  dialect: Dialect;
  sql: string;
  expect: Expect;
  bypass?: true;
}

const P: Dialect = "postgres";
const M: Dialect = "mysql";
const S: Dialect = "sqlite";

const plain: [Dialect, string, Expect][] = [
  // PostgreSQL: reads
  [P, "SELECT 1", "read"],
  [P, "select * from authors where id = 1", "read"],
  [P, "  \n\tSELECT name FROM authors ORDER BY name LIMIT 5;", "read"],
  [P, "((SELECT 1))", "read"],
  [P, "(SELECT 1) UNION ALL (SELECT 2)", "read"],
  [P, "VALUES (1, 'a'), (2, 'b')", "read"],
  [P, "TABLE authors", "read"],
  [P, "SHOW search_path", "read"],
  [P, "EXPLAIN SELECT * FROM books", "read"],
  [P, "EXPLAIN (FORMAT JSON) SELECT 1", "read"],
  [P, "EXPLAIN (ANALYZE) SELECT count(*) FROM books", "read"],
  [P, "EXPLAIN DELETE FROM books", "read"],
  [P, "EXPLAIN (ANALYZE false) DELETE FROM books", "read"],
  [P, "WITH t AS (SELECT 1 AS x) SELECT x FROM t", "read"],
  [
    P,
    "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 5) SELECT * FROM n",
    "read",
  ],
  [P, "SELECT 'drop table authors' AS note", "read"],
  [P, "SELECT $$DELETE FROM books$$", "read"],
  [P, "SELECT E'it\\'s; DROP TABLE x'", "read"],
  [P, 'SELECT "delete" FROM "drop"', "read"],
  [P, "SELECT replace(name, 'a', 'b') FROM authors", "read"],
  [P, "SELECT t.update FROM t", "read"],
  [P, "SELECT pg_sleep(0.1)", "read"],
  [P, "SELECT current_setting('search_path')", "read"],
  [P, "select 1 -- ; drop table x", "read"],
  [P, "select /* ; drop table x */ 1", "read"],
  [P, "SELECT 1;;", "read"],
  [P, "SELECT count(*) FROM pg_stat_activity", "read"],
  // PostgreSQL: writes
  [P, "INSERT INTO authors (name) VALUES ('Grace')", "write"],
  [P, "INSERT INTO authors (name) VALUES ('Grace') RETURNING id", "write"],
  [P, "INSERT INTO t VALUES (1) ON CONFLICT (id) DO UPDATE SET v = 2", "write"],
  [P, "UPDATE books SET price = 1 WHERE id = 2", "write"],
  [P, "UPDATE books SET price = 1", "write!"],
  [P, "DELETE FROM books WHERE id = 1", "write"],
  [P, "DELETE FROM books", "write!"],
  [P, "DELETE FROM books USING authors", "write!"],
  [
    P,
    "UPDATE books SET price = (SELECT max(price) FROM books b WHERE b.id = 1)",
    "write!",
  ],
  [
    P,
    "MERGE INTO books b USING authors a ON a.id = b.author_id WHEN MATCHED THEN UPDATE SET price = 1",
    "write",
  ],
  [P, "CREATE TABLE t (id int)", "write"],
  [P, "CREATE INDEX ON books (title)", "write"],
  [P, "CREATE VIEW v AS SELECT 1", "write"],
  [P, "ALTER TABLE books ADD COLUMN isbn text", "write"],
  [P, "ALTER TABLE books RENAME COLUMN drop_me TO kept", "write"],
  [P, "COMMENT ON TABLE books IS 'drop me later'", "write"],
  [P, "GRANT SELECT ON books TO PUBLIC", "write"],
  [P, "SET search_path = public", "write"],
  [P, "RESET ALL", "write"],
  [P, "BEGIN", "write"],
  [P, "COMMIT", "write"],
  [P, "VACUUM books", "write"],
  [P, "ANALYZE books", "write"],
  [P, "REFRESH MATERIALIZED VIEW mv", "write"],
  [P, "LOCK TABLE books", "write"],
  [P, "NOTIFY channel", "write"],
  [P, "CALL proc()", "write"],
  [
    P,
    "CREATE FUNCTION f() RETURNS int LANGUAGE sql AS $$ SELECT 1 $$",
    "write",
  ],
  [P, "SELECT * INTO new_table FROM books", "write"],
  [P, "SELECT * FROM books FOR UPDATE", "write"],
  [P, "SELECT * FROM books FOR NO KEY UPDATE", "write"],
  [P, "FROBNICATE everything", "write"],
  // PostgreSQL: destructive
  [P, "DROP TABLE books", "destructive"],
  [P, "drop table if exists books cascade", "destructive"],
  [P, "TRUNCATE books", "destructive"],
  [P, "ALTER TABLE books DROP COLUMN price", "destructive"],
  [P, "ALTER TABLE books DROP CONSTRAINT books_title_key", "destructive"],
  // PostgreSQL: file system and code
  [P, "COPY books TO '/tmp/books.csv'", "reach"],
  [P, "COPY books FROM '/etc/passwd'", "reach"],
  [P, "COPY (SELECT 1) TO PROGRAM 'id'", "reach"],
  [P, "COPY books TO STDOUT", "reach"],
  [P, "SELECT pg_read_file('/etc/passwd')", "reach"],
  [P, "SELECT lo_import('/etc/passwd')", "reach"],
  [P, "DO $$ BEGIN RAISE NOTICE 'x'; END $$", "reach"],
  [P, "LOAD 'plpgsql'", "reach"],
  [P, "CREATE EXTENSION dblink", "reach"],
  [P, "ALTER SYSTEM SET work_mem = '1GB'", "reach"],
  [
    P,
    "CREATE FOREIGN TABLE f (a text) SERVER files OPTIONS (filename '/etc/passwd')",
    "reach",
  ],
  [P, "SELECT * FROM dblink('host=x', 'select 1') AS t(a int)", "reach"],
  // PostgreSQL: statements and emptiness
  [P, "SELECT 1; SELECT 2", "multi"],
  [P, "", "empty"],
  [P, "  -- only a comment\n", "empty"],
  [P, ";;", "empty"],

  // MySQL / MariaDB: reads
  [M, "SELECT 1", "read"],
  [M, "SELECT * FROM authors WHERE name = 'it\\'s'", "read"],
  [M, "SELECT `delete` FROM `drop`", "read"],
  [M, 'SELECT "drop table x"', "read"],
  [M, "SHOW TABLES", "read"],
  [M, "SHOW CREATE TABLE books", "read"],
  [M, "DESCRIBE books", "read"],
  [M, "DESC books", "read"],
  [M, "EXPLAIN SELECT * FROM books", "read"],
  [M, "EXPLAIN FORMAT=JSON SELECT 1", "read"],
  [M, "EXPLAIN books", "read"],
  [M, "EXPLAIN DELETE FROM books", "read"],
  [M, "ANALYZE SELECT * FROM books", "read"],
  [M, "WITH t AS (SELECT 1 AS x) SELECT x FROM t", "read"],
  [M, "SELECT 1 INTO @x", "read"],
  [M, "SELECT SLEEP(0.1)", "read"],
  [M, "SELECT 1 # ; DROP TABLE x", "read"],
  [M, "SELECT 1 -- ; DROP TABLE x", "read"],
  [M, "VALUES ROW(1, 2)", "read"],
  [M, "SELECT REPLACE(name, 'a', 'b') FROM authors", "read"],
  // MySQL: writes
  [M, "INSERT INTO authors (name) VALUES ('Grace')", "write"],
  [M, "INSERT INTO t VALUES (1) ON DUPLICATE KEY UPDATE v = 2", "write"],
  [M, "REPLACE INTO authors (id, name) VALUES (1, 'x')", "write"],
  [M, "UPDATE books SET price = 1 WHERE id = 1", "write"],
  [M, "UPDATE books SET price = 1 LIMIT 1", "write!"],
  [M, "DELETE FROM books ORDER BY id LIMIT 1", "write!"],
  [M, "DELETE b FROM books b JOIN authors a ON a.id = b.author_id", "write!"],
  [M, "DELETE FROM books WHERE id = 1", "write"],
  [M, "CREATE TABLE t (id int)", "write"],
  [M, "ALTER TABLE books ADD COLUMN isbn text", "write"],
  [M, "RENAME TABLE books TO tomes", "write"],
  [M, "SET SESSION sql_mode = ''", "write"],
  [M, "SET SESSION TRANSACTION READ WRITE", "write"],
  [M, "START TRANSACTION", "write"],
  [M, "USE test", "write"],
  [M, "OPTIMIZE TABLE books", "write"],
  [M, "ANALYZE TABLE books", "write"],
  [M, "LOCK TABLES books WRITE", "write"],
  [M, "SELECT * FROM books FOR UPDATE", "write"],
  [M, "SELECT * FROM books LOCK IN SHARE MODE", "write"],
  [M, "DO 1", "write"],
  [M, "HANDLER books OPEN", "write"],
  [M, "KILL 42", "write"],
  [M, "FLUSH TABLES", "write"],
  [M, "GRANT ALL ON *.* TO 'x'@'%'", "write"],
  // MySQL: destructive
  [M, "DROP TABLE books", "destructive"],
  [M, "DROP DATABASE test", "destructive"],
  [M, "TRUNCATE TABLE books", "destructive"],
  [M, "ALTER TABLE books DROP COLUMN price", "destructive"],
  [M, "SHUTDOWN", "destructive"],
  [M, "PURGE BINARY LOGS BEFORE NOW()", "destructive"],
  // MySQL: file system and code
  [M, "SELECT * FROM books INTO OUTFILE '/tmp/x'", "reach"],
  [M, "SELECT 'x' INTO DUMPFILE '/tmp/x'", "reach"],
  [M, "SELECT LOAD_FILE('/etc/passwd')", "reach"],
  [M, "LOAD DATA INFILE '/etc/passwd' INTO TABLE t", "reach"],
  [M, "LOAD DATA LOCAL INFILE 'x' INTO TABLE t", "reach"],
  [M, "INSTALL PLUGIN x SONAME 'x.so'", "reach"],
  [
    M,
    "CREATE FUNCTION sys_x RETURNS STRING SONAME 'lib_mysqludf_sys.so'",
    "reach",
  ],
  [M, "SELECT 1; SELECT 2", "multi"],
  [M, "# nothing here", "empty"],

  // SQLite: reads
  [S, "SELECT 1", "read"],
  [S, "select * from [authors] where [name] = 'Ada'", "read"],
  [S, "SELECT `name` FROM authors", "read"],
  [S, "PRAGMA table_info(books)", "read"],
  [S, "PRAGMA main.table_info('books')", "read"],
  [S, "PRAGMA foreign_key_list(books)", "read"],
  [S, "PRAGMA integrity_check", "read"],
  [S, "PRAGMA journal_mode", "read"],
  [S, "EXPLAIN QUERY PLAN SELECT * FROM books", "read"],
  [S, "EXPLAIN QUERY PLAN DELETE FROM books", "read"],
  [S, "EXPLAIN SELECT 1", "read"],
  [S, "WITH t(x) AS (VALUES (1)) SELECT x FROM t", "read"],
  [S, "VALUES (1), (2)", "read"],
  [S, "SELECT 'ATTACH DATABASE x' AS s", "read"],
  // SQLite: writes
  [S, "INSERT INTO authors (name) VALUES ('Grace')", "write"],
  [S, "INSERT OR REPLACE INTO authors (id, name) VALUES (1, 'x')", "write"],
  [S, "INSERT INTO t VALUES (1) ON CONFLICT (id) DO UPDATE SET v = 2", "write"],
  [S, "UPDATE books SET price = 1 WHERE id = 1", "write"],
  [S, "UPDATE books SET price = 1", "write!"],
  [S, "DELETE FROM books", "write!"],
  [S, "DELETE FROM books WHERE id = 1 RETURNING *", "write"],
  [S, "CREATE TABLE t (id integer primary key)", "write"],
  [S, "CREATE TEMP TABLE t (id int)", "write"],
  [S, "ALTER TABLE books RENAME TO tomes", "write"],
  [S, "PRAGMA foreign_keys = OFF", "write"],
  [S, "PRAGMA query_only = 0", "write"],
  [S, "PRAGMA journal_mode = DELETE", "write"],
  [S, "PRAGMA user_version = 7", "write"],
  [S, "VACUUM", "write"],
  [S, "REINDEX", "write"],
  [S, "ANALYZE", "write"],
  [S, "DETACH DATABASE other", "write"],
  [S, "BEGIN IMMEDIATE", "write"],
  // SQLite: destructive
  [S, "DROP TABLE books", "destructive"],
  [S, "DROP VIEW book_titles", "destructive"],
  [S, "ALTER TABLE books DROP COLUMN price", "destructive"],
  // SQLite: file system and code
  [S, "ATTACH DATABASE '/tmp/other.db' AS other", "reach"],
  [S, "VACUUM INTO '/tmp/copy.db'", "reach"],
  [S, "SELECT load_extension('/tmp/evil.so')", "reach"],
  [S, "SELECT writefile('/tmp/x', 'data')", "reach"],
  [S, "SELECT readfile('/etc/passwd')", "reach"],
  [S, "SELECT 1; SELECT 2", "multi"],
];

const bypasses: [Dialect, string, Expect][] = [
  // Comment terminators: what each engine ends a line comment at.
  [
    P,
    "SELECT --\r pg_read_file('/etc/hostname') AS leaked\n, 1 AS one",
    "reach",
  ],
  [P, "SELECT --\r pg_ls_dir('/') AS l\n, 1", "reach"],
  [P, "SELECT 1 --\r; DELETE FROM books", "multi"],
  [P, "ALTER TABLE t --\r DROP COLUMN c\n, ADD COLUMN x int", "destructive"],
  [P, "CREATE --\r EXTENSION dblink", "reach"],
  [P, "SELECT 1 -- \f still a comment; DROP TABLE books", "read"],
  [P, "SELECT 1 -- \v still a comment; DROP TABLE books", "read"],
  [M, "SELECT 'x' AS a --\u0001 '\nINTO OUTFILE '/tmp/x' -- '", "reach"],
  [M, "SELECT 'x' AS a --\u007f '\n, LOAD_FILE('/etc/passwd') -- '", "reach"],
  [M, "DELETE FROM items --\u0001 WHERE id = 1", "write!"],
  [M, "DELETE FROM items --\u0008 WHERE id = 1", "write!"],
  [M, "SELECT 1 --", "read"],
  [S, "SELECT 1 --\r; DELETE FROM books", "read"],
  // Quote and tag forms: dollar tags with letters beyond ASCII.
  [
    P,
    "SELECT $é$'$é$ AS a, pg_read_file($q$/etc/hostname$q$) AS b --'",
    "reach",
  ],
  [P, "DELETE FROM t RETURNING $é$ WHERE $é$", "write!"],
  [P, "SELECT $日本$ ; $日本$ AS a", "read"],
  [P, "SELECT $_1$ '; DROP TABLE t; ' $_1$", "read"],
  [P, "SELECT 'unterminated", "write"],
  [P, "SELECT 1 /* never closed", "write"],
  [M, 'SELECT "a\\"; DROP TABLE t; --"', "read"],
  // Parameter forms: SQLite variables with Tcl suffixes swallow quotes.
  [S, "DELETE FROM items RETURNING @a(')') WHERE 1 ' /* '", "write!"],
  [S, "DELETE FROM items RETURNING $a(')') WHERE 1 ' /* '", "write!"],
  [S, "DELETE FROM items RETURNING :a::b(')') WHERE 1 ' /* '", "write!"],
  [S, "SELECT ?1, :name, @x, $y::z(w), #v", "read"],
  // Function reach, by name and by prefix.
  [P, "SELECT ts_rewrite('a'::tsquery, 'SELECT pg_read_file(''x'')')", "reach"],
  [P, "SELECT * FROM pg_hba_file_rules", "reach"],
  [P, "SELECT * FROM pg_catalog.pg_file_settings", "reach"],
  [P, "SELECT lo_get(1)", "reach"],
  [P, "SELECT dblink_exec('x', 'y')", "reach"],
  [P, "SELECT pg_read_binary_file('/etc/passwd')", "reach"],
  [M, "SELECT BENCHMARK(10000000000, MD5('a'))", "reach"],
  [M, "SELECT RELEASE_LOCK('x')", "reach"],
  // Comment and string tricks
  [P, "SELECT 1 /* */; DROP TABLE books", "multi"],
  [P, "SELECT 1 /* /* nested */ ; DROP TABLE books */", "read"],
  [P, "SELECT 1 /* /* nested */ */; DROP TABLE books", "multi"],
  [P, "SELECT $tag$ ' $tag$; DROP TABLE books", "multi"],
  [P, "SELECT E'\\''; DROP TABLE books; --'", "multi"],
  [P, "SELECT 'a'';'; DELETE FROM books", "multi"],
  [M, "SELECT 'a\\'; DROP TABLE books; -- '", "read"],
  [M, "SELECT 1 --; DROP TABLE books", "multi"],
  [S, "SELECT [a;b] FROM t; DELETE FROM books", "multi"],
  [M, "SELECT `x;`; DROP TABLE books", "multi"],
  // Executable comments (MySQL runs them)
  [M, "SELECT 1 /*! ; DROP TABLE books */", "reach"],
  [M, "SELECT 1 /*!50000 , LOAD_FILE('/etc/passwd') */", "reach"],
  [M, "/*!40101 DELETE FROM books */", "reach"],
  [M, "SELECT 1 /*M! , SLEEP(1) */", "reach"],
  // CTE writes
  [
    P,
    "WITH gone AS (DELETE FROM books RETURNING *) SELECT count(*) FROM gone",
    "write!",
  ],
  [
    P,
    "WITH gone AS (DELETE FROM books WHERE id = 1 RETURNING *) SELECT * FROM gone",
    "write",
  ],
  [
    P,
    "WITH x AS (UPDATE books SET price = 0 RETURNING id) SELECT * FROM x",
    "write!",
  ],
  [
    P,
    "WITH x AS (INSERT INTO authors (name) VALUES ('x') RETURNING id) SELECT * FROM x",
    "write",
  ],
  [
    P,
    "with x as (select 1) insert into authors (name) select 'y' from x",
    "write",
  ],
  [M, "WITH x AS (SELECT 1) UPDATE books SET price = 0", "write!"],
  [
    M,
    "WITH x AS (SELECT id FROM books) DELETE FROM books WHERE id IN (SELECT id FROM x)",
    "write",
  ],
  [S, "WITH x AS (SELECT 1) DELETE FROM books", "write!"],
  // EXPLAIN ANALYZE runs the statement
  [P, "EXPLAIN ANALYZE DELETE FROM books", "write!"],
  [
    P,
    "EXPLAIN (ANALYZE, BUFFERS) UPDATE books SET price = 0 WHERE id = 1",
    "write",
  ],
  [
    P,
    "EXPLAIN (ANALYZE true, COSTS off) INSERT INTO authors (name) VALUES ('x')",
    "write",
  ],
  [
    P,
    "explain analyze verbose with x as (delete from books returning *) select * from x",
    "write!",
  ],
  [P, "EXPLAIN ANALYZE CREATE TABLE t AS SELECT 1", "write"],
  [M, "EXPLAIN ANALYZE DELETE FROM books WHERE id = 1", "write"],
  [M, "ANALYZE DELETE FROM books", "write!"],
  [M, "ANALYZE FORMAT=JSON UPDATE books SET price = 0", "write"],
  // Side-effect functions in a SELECT
  [P, "SELECT nextval('books_id_seq')", "write"],
  [P, "SELECT setval('books_id_seq', 1)", "write"],
  [P, "SELECT pg_terminate_backend(pid) FROM pg_stat_activity", "write"],
  [P, "SELECT pg_cancel_backend(1)", "write"],
  [
    P,
    "SELECT set_config('default_transaction_read_only', 'off', false)",
    "write",
  ],
  [P, "SELECT pg_advisory_lock(1)", "write"],
  [P, "SELECT \"nextval\"('books_id_seq')", "write"],
  [P, "SELECT pg_catalog.pg_reload_conf()", "write"],
  [P, "SELECT lo_unlink(1)", "reach"],
  [P, "SELECT txid_current()", "write"],
  [M, "SELECT GET_LOCK('x', 0)", "reach"],
  [M, "SELECT NEXTVAL(s)", "write"],
  // Reach hidden in a SELECT
  [P, "SELECT pg_catalog.pg_read_file('/etc/passwd')", "reach"],
  [P, "SELECT \"pg_read_file\"('/etc/passwd')", "reach"],
  [P, "SELECT pg_read_file /* x */ ('/etc/passwd')", "reach"],
  [
    P,
    "SELECT query_to_xml('COPY (SELECT 1) TO PROGRAM ''id''', true, true, '')",
    "reach",
  ],
  [P, "SELECT table_to_xml('pg_authid', true, false, '')", "reach"],
  [
    P,
    "SELECT pg_catalog.schema_to_xml('pg_catalog', true, false, '')",
    "reach",
  ],
  [P, "SELECT database_to_xml_and_xmlschema(true, false, '')", "reach"],
  [P, "SELECT U&\"\\0070g_read_file\"('/etc/passwd')", "reach"],
  [P, "SELECT 1 FROM U&\"d!0061ta\" UESCAPE '!'", "reach"],
  [P, "SELECT * FROM (SELECT lo_export(1, '/tmp/x')) s", "reach"],
  [M, "SELECT `load_file`('/etc/passwd')", "reach"],
  [
    M,
    "SELECT * FROM books UNION SELECT LOAD_FILE('/etc/passwd'), 1, 2, 3, 4",
    "reach",
  ],
  [S, "SELECT \"load_extension\"('/tmp/evil')", "reach"],
  [S, "select LOAD_EXTENSION ( '/tmp/evil' )", "reach"],
  // Case and whitespace games
  [P, "dRoP\tTaBlE books", "destructive"],
  [P, "\n\n  (  ( DELETE FROM books ) )", "write!"],
  [P, "TRUNCATE/**/books", "destructive"],
  [M, "DrOp/**/TABLE books", "destructive"],
  [S, "\tDeLeTe\nFROM books", "write!"],
  [P, "AlTeR TABLE books\n  DROP\n  COLUMN price", "destructive"],
  [
    P,
    "CREATE FUNCTION f() RETURNS int LANGUAGE 'plpython3u' AS $$ import os $$",
    "reach",
  ],
  [P, "CREATE OR REPLACE TRUSTED LANGUAGE plx", "reach"],
  // PRAGMA games (SQLite): switching the fence off is a write
  [S, "PRAGMA QUERY_ONLY=false", "write"],
  [S, "pragma main.query_only = 0", "write"],
  [S, "PRAGMA writable_schema = 1", "write"],
];

/**
 * DELETE and UPDATE that name an event or a privilege, not a statement: no
 * approval for "every row" (outsider stop 57).
 */
const events: [Dialect, string, Expect][] = [
  [P, "CREATE TABLE c (a int REFERENCES p (id) ON DELETE CASCADE)", "write"],
  [P, "CREATE TABLE c (a int REFERENCES p ON UPDATE CASCADE)", "write"],
  [P, "GRANT DELETE, UPDATE ON p TO PUBLIC", "write"],
  [P, "REVOKE UPDATE ON p FROM r", "write"],
  // Triggers and rules ask as code that runs later (standing_code.ts), not
  // as a DELETE without WHERE: classifier_test.ts checks the reason.
  [P, "CREATE RULE r AS ON DELETE TO p DO ALSO NOTHING", "write!"],
  [
    P,
    "CREATE TRIGGER tr AFTER INSERT OR DELETE ON p FOR EACH ROW EXECUTE FUNCTION f()",
    "write!",
  ],
  [
    P,
    "CREATE TRIGGER tr INSTEAD OF UPDATE ON v FOR EACH ROW EXECUTE FUNCTION f()",
    "write!",
  ],
  [M, "CREATE TABLE t (a timestamp ON UPDATE CURRENT_TIMESTAMP)", "write"],
  [
    P,
    "CREATE TABLE c (a int REFERENCES p ON DELETE SET NULL ON UPDATE NO ACTION)",
    "write",
  ],
  // The statements themselves still are, whatever word comes before them
  // (outsider stop 58: MariaDB names a trigger `after`).
  [
    M,
    "CREATE TRIGGER t2 AFTER INSERT ON a FOR EACH ROW PRECEDES after DELETE FROM b",
    "write!",
  ],
  [
    M,
    "CREATE TRIGGER t2 AFTER INSERT ON a FOR EACH ROW FOLLOWS on UPDATE b SET x = 1",
    "write!",
  ],
  [P, "CREATE RULE r AS ON INSERT TO p DO ALSO DELETE FROM q", "write!"],
  [S, "CREATE TRIGGER tr AFTER INSERT ON p BEGIN DELETE FROM q; END", "write!"],
  [
    M,
    "CREATE TRIGGER t1 AFTER INSERT ON a FOR EACH ROW BEGIN IF 1 THEN DELETE FROM b; END IF; END",
    "write!",
  ],
  [
    M,
    "CREATE EVENT e ON SCHEDULE AT CURRENT_TIMESTAMP DO DELETE FROM b",
    "write!",
  ],
  [
    P,
    "MERGE INTO t USING s ON t.id = s.id WHEN MATCHED THEN DELETE WHEN NOT MATCHED THEN INSERT VALUES (s.id)",
    "write",
  ],
  [P, "INSERT INTO t VALUES (1) ON CONFLICT (id) DO UPDATE SET x = 2", "write"],
];

/** Every case of the corpus. */
export const CORPUS: readonly Case[] = [
  ...plain.map(([dialect, sql, expect]): Case => ({ dialect, sql, expect })),
  ...events.map(([dialect, sql, expect]): Case => ({ dialect, sql, expect })),
  ...bypasses.map(([dialect, sql, expect]): Case => ({
    dialect,
    sql,
    expect,
    bypass: true,
  })),
];
