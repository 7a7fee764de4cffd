import { assert, assertEquals } from "@std/assert";
import { parsePostgres } from "../../lib/db/postgres/pg_parse.ts";

/** What the allowlist says of one statement: its reach, or null. */
async function reachOf(sql: string): Promise<string | null> {
  const parsed = await parsePostgres(sql);
  assert(parsed.ok && parsed.analysis !== null, sql);
  return parsed.analysis.reach;
}

Deno.test("the statements of the connection's own database stay allowed to a write token (their finer checks apart)", async () => {
  const allowed = [
    "insert into t values (1)",
    "update t set x = 1 where id = 2",
    "delete from t where id = 1",
    "merge into t using s on t.id = s.id when matched then delete",
    "truncate t",
    "create table t (id int primary key, x text)",
    "alter table t add column y int",
    "alter table t rename column y to z",
    "alter table t set schema s",
    "create index on t (x)",
    "create view v as select 1",
    "create materialized view m as select 1",
    "refresh materialized view m",
    "create sequence q",
    "alter sequence q restart",
    "create type mood as enum ('a', 'b')",
    "alter type mood add value 'c'",
    "create type pair as (a int, b int)",
    "create domain d as int check (value > 0)",
    "create schema s",
    "create schema s create table t (x int)",
    "drop table t",
    "drop view v",
    "drop schema s cascade",
    "drop type mood",
    "drop index i",
    "drop function f()",
    "drop trigger tr on t",
    "drop policy p on t",
    "comment on table t is 'x'",
    "grant select on t to r",
    "grant select on all tables in schema s to r",
    "revoke insert on t from r",
    "grant usage on schema s to r",
    "create function f() returns int language sql return 1",
    "create function f() returns int language sql begin atomic select 1; end",
    "create trigger tr after insert on t for each row execute function f()",
    "create policy p on t using (true)",
    "create statistics st on a, b from t",
    "create rule r as on insert to t do also notify t",
    "vacuum t",
    "analyze t",
    "cluster t using i",
    "reindex table t",
    "lock table t in share mode",
    "begin",
    "set statement_timeout = 1000",
    "create aggregate a (int) (sfunc = int4pl, stype = int)",
    "create collation c (provider = icu, locale = 'und')",
    "alter table t rename to u",
    "create text search dictionary d (template = simple)",
    "alter text search dictionary d (stopwords = english)",
  ];
  for (const sql of allowed) assertEquals(await reachOf(sql), null, sql);
});

