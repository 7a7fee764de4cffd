/**
 * A column type change and `CREATE OR REPLACE` of a routine ask by their
 * words (lib/db/sql/column_change.ts, through standing_code.ts): the two
 * findings outsider stop 60 left open, on PostgreSQL and MariaDB, with the
 * statements around them that must not ask. The end-to-end side, through
 * the MCP endpoint: tests/db/typechange_test.ts.
 *
 * @module
 */

import { assertEquals } from "@std/assert";
import { classify } from "../../lib/db/sql/classifier.ts";
import { consentReasons } from "../../lib/features/consent.ts";
import { savedConnection } from "../_connections.ts";

type Dialect = "postgres" | "mysql" | "sqlite";

function verdict(sql: string, dialect: Dialect) {
  const found = classify(sql, dialect);
  if (!found.ok) throw new Error(found.message);
  return [found.tier, found.dangerous, found.danger ?? null];
}

const retyped = (columns: string, of: string) =>
  `it changes the type of ${columns} of ${of}, which rewrites every row and may round or cut its values`;
const replaced = (routine: string) =>
  `it replaces routine ${routine}, which code already installed may call`;

Deno.test("classify(): every column type change asks with its reason, USING or not (PostgreSQL TYPE / SET DATA TYPE, ALTER TYPE ... ALTER ATTRIBUTE; MariaDB MODIFY, CHANGE, CONVERT TO); ADD, RENAME, SET DEFAULT, SET NOT NULL, ALTER TYPE/DOMAIN and TYPE in a string, comment or name do not", () => {
  const cases: [string, Dialect, string][] = [
    [
      "ALTER TABLE t ALTER COLUMN v TYPE numeric(5,0)",
      "postgres",
      retyped("column v", "t"),
    ],
    [
      "ALTER TABLE t ALTER v SET DATA TYPE int",
      "postgres",
      retyped("column v", "t"),
    ],
    [
      "alter table t alter column v set data type varchar(3)",
      "postgres",
      retyped("column v", "t"),
    ],
    [
      "alter table if exists only s.t alter column v type int, alter w type text",
      "postgres",
      retyped("columns v, w", "s.t"),
    ],
    // A column named type, or quoted.
    [
      "alter table t alter column type type int",
      "postgres",
      retyped("column type", "t"),
    ],
    [
      "alter table t alter type type int",
      "postgres",
      retyped("column type", "t"),
    ],
    [
      'alter table t add column w int, alter column "V" type int',
      "postgres",
      retyped('column "V"', "t"),
    ],
    [
      "alter foreign table f alter column v type int",
      "postgres",
      retyped("column v", "f"),
    ],
    [
      "alter type comp alter attribute a type bigint cascade",
      "postgres",
      retyped("attribute a", "type comp"),
    ],
    // Stop 60's fix holds: EXCLUDE's USING is no TYPE ... USING; the TYPE
    // itself now asks as a type change.
    [
      "alter table u alter column id type bigint, add constraint u_ex exclude using btree (id with =)",
      "postgres",
      retyped("column id", "u"),
    ],
    [
      "ALTER TABLE t MODIFY v DECIMAL(5,0)",
      "mysql",
      retyped("column v", "t"),
    ],
    [
      "alter table t modify column v decimal(5,0) not null",
      "mysql",
      retyped("column v", "t"),
    ],
    ["ALTER TABLE t CHANGE v v2 TINYINT", "mysql", retyped("column v", "t")],
    [
      "alter table t change column if exists v v2 tinyint",
      "mysql",
      retyped("column v", "t"),
    ],
    [
      "alter online table test.t add column x int, modify v int",
      "mysql",
      retyped("column v", "test.t"),
    ],
    [
      "alter table t convert to character set latin1",
      "mysql",
      "it converts every text column of t to another character set, which rewrites every row and may cut its values",
    ],
  ];
  for (const [sql, dialect, why] of cases) {
    assertEquals(verdict(sql, dialect), ["write", true, why], sql);
  }
  // The existing TYPE ... USING reason is kept.
  assertEquals(
    verdict("alter table t alter column v type text using 'x'", "postgres"),
    ["write", true, "ALTER ... TYPE ... USING rewrites a column of every row"],
  );
  // Changes that keep every value, ALTER TYPE/DOMAIN on types, TYPE in a
  // string, a comment or a name: no type change.
  const keeps: [string, Dialect][] = [
    ["alter table t add column v numeric(5,0)", "postgres"],
    ["alter table t add column type int", "postgres"],
    ["alter table t rename column type to kind", "postgres"],
    ["alter table t alter column v set default 0", "postgres"],
    ["alter table t alter column type set default 1", "postgres"],
    ["alter table t alter type set default 1", "postgres"],
    ["alter table t alter column v set not null", "postgres"],
    ["alter table t alter constraint type deferrable", "postgres"],
    [
      "alter table t add column v text default 'alter column v type int'",
      "postgres",
    ],
    [
      "alter table t /* alter column v type int */ add column w int",
      "postgres",
    ],
    ["alter table t add check (v::numeric(5,0) > 0)", "postgres"],
    ["alter type mood add value 'x'", "postgres"],
    ["alter type comp add attribute c int", "postgres"],
    ["alter type comp rename attribute a to b", "postgres"],
    ["alter domain type set default 0", "postgres"],
    ["alter domain d add constraint c check (value > 0)", "postgres"],
    ["alter table t add column v decimal(5,0)", "mysql"],
    ["alter table t add column type int", "mysql"],
    ["alter table t rename column a to b", "mysql"],
    ["alter table t alter column v set default 1", "mysql"],
    ["alter table t alter v set default 1", "mysql"],
    ["alter table t add column m text default 'modify v int'", "mysql"],
    ["alter table t /* modify v int */ add column w int", "mysql"],
    ["alter table t add index i (a) using btree", "mysql"],
    ["alter table t add column v text", "sqlite"],
  ];
  for (const [sql, dialect] of keeps) {
    assertEquals(verdict(sql, dialect), ["write", false, null], sql);
  }
  // DROP DEFAULT and DROP NOT NULL are destructive by their DROP, as before
  // (not a type change: no danger of that kind).
  for (const dialect of ["postgres", "mysql"] as const) {
    assertEquals(
      verdict("alter table t alter column v drop default", dialect),
      ["destructive", true, null],
    );
  }
});

