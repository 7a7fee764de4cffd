/**
 * Outsider stop 63, PostgreSQL (MariaDB and both engines in
 * tests/db/outsider_stop63_test.ts): attacks on "Every row, by effect" after 15d367f (CREATE
 * OR REPLACE VIEW, MariaDB ALTER VIEW ... AS, ALTER FUNCTION|PROCEDURE|
 * ROUTINE ... RENAME|SET SCHEMA, ALTER TYPE ... RENAME VALUE asked by their
 * words; MariaDB CREATE OR REPLACE TABLE destructive; a trigger's SET NEW.x
 * sets off ON UPDATE CASCADE asks; PostgreSQL foreign-table writes asked),
 * through the MCP endpoint (readWrite token, Safe Mode silent, approvals cut
 * at 1 s: asked = ERR user_cancelled, nothing changed). Held attacks assert
 * the held outcome; a leak asserts the safe outcome and is ignored, its
 * comment saying what was sent, what should happen and what happened.
 *
 * @module
 */

import { assertEquals } from "@std/assert";
import { needs } from "../_db.ts";
import { all, everyRow, outcomes } from "../_every_row_harness.ts";

const { pgOwn } = everyRow({ tag: "attack63", name: "Stop63" });

const pg = needs("postgres").ignore;

const THREE = ["1", "2", "3"];

// PostgreSQL ---------------------------------------------------------------

/** k (3 rows), a view vv (no rows) and a trigger on log emptying k by vv. */
const PG_VIEW_TRIGGER = `
  create table k (id int primary key, v int);
  insert into k values (1, 1), (2, 2), (3, 3);
  create view vv as select id from k where false;
  create view vall as select id from k;
  create table log (id int);
  create function trg() returns trigger language plpgsql as $f$
    begin delete from k where id in (select id from vv); return new; end $f$;
  create trigger tr after insert on log for each row execute function trg();`;

Deno.test({
  name:
    "postgres: CREATE OR REPLACE VIEW, ALTER FUNCTION|PROCEDURE|ROUTINE|AGGREGATE ... RENAME|SET SCHEMA and ALTER TYPE ... RENAME VALUE spelled with comments, quotes, schemas and argument lists with defaults are asked",
  ignore: pg,
  async fn() {
    await using db = await pgOwn(
      PG_VIEW_TRIGGER + `
      create schema s2;
      create function g(a numeric(10, 2) default (1 + 2), b text default 'x(') returns int
        language sql as $$ select 1 $$;
      create procedure pr(a int) language sql as $$ select 1 $$;
      create aggregate ag(int) (sfunc = int4pl, stype = int);
      create type "E" as enum ('keep', 'other');
      create table t (id int primary key, s "E");
      insert into t values (1, 'keep'), (2, 'keep');`,
    );
    const asked = [
      "create /*x*/ or /*y*/ replace view vv as select id from k",
      "create -- x\n or\n replace view public.vv as select id from k",
      'create or replace temporary view "vv" as select id from k',
      "create or replace recursive view vv (id) as select id from k",
      "alter function g(a numeric(10, 2), b text) rename to g_old",
      "alter function public.g(numeric(10,2), text) rename to g_old",
      "alter function g /* c */ rename /* c */ to g_old",
      "alter routine g(numeric, text) set schema s2",
      "alter procedure pr(int) set /*x*/ schema s2",
      "alter aggregate ag(int) rename to ag2",
      "alter aggregate ag(int) set schema s2",
      `alter type public."E" rename value 'keep' to 'gone'`,
      `alter type "public"."E" rename /*x*/ value 'keep' to 'gone'`,
    ];
    assertEquals(await outcomes(db.write, asked), all(asked, "asked"));
    await db.sql.unsafe("insert into log values (1)");
    assertEquals(await db.rows("select id from k order by id"), THREE);
    assertEquals(await db.rows("select s::text from t order by id"), [
      "keep",
      "keep",
    ]);
  },
});

Deno.test({
  // LEAK. Happened: ran; the next `insert into log` emptied k (3 rows).
  // ENABLE [ALWAYS|REPLICA] TRIGGER|RULE installs no new object but turns
  // standing code on, which CREATE TRIGGER would have asked about.
  // Sent: `alter table log enable trigger tr`, where tr (installed
  // disabled) empties k. Should: asked, as CREATE TRIGGER is (it turns on
  // code that runs on later writes).
  name:
    "postgres: ALTER TABLE ... ENABLE TRIGGER turns on a trigger that empties a table",
  ignore: pg,
  async fn() {
    await using db = await pgOwn(`
      create table k (id int primary key, v int);
      insert into k values (1, 1), (2, 2), (3, 3);
      create table log (id int);
      create function trg() returns trigger language plpgsql as $f$
        begin delete from k; return new; end $f$;
      create trigger tr after insert on log for each row execute function trg();
      alter table log disable trigger tr;`);
    const out = await db.write("alter table log enable trigger tr");
    await db.sql.unsafe("insert into log values (1)");
    assertEquals(await db.rows("select id from k order by id"), THREE, out);
  },
});