Deno.test("statements outside the connection's own database are refused to every token, naming what they are", async () => {
  const refused: [string, RegExp][] = [
    ["create role r login password 'x'", /^CREATE ROLE acts outside/],
    ["alter role r password 'x'", /^ALTER ROLE acts outside/],
    ["alter user postgres valid until 'infinity'", /^ALTER ROLE acts outside/],
    ["drop role r", /^DROP ROLE acts outside/],
    ["alter role r set search_path = s", /^ALTER ROLE … SET acts outside/],
    ["alter role all set statement_timeout = 1", /^ALTER ROLE … SET/],
    ["alter database test set search_path = s", /^ALTER DATABASE … SET/],
    ["alter database test connection limit 1", /^ALTER DATABASE acts/],
    ["create database d", /^CREATE DATABASE acts outside/],
    ["drop database d", /^DROP DATABASE acts outside/],
    ["create tablespace t location '/tmp'", /^CREATE TABLESPACE acts/],
    ["drop tablespace t", /^DROP TABLESPACE acts outside/],
    ["drop extension plpgsql cascade", /^DROP EXTENSION acts outside/],
    ["drop language plpgsql cascade", /^DROP LANGUAGE acts outside/],
    ["drop server s cascade", /^DROP FOREIGN SERVER acts outside/],
    ["drop foreign data wrapper w", /^DROP FOREIGN DATA WRAPPER acts/],
    ["drop foreign table ft", /^DROP FOREIGN TABLE acts outside/],
    ["drop event trigger e", /^DROP EVENT TRIGGER acts outside/],
    ["drop user mapping for public server s", /^DROP USER MAPPING acts/],
    ["drop publication p", /^DROP PUBLICATION acts outside/],
    ["drop subscription s", /^DROP SUBSCRIPTION acts outside/],
    ["alter server s owner to r", /^ALTER … OWNER TO acts outside/],
    ["alter server s rename to s2", /^ALTER … RENAME of a FOREIGN SERVER/],
    ["grant usage on foreign server s to r", /^GRANT\|REVOKE … ON FOREIGN/],
    ["grant usage on foreign data wrapper w to r", /^GRANT\|REVOKE … ON/],
    ["grant connect on database test to r", /^GRANT\|REVOKE … ON DATABASE/],
    ["grant set on parameter work_mem to r", /^GRANT\|REVOKE … ON PARAMETER/],
    ["alter table t owner to postgres", /^ALTER … OWNER TO hands an object/],
    ["alter schema s owner to r", /^ALTER … OWNER TO acts outside/],
    ["reassign owned by a to b", /^REASSIGN OWNED acts outside/],
    ["drop owned by r", /^DROP OWNED acts outside/],
    ["checkpoint", /^CHECKPOINT acts outside/],
    [
      "create event trigger e on ddl_command_start execute function f()",
      /^CREATE EVENT TRIGGER acts/,
    ],
    ["create publication p for all tables", /^CREATE PUBLICATION acts/],
    ["alter extension plpgsql add function f()", /^ALTER EXTENSION … ADD/],
    ["alter function f() depends on extension e", /^ALTER … DEPENDS ON/],
    ["alter default privileges grant select on tables to r", /^ALTER DEFAULT/],
    ["security label on table t is 'x'", /^SECURITY LABEL acts outside/],
    ["alter type t set (receive = f)", /^ALTER TYPE … SET acts outside/],
    ["alter operator = (int, int) set (restrict = f)", /^ALTER OPERATOR/],
    [
      "create operator class c for type int using btree as operator 1 <",
      /^CREATE OPERATOR CLASS/,
    ],
    [
      "create text search parser p (start = f, gettoken = f, end = f, lextypes = f)",
      /^CREATE TEXT SEARCH PARSER acts/,
    ],
    ["execute p", /^EXECUTE \(a prepared statement dbport did not read\)/],
    // Inside a statement that is allowed itself.
    ["create schema s create table t (x int) create view v as select 1", /^$/],
  ];
  for (const [sql, expected] of refused) {
    const reach = await reachOf(sql);
    if (expected.source === "^$") {
      assertEquals(reach, null, sql);
      continue;
    }
    assert(reach !== null && expected.test(reach), `${sql}: ${reach}`);
    assert(
      reach.endsWith(
        "dbport's tokens read and change the connection's own database (its data and schema) only; the rest is the server administrator's",
      ),
      reach,
    );
  }
});

Deno.test("an object created in a catalog schema, or an index on a catalog table, is refused; an unqualified pg_ name is created in the user's schema (notice56, stop 57)", async () => {
  const refused: [string, RegExp][] = [
    [
      "create type pg_catalog.t as (a int)",
      /^CREATE TYPE pg_catalog\.t creates/,
    ],
    [
      "create type pg_catalog.e as enum ('a')",
      /^CREATE TYPE … AS ENUM pg_catalog\.e/,
    ],
    [
      "create type pg_catalog.r as range (subtype = int4)",
      /AS RANGE pg_catalog\.r/,
    ],
    ["create domain pg_catalog.d as int", /^CREATE DOMAIN pg_catalog\.d/],
    ["create table pg_catalog.x (a int)", /^CREATE TABLE pg_catalog\.x/],
    ["create table information_schema.x (a int)", /information_schema\.x/],
    ["create sequence pg_toast.q", /^CREATE SEQUENCE pg_toast\.q/],
    ["create statistics pg_catalog.st on a, b from t", /^CREATE STATISTICS/],
    ["create index on pg_class (relname)", /^CREATE INDEX on pg_class/],
    ["create index on pg_catalog.pg_class (relname)", /pg_catalog\.pg_class/],
  ];
  for (const [sql, expected] of refused) {
    const reach = await reachOf(sql);
    assert(reach !== null && expected.test(reach), `${sql}: ${reach}`);
  }
  for (
    const sql of [
      "create table pg_mine (a int)",
      "create type pg_mood as enum ('a')",
      "create domain pg_d as int",
      "create table pg_temp.t (a int)",
      "create index on t (a)",
    ]
  ) assertEquals(await reachOf(sql), null, sql);
});