Deno.test("classify(): CREATE OR REPLACE of a function, procedure or aggregate asks (code already installed may call it); a plain CREATE does not; MariaDB's DROP PROCEDURE|FUNCTION is destructive", () => {
  const asks: [string, Dialect, string][] = [
    [
      "create or replace procedure p() delete from t where true",
      "mysql",
      replaced("p"),
    ],
    [
      "create or replace definer = procedure@localhost procedure p() delete from t where id > 0",
      "mysql",
      replaced("p"),
    ],
    [
      "create or replace function f() returns int return 1",
      "mysql",
      replaced("f"),
    ],
    [
      "create or replace aggregate function g(x int) returns int begin declare c int default 0; declare continue handler for not found return c; loop fetch group next row; set c = c + 1; end loop; end",
      "mysql",
      replaced("g"),
    ],
    [
      "CREATE OR REPLACE PROCEDURE test.p() BEGIN DELETE FROM t WHERE id > 0; END",
      "mysql",
      replaced("test.p"),
    ],
    [
      "create or replace function public.f() returns int language sql as $$ select 1 $$",
      "postgres",
      replaced("public.f"),
    ],
    [
      "create or replace procedure p() language sql as $$ delete from t where true $$",
      "postgres",
      replaced("p"),
    ],
    [
      "create or replace procedure p() language sql begin atomic delete from t where id > 0; end",
      "postgres",
      replaced("p"),
    ],
  ];
  for (const [sql, dialect, why] of asks) {
    assertEquals(verdict(sql, dialect), ["write", true, why], sql);
  }
  // MariaDB's OR REPLACE of a trigger or event asks as standing code.
  assertEquals(
    verdict(
      "create or replace trigger tr after insert on t for each row set @a = 1",
      "mysql",
    ),
    [
      "write",
      true,
      "it installs a trigger, which runs on later writes to its table",
    ],
  );
  assertEquals(
    verdict(
      "create or replace event e on schedule every 1 day do call p()",
      "mysql",
    ),
    ["write", true, "it installs an event, which runs on a schedule"],
  );
  const plain: [string, Dialect][] = [
    ["create procedure p() delete from t where true", "mysql"],
    ["create function f() returns int return 1", "mysql"],
    ["create function if not exists f() returns int return 1", "mysql"],
    ["create procedure p() language sql as $$ select 1 $$", "postgres"],
    [
      "create function f() returns int language sql as $$ select 1 $$",
      "postgres",
    ],
    ["create view v as select 1", "postgres"],
    ["create table replace_log (routine text)", "mysql"],
  ];
  for (const [sql, dialect] of plain) {
    assertEquals(verdict(sql, dialect), ["write", false, null], sql);
  }
  for (
    const sql of [
      "drop procedure p",
      "drop procedure if exists p",
      "drop function f",
    ]
  ) {
    assertEquals(verdict(sql, "mysql"), ["destructive", true, null], sql);
  }
});