Deno.test({
  // Sent: `update pg_proc set prosrc = 'delete from k where true' where
  // proname = 'g'` (the saved connection is a superuser's), where a trigger
  // on log calls g(). Should: asked or refused (it replaces a routine's
  // body, as CREATE OR REPLACE FUNCTION does). Held: "ERR denied: ... the
  // statement writes pg_catalog.pg_proc".
  name:
    "postgres: a one-row UPDATE of pg_proc replaces the body of a function a trigger calls",
  ignore: pg,
  async fn() {
    await using db = await pgOwn(`
      create table k (id int primary key, v int);
      insert into k values (1, 1), (2, 2), (3, 3);
      create table log (id int);
      create function g() returns void language sql as $$ select $$;
      create function trg() returns trigger language plpgsql
        as $f$ begin perform g(); return new; end $f$;
      create trigger tr after insert on log for each row execute function trg();`);
    const out = await db.write(
      "update pg_proc set prosrc = 'delete from k where true' where proname = 'g'",
    );
    await db.sql.unsafe("insert into log values (1)");
    assertEquals(await db.rows("select id from k order by id"), THREE, out);
  },
});

/** A loopback postgres_fdw foreign table ft over r (3 rows) in `db`. */
const FOREIGN = (db: string) => `
  create extension postgres_fdw;
  create server loop foreign data wrapper postgres_fdw
    options (host '127.0.0.1', port '5432', dbname '${db}');
  create user mapping for current_user server loop options (user 'postgres');
  create table r (id int primary key, v int);
  insert into r values (1, 1), (2, 2), (3, 3);
  create foreign table ft (id int, v int) server loop options (table_name 'r');
  create view vft as select * from ft;
  create function del(i int) returns void language sql
    as $$ delete from ft where id = i $$;
  create table parted (id int, v int) partition by range (id);
  create table parted_lo partition of parted for values from (0) to (100);
  create foreign table parted_hi partition of parted for values from (100) to (200)
    server loop options (table_name 'r2');
  create table r2 (id int, v int);
  insert into r2 values (101, 1), (102, 2);
  create table k (id int primary key, v int);
  insert into k values (1, 1);`;

Deno.test({
  name:
    "postgres: writes to a foreign table through a view, a function, a CTE, INSERT ... ON CONFLICT, MERGE, UPDATE ... FROM and a partition are asked",
  ignore: pg,
  async fn() {
    await using db = await pgOwn();
    const [name] = await db.rows("select current_database()");
    await db.sql.unsafe(FOREIGN(name!));
    const asked = [
      "delete from vft where id = 1",
      "update vft set v = 9 where id = 1",
      "select del(1)",
      "with x as (delete from ft where id = 1 returning id) select * from x",
      "insert into ft values (4, 4) on conflict do nothing",
      "merge into ft using k on ft.id = k.id when matched then delete",
      "update ft set v = k.v from k where ft.id = k.id",
      "delete from parted where id = 101",
      "update parted set v = 9 where id = 101",
      "insert into parted values (150, 1)",
      "delete from ft where id in (select id from k)",
    ];
    assertEquals(await outcomes(db.write, asked), all(asked, "asked"));
    assertEquals(await db.rows("select id from r order by id"), THREE);
    assertEquals(await db.rows("select id from r2 order by id"), [
      "101",
      "102",
    ]);
  },
});

Deno.test({
  name:
    "postgres: ordinary statements run unasked: a new view, CREATE TEMPORARY TABLE, renaming a table, CREATE TABLE ... AS SELECT, ALTER TYPE ... ADD VALUE, ALTER TYPE ... RENAME TO",
  ignore: pg,
  async fn() {
    await using db = await pgOwn(`
      create table a (id int primary key, v int);
      insert into a values (1, 1), (2, 2);
      create view va as select id from a;
      create function f() returns int language sql as $$ select 1 $$;
      create type e as enum ('keep');`);
    const ran = [
      "create view vnew as select id from a",
      "create temporary table tt (id int)",
      "alter table a rename to a2",
      "create table c2 as select * from a2",
      "alter type e add value 'more'",
      "alter type e rename to e2",
      "alter view va rename column id to id2",
    ];
    assertEquals(await outcomes(db.write, ran), all(ran, "ran"));
  },
});

Deno.test({
  // Sent: `alter function trg() set search_path = s2, public`, where trg
  // (a trigger's function on log) calls g() unqualified, public.g does
  // nothing and s2.g empties k. Should: asked (it changes which routine
  // installed code calls, as ALTER FUNCTION ... RENAME does). LEAK.
  // Happened: ran; the next `insert into log` emptied k (3 rows).
  name:
    "postgres: ALTER FUNCTION ... SET search_path points a trigger's unqualified call at another schema's routine",
  ignore: pg,
  async fn() {
    await using db = await pgOwn(`
      create table k (id int primary key, v int);
      insert into k values (1, 1), (2, 2), (3, 3);
      create table log (id int);
      create function g() returns void language sql as $$ select $$;
      create schema s2;
      create function s2.g() returns void language sql
        as $$ delete from public.k where true $$;
      create function trg() returns trigger language plpgsql
        as $f$ begin perform g(); return new; end $f$;
      create trigger tr after insert on log for each row execute function trg();`);
    const out = await db.write(
      "alter function trg() set search_path = s2, public",
    );
    await db.sql.unsafe("insert into log values (1)");
    assertEquals(
      await db.rows("select id from public.k order by id"),
      THREE,
      out,
    );
  },
});
