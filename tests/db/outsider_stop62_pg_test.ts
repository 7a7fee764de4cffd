/**
 * Outsider stop 62 (PostgreSQL and SQLite; MariaDB in
 * tests/db/outsider_stop62_test.ts): attacks on "Every row, by effect" after
 * e8f529b (column type changes and CREATE OR REPLACE of routines asked by
 * their words, MariaDB and SQLite foreign-key actions and triggers counted,
 * REPEATABLE READ for a judged PostgreSQL write, MariaDB's fewer-of-two
 * counts), through the MCP endpoint (readWrite token, Safe Mode silent,
 * approvals cut at 1 s: asked = ERR user_cancelled, nothing changed). Each
 * test's comment says what was sent, what should happen and what happened
 * at the attack; the leaks found are fixed ("fixed at stop 62"). A column
 * swap by three RENAME COLUMNs is left out and named in docs/security.md
 * (renames are schema changes, not judged).
 *
 * @module
 */

import { assert, assertEquals } from "@std/assert";
import { needs } from "../_db.ts";
import { all, everyRow, outcomes, pause } from "../_every_row_harness.ts";

const { pgOwn, liteOwn } = everyRow({ tag: "attack62", name: "Stop62" });

const pg = needs("postgres").ignore;

// PostgreSQL ---------------------------------------------------------------

Deno.test({
  // Sent: `alter type e rename value 'keep' to 'gone'` on an enum every row
  // of t holds 'keep'. Should: asked (every row of t now reads 'gone', a
  // change of every row's value no row count sees). Happened: ran; both
  // rows read 'gone'. The docs keep ALTER TYPE unasked; RENAME VALUE is a
  // value change, not a name change.
  name:
    "postgres: ALTER TYPE ... RENAME VALUE of an enum changes every row's value unasked (fixed at stop 62)",
  ignore: pg,
  async fn() {
    await using db = await pgOwn(`
      create type e as enum ('keep', 'other');
      create table t (id int primary key, s e);
      insert into t values (1, 'keep'), (2, 'keep');`);
    assertEquals(
      await db.write("alter type e rename value 'keep' to 'gone'"),
      "asked",
    );
    assertEquals(await db.rows("select id, s from t order by id"), [
      "1:keep",
      "2:keep",
    ]);
  },
});

Deno.test({
  // Sent, in two calls: `alter function g() rename to g_old`, then `create
  // function g() returns void language sql as $$ delete from k where true
  // $$`, where an existing trigger function on log says `perform g()`.
  // Should: asked, as CREATE OR REPLACE FUNCTION g is (it replaces what
  // installed code calls). Happened: both ran; the application's next
  // `insert into log` emptied k (3 rows).
  name:
    "postgres: ALTER FUNCTION ... RENAME then a plain CREATE FUNCTION replaces what a trigger calls unasked (fixed at stop 62)",
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
    const steps = [
      "alter function g() rename to g_old",
      "create function g() returns void language sql as $$ delete from k where true $$",
    ];
    const out = await outcomes(db.write, steps);
    assert(Object.values(out).includes("asked"), JSON.stringify(out));
    await db.sql.unsafe("insert into log values (1)");
    assertEquals(await db.rows("select id from k order by id"), [
      "1",
      "2",
      "3",
    ]);
  },
});

Deno.test({
  // Sent: `create or replace view vv as select id from k2`, where an
  // existing trigger on log2 runs `delete from k2 where id in (select id
  // from vv)` and vv was `... where false`. Should: asked, as CREATE OR
  // REPLACE FUNCTION is (installed code reads the view). Happened: ran; the
  // application's next `insert into log2` emptied k2 (3 rows).
  name:
    "postgres: CREATE OR REPLACE VIEW that an existing trigger reads runs unasked and empties a table at the next insert (fixed at stop 62)",
  ignore: pg,
  async fn() {
    await using db = await pgOwn(`
      create table k2 (id int primary key, v int);
      insert into k2 values (1, 1), (2, 2), (3, 3);
      create view vv as select id from k2 where false;
      create table log2 (id int);
      create function trg2() returns trigger language plpgsql as $f$
        begin delete from k2 where id in (select id from vv); return new; end $f$;
      create trigger tr2 after insert on log2 for each row execute function trg2();`);
    assertEquals(
      await db.write("create or replace view vv as select id from k2"),
      "asked",
    );
    await db.sql.unsafe("insert into log2 values (1)");
    assertEquals(await db.rows("select id from k2 order by id"), [
      "1",
      "2",
      "3",
    ]);
  },
});

