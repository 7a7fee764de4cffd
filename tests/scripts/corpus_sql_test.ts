/**
 * `deno task corpus` reads a psql file as the regression suite writes it:
 * a small corpus of our own, with each kind of statement it sorts.
 */

import { assertEquals } from "@std/assert";
import {
  calledFunctions,
  corpusStatements,
  loadParser,
  messageShape,
} from "../../scripts/corpus_sql.ts";

const FILE = String.raw`
--
-- a regression-style file
--
\set filename :abs_srcdir '/data/onek.data'
CREATE TABLE onek (unique1 int, stringu1 name);
COPY onek FROM :'filename';
INSERT INTO onek VALUES (1, 'a'), (2, 'b');
SELECT * FROM onek WHERE unique1 < 2;
SELECT unique1 INTO TEMP t FROM onek;
SELECT * FROM onek FOR UPDATE;
WITH d AS (DELETE FROM onek RETURNING 1) SELECT * FROM d;
VALUES (1), (2);
SELECT count(*) FROM onek \gset
CREATE ROLE regress_x;
COPY onek TO '/tmp/x';
DO $$ BEGIN PERFORM 1; END $$;
CREATE FUNCTION f() RETURNS int LANGUAGE c AS 'regress', 'f';
CREATE FUNCTION g() RETURNS int LANGUAGE plpgsql AS $$ BEGIN RETURN 1; END $$;
ALTER SYSTEM SET work_mem = '1MB';
SELECT 'semi;colon', $q$ also; here $q$;
SELEKT broken;
`;

Deno.test("corpus: a psql file sorted into reads, setup and what is left out", async () => {
  await loadParser();
  const sorted = corpusStatements(FILE).map((s) => [s.use, s.kind]);
  assertEquals(sorted, [
    ["setup", "CreateStmt"],
    ["skip", "psql variable"],
    ["setup", "InsertStmt"],
    ["read", "SelectStmt"],
    ["setup", "SelectStmt"],
    ["skip", "SelectStmt"],
    ["skip", "SelectStmt"],
    ["read", "SelectStmt"],
    ["read", "SelectStmt"],
    ["skip", "CreateRoleStmt"],
    ["skip", "CopyStmt"],
    ["skip", "DoStmt"],
    ["skip", "CreateFunctionStmt"],
    ["setup", "CreateFunctionStmt"],
    ["skip", "AlterSystemStmt"],
    ["read", "SelectStmt"],
    ["skip", "parse error"],
  ]);
});

Deno.test("corpus: refusals that differ only in values and numbers are one reason; the function named is kept", async () => {
  await loadParser();
  assertEquals(
    messageShape('pg_sleep() reaches "x" at 12'),
    messageShape('pg_sleep() reaches "yy" at 3'),
  );
  assertEquals(
    messageShape("pg_sleep() reaches") === messageShape("lo_import() reaches"),
    false,
  );
  assertEquals(
    calledFunctions("SELECT pg_catalog.random(), f(g(1)) FROM t"),
    ["random", "f", "g"],
  );
});