Deno.test("consentReasons(): a type change's and a replaced routine's reason is what the user is asked, in Safe Mode silent", () => {
  const connection = savedConnection(
    { engine: "postgres", url: "postgres://x@127.0.0.1/x" },
    "Typechange",
    { externalAccess: "readWrite", safeMode: "silent" },
  );
  const reasons = (sql: string, dialect: Dialect) => {
    const found = classify(sql, dialect);
    if (!found.ok) throw new Error(found.message);
    return consentReasons(connection, found, false);
  };
  assertEquals(
    reasons("alter table t alter column v type numeric(5,0)", "postgres"),
    [retyped("column v", "t")],
  );
  assertEquals(reasons("alter table t modify v decimal(5,0)", "mysql"), [
    retyped("column v", "t"),
  ]);
  assertEquals(
    reasons(
      "create or replace procedure p() language sql as $$ delete from t where true $$",
      "postgres",
    ),
    [replaced("p")],
  );
  assertEquals(reasons("alter table t add column w int", "postgres"), []);
});

Deno.test("classify(): what changes code or rows already installed asks (outsider stop 62): a view replaced or redefined, a routine renamed or moved, an enum value renamed; MariaDB's CREATE OR REPLACE TABLE is destructive; a column named modify is a name", () => {
  const asks: [string, Dialect, string][] = [
    [
      "create or replace view vv as select id from k2",
      "postgres",
      "it replaces view vv, which code already installed may read",
    ],
    [
      "CREATE OR REPLACE DEFINER = u@localhost VIEW s.vv AS SELECT 1",
      "mysql",
      "it replaces view s.vv, which code already installed may read",
    ],
    [
      "alter algorithm = merge view vv as select id from k2",
      "mysql",
      "it redefines view vv, which code already installed may read",
    ],
    [
      "alter function g() rename to g_old",
      "postgres",
      "it renames or moves function g, which code already installed may call by its old name (a routine made under that name later runs in its place)",
    ],
    [
      "alter procedure if exists p(int) set schema other",
      "postgres",
      "it renames or moves procedure p, which code already installed may call by its old name (a routine made under that name later runs in its place)",
    ],
    [
      "alter routine r rename to r2",
      "postgres",
      "it renames or moves routine r, which code already installed may call by its old name (a routine made under that name later runs in its place)",
    ],
    [
      "alter function g() set search_path = s2, public",
      "postgres",
      "it changes function g (how it runs), which code already installed may call",
    ],
    [
      "alter table log enable always trigger tr",
      "postgres",
      "it enables a trigger on log, which runs on later writes to its table",
    ],
    [
      "alter type e rename value 'keep' to 'gone'",
      "postgres",
      "it renames a value of type e, which every row holding it then reads as the new value",
    ],
  ];
  for (const [sql, dialect, why] of asks) {
    assertEquals(verdict(sql, dialect), ["write", true, why], sql);
  }
  const quiet: [string, Dialect][] = [
    ["create view vv as select 1", "postgres"],
    ["create view vv as select 1", "mysql"],
    ["alter view vv rename to vw", "mysql"],
    ["alter view vv set (security_barrier = true)", "postgres"],
    ["alter function g() owner to someone", "postgres"],
    ["alter type e rename to e2", "postgres"],
    ["alter type e add value 'new'", "postgres"],
    ["alter table t rename column v to w", "postgres"],
    ["alter table t disable trigger tr", "postgres"],
    ["alter table t enable row level security", "postgres"],
    ["alter table r add column modify int", "mysql"],
    ["alter table r add modify int", "mysql"],
    ["alter table r add column if not exists modify int", "mysql"],
    ["alter table r rename column modify to m2", "mysql"],
    ["alter table r rename column m2 to modify", "mysql"],
  ];
  for (const [sql, dialect] of quiet) {
    assertEquals(verdict(sql, dialect), ["write", false, null], sql);
  }
  assertEquals(
    verdict("alter table r modify modify bigint", "mysql")[1],
    true,
  );
  for (
    const sql of [
      "create or replace table r (id int primary key)",
      "CREATE OR REPLACE TEMPORARY TABLE r (id int)",
      "create or replace database d",
      "create /*x*/ or replace schema d",
    ]
  ) {
    assertEquals(verdict(sql, "mysql"), ["destructive", true, null], sql);
  }
  assertEquals(
    verdict("create table if not exists r (id int)", "mysql"),
    ["write", false, null],
  );
});