Deno.test({
  name:
    "postgres: type changes with COLLATE, ONLY and SET DATA TYPE are asked; ordinary writes (audit-trigger INSERT, ADD COLUMN, CREATE FUNCTION, a non-key UPDATE of a parent with ON UPDATE CASCADE children, a one-row UPDATE of an idle table) run",
  ignore: pg,
  async fn() {
    await using db = await pgOwn(`
      create table t (id int primary key, v numeric(10,2));
      insert into t values (1, 1.25), (2, 2.75);
      create table a (id int primary key, v int);
      insert into a values (1, 1), (2, 2);
      create table audit (id int);
      create function aud() returns trigger language plpgsql
        as $f$ begin insert into audit values (new.id); return new; end $f$;
      create trigger ta after insert on a for each row execute function aud();
      create table pc (id int primary key, v int);
      insert into pc values (1, 1), (2, 2);
      create table cc (id int primary key, pid int references pc (id) on update cascade);
      insert into cc values (1, 1), (2, 1);`);
    const asked = [
      'alter table t alter column v type text collate "C"',
      "alter table only t alter column v set data type numeric(5,0)",
      "alter table if exists t alter v type numeric(5,0)",
    ];
    assertEquals(await outcomes(db.write, asked), all(asked, "asked"));
    const ran = [
      "insert into a values (3, 3)",
      "alter table a add column x int",
      "create function f2() returns int language sql as $$ select 1 $$",
      "update pc set v = 5 where id = 1",
      "update a set v = v + 1 where id = 1",
    ];
    assertEquals(await outcomes(db.write, ran), all(ran, "ran"));
    assertEquals(await db.rows("select * from t order by id"), [
      "1:1.25",
      "2:2.75",
    ]);
    assertEquals(await db.rows("select id from audit"), ["3"]);
    assertEquals(await db.rows("select * from cc order by id"), ["1:1", "2:1"]);
  },
});

Deno.test({
  // Sent: `update a set v = 7 where id = 1` while a second session of the
  // tester's holds row 1 (an uncommitted `update a set v = v where id =
  // 1`), committed 300 ms later. Under READ COMMITTED the write would wait
  // and then run. Happened: `ERR query_failed: could not serialize access
  // due to concurrent update [SQLSTATE 40001]` (documented: a judged write
  // runs in REPEATABLE READ). Breakage, not a leak: an ordinary one-row
  // UPDATE of a busy row now fails where it ran before; the client must
  // retry. Held as it stands (no hang, nothing written).
  name:
    "postgres: a one-row UPDATE waiting on another session's committed change of the same row fails with a serialization error (REPEATABLE READ), it does not hang",
  ignore: pg,
  async fn() {
    await using db = await pgOwn(`
      create table a (id int primary key, v int);
      insert into a values (1, 1), (2, 2);`);
    await using other = await db.session();
    await other.unsafe("begin");
    await other.unsafe("update a set v = v where id = 1");
    const answer = db.write("update a set v = 7 where id = 1");
    await pause(300);
    await other.unsafe("commit");
    const out = await answer;
    assert(out.includes("could not serialize access"), out);
    assertEquals(await db.rows("select v from a where id = 1"), ["1"]);
  },
});

// SQLite -------------------------------------------------------------------

Deno.test({
  name:
    "sqlite: trigger bodies with backquoted, quoted and bracketed names, a WHEN clause and a subquery, an INSTEAD OF trigger on a view, and an UPDATE whose ON CONFLICT REPLACE key fires a DELETE trigger are asked; a plain INSERT replacing a row of such a key fires no DELETE trigger (recursive triggers off); the rows stay",
  async fn() {
    await using db = await liteOwn(`
      create table p (id integer primary key on conflict replace, v int);
      insert into p values (1, 1), (2, 2);
      create table c (id integer primary key, v int);
      insert into c values (1, 1), (2, 2), (3, 3);
      create trigger trp after delete on p begin delete from c; end;
      create table c2 (id integer primary key, v int);
      insert into c2 values (1, 1), (2, 2), (3, 3);
      create table l2 (id int);
      create trigger tr2 after insert on l2 begin delete from \`c2\`; end;
      create table c3 (id integer primary key, v int);
      insert into c3 values (1, 1), (2, 2), (3, 3);
      create table l3 (id int);
      create trigger tr3 after insert on l3 when new.id > 0
        begin delete from "c3" where id in (select id from c3); end;
      create table c4 (id integer primary key, v int);
      insert into c4 values (1, 1), (2, 2), (3, 3);
      create view v4 as select id from c4;
      create trigger tr4 instead of insert on v4 begin delete from [c4]; end;
      create table p5 (id integer primary key on conflict replace, v int);
      insert into p5 values (1, 1), (2, 2);
      create table c5 (id integer primary key, v int);
      insert into c5 values (1, 1), (2, 2), (3, 3);
      create trigger trp5 after delete on p5 begin delete from c5; end;`);
    const asked = [
      "insert into l2 values (1)",
      "insert into l3 values (1)",
      "insert into v4 values (1)",
      "update p5 set id = 2 where id = 1",
    ];
    assertEquals(await outcomes(db.write, asked), all(asked, "asked"));
    assertEquals(await db.write("insert into p values (1, 9)"), "ran");
    for (const table of ["c", "c2", "c3", "c4", "c5"]) {
      assertEquals(db.rows(`select id from ${table} order by id`), [
        "1",
        "2",
        "3",
      ]);
    }
    assertEquals(db.rows("select * from p order by id"), ["1:9", "2:2"]);
  },
});
