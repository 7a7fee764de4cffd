/**
 * Outsider stop 63, MariaDB and both engines (PostgreSQL in
 * tests/db/outsider_stop63_pg_test.ts): attacks on "Every row, by effect" after 15d367f (CREATE
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

import { assert, assertEquals } from "@std/assert";
import { needs } from "../_db.ts";
import { all, everyRow, outcomes } from "../_every_row_harness.ts";

const { pgOwn, myDatabase } = everyRow({ tag: "attack63", name: "Stop63" });

const my = needs("mysql").ignore;

const THREE = ["1", "2", "3"];

// MariaDB ------------------------------------------------------------------

/** k (3 rows), views v (no rows) and v2 (all), a trigger on log reading v. */
const MY_VIEW_TRIGGER = `
  create table k (id int primary key, v int) engine=InnoDB;
  insert into k values (1, 1), (2, 2), (3, 3);
  create view v as select id from k where false;
  create view v2 as select id from k;
  create table log (id int) engine=InnoDB;
  create trigger tr after insert on log for each row
    delete from k where id in (select id from v);`;

Deno.test({
  name:
    "mysql: CREATE OR REPLACE VIEW and ALTER VIEW ... AS spelled with comments, ALGORITHM, DEFINER and SQL SECURITY are asked",
  ignore: my,
  async fn() {
    await using db = await myDatabase(MY_VIEW_TRIGGER);
    const asked = [
      "create /*x*/ or /*y*/ replace view v as select id from k",
      "create or replace algorithm=merge definer=current_user sql security invoker view v as select id from k",
      "create or replace definer=`root`@`localhost` view v as select id from k",
      "alter definer=current_user view v as select id from k",
      "alter algorithm = undefined view v as select id from k",
      "alter sql security invoker view v as select id from k",
      "alter view `v` (id) as select id from k",
      "alter view v as select id from k with cascaded check option",
      "create or replace view `v` as select id from k",
    ];
    assertEquals(await outcomes(db.write, asked), all(asked, "asked"));
    await db.root("insert into log values (1)");
    assertEquals(await db.rows("select id from k order by id"), THREE);
  },
});

Deno.test({
  // LEAK (severe). Happened: both ran; every table of the database is
  // gone (information_schema counts 0). The classifier's replacesTable
  // reads only TABLE after OR REPLACE; DATABASE|SCHEMA is not destructive.
  // Sent: `create or replace database <the connection's database>`.
  // Should: refused to a readWrite token, as DROP DATABASE and CREATE OR
  // REPLACE TABLE are (MariaDB drops the database, every table of it).
  name:
    "mysql: CREATE OR REPLACE DATABASE of the connection's own database drops every table",
  ignore: my,
  async fn() {
    await using db = await myDatabase(`
      create table k (id int primary key, v int) engine=InnoDB;
      insert into k values (1, 1), (2, 2), (3, 3);`);
    const [name] = await db.rows("select database()");
    const out = await outcomes(db.write, [
      `create or replace database ${name}`,
      `create or replace schema /*x*/ ${name}`,
    ]);
    assertEquals(
      await db.rows(
        `select count(*) from information_schema.tables where table_schema = '${name}'`,
      ),
      ["1"],
      JSON.stringify(out),
    );
  },
});

/** Parent p (rows 1, 2), child c with two rows of pid 1, ON UPDATE CASCADE. */
const MY_CASCADE = `
  create table p (id int primary key, v int) engine=InnoDB;
  insert into p values (1, 1), (2, 2);
  create table c (id int primary key, pid int,
    foreign key (pid) references p (id) on update cascade) engine=InnoDB;
  insert into c values (1, 1), (2, 1);`;

/** Each odd spelling of a BEFORE UPDATE trigger changing NEW.id. */
const NEW_SETTERS: Record<string, string> = {
  "set new.id := ...":
    "create trigger tk before update on p for each row set new.id := new.id + 100",
  "set @x = 1, new.id = ...":
    "create trigger tk before update on p for each row set @x = 1, new.id = new.id + 100",
  "nested BEGIN and IF":
    "create trigger tk before update on p for each row begin begin if true then set new.id = new.id + 100; end if; end; end",
  "CASE":
    "create trigger tk before update on p for each row case when new.v > 0 then set new.id = new.id + 100; else begin end; end case",
  "CALL with an OUT parameter":
    "create trigger tk before update on p for each row call bump(new.id)",
  "label and `NEW`.id":
    "create trigger tk before update on p for each row lbl: begin set `new`.id = new.id + 100; end lbl",
  "SET NEW . id with spaces":
    "create trigger tk before update on p for each row set NEW . id = NEW.id + 100",
};

/**
 * Fixed at stop 63: MariaDB takes a backquoted `new` for the NEW row;
 * setsNew read only the word NEW. Sent: `update p set v = 9 where id = 1` with trigger
 * `... lbl: begin set \`new\`.id = new.id + 100; end lbl`. Should: asked.
 * Happened: both writes ran; c's two rows went from pid 1 to pid 101.
 */
const LEAKING_SETTERS = new Set<string>();

for (const [spelled, trigger] of Object.entries(NEW_SETTERS)) {
  Deno.test({
    name:
      `mysql: a BEFORE UPDATE trigger that changes NEW.id by ${spelled} makes a non-key UPDATE of the parent asked (ON UPDATE CASCADE)`,
    ignore: my || LEAKING_SETTERS.has(spelled),
    async fn() {
      await using db = await myDatabase(MY_CASCADE);
      await db.root(
        "create procedure bump(inout x int) set x = x + 100",
      );
      await db.root(trigger);
      const asked = [
        "update p set v = 9 where id = 1",
        "insert into p values (1, 0) on duplicate key update v = 9",
      ];
      const out = await outcomes(db.write, asked);
      assertEquals(await db.rows("select * from c order by id"), [
        "1:1",
        "2:1",
      ], JSON.stringify(out));
      assertEquals(out, all(asked, "asked"));
    },
  });
}

Deno.test({
  name:
    "mysql: ordinary statements run unasked: a new view, CREATE TEMPORARY TABLE, RENAME TABLE of a table, ALTER TABLE ... RENAME TO, CREATE TABLE ... SELECT, ADD COLUMN change, ADD COLUMN IF NOT EXISTS modify, ALTER TABLE ... RENAME COLUMN, CREATE VIEW IF NOT EXISTS",
  ignore: my,
  async fn() {
    await using db = await myDatabase(`
      create table a (id int primary key, v int) engine=InnoDB;
      insert into a values (1, 1), (2, 2);`);
    const ran = [
      "create view vnew as select id from a",
      "create temporary table tt (id int)",
      "rename table a to a2",
      "alter table a2 rename to a3",
      "create table c2 as select * from a3",
      "alter table a3 add column `change` int",
      "alter table a3 add column if not exists modify int",
      "alter table a3 rename column v to v2",
      "create view if not exists vnew2 as select 1",
    ];
    assertEquals(await outcomes(db.write, ran), all(ran, "ran"));
  },
});

Deno.test({
  name:
    "mysql: CREATE OR REPLACE TABLE spelled with comments, a qualified or quoted name, LIKE, SELECT or an executable comment is not run",
  ignore: my,
  async fn() {
    await using db = await myDatabase(`
      create table k (id int primary key, v int) engine=InnoDB;
      insert into k values (1, 1), (2, 2), (3, 3);
      create table k2 (id int primary key, v int) engine=InnoDB;`);
    const [name] = await db.rows("select database()");
    const steps = [
      "create /*x*/ or /*y*/ replace table k (id int)",
      "create -- x\n or replace table k (id int)",
      `create or replace table ${name}.k (id int)`,
      "create or replace table `k` like k2",
      "create or replace table k select 1 as id",
      "create or replace table k (id int) select 1 as id",
      "/*!100000 create or replace table k (id int) */",
      "/*M!100000 create or replace */ table k (id int)",
      "create /*!100000 or replace */ table k (id int)",
    ];
    const out = await outcomes(db.write, steps);
    assertEquals(
      Object.entries(out).filter(([, what]) => what === "ran"),
      [],
    );
    assertEquals(await db.rows("select id from k order by id"), THREE);
  },
});

Deno.test({
  // Breakage, not a leak (asked or refused by words, whether or not the
  // object exists). Sent: `create or replace view vnew as select 1` (no
  // vnew yet, PostgreSQL and MariaDB); `create or replace table tnew (id
  // int)` and `create or replace temporary table tt (id int)` (no such
  // table, MariaDB). Should: ran (nothing exists to replace; a temporary
  // table is the session's own). Happened: the views asked; both tables
  // refused ("ERR denied: this statement drops or truncates data").
  name:
    "postgres and mysql (by design: words alone): CREATE OR REPLACE of a view or table that does not exist yet is asked or refused",
  // Reported as false asks: dbport judges OR REPLACE by its words, not by
  // whether the object exists; asserted as it is.
  ignore: my || needs("postgres").ignore,
  async fn() {
    await using pgDb = await pgOwn("create table a (id int);");
    assertEquals(
      await pgDb.write("create or replace view vnew as select 1 as x"),
      "asked",
    );
    await using myDb = await myDatabase("create table a (id int);");
    assertEquals(
      await myDb.write("create or replace view vnew as select 1 as x"),
      "asked",
    );
    for (
      const sql of [
        "create or replace table tnew (id int)",
        "create or replace temporary table tt (id int)",
      ]
    ) {
      const answer = await myDb.write(sql);
      assert(answer !== "ran" && answer !== "asked", `${sql}: ${answer}`);
    }
  },
});

Deno.test({
  name:
    "mysql: a trigger spelled `set /*c*/ NEW.id = ...` is read through multi-table UPDATE, JOIN, ORDER BY ... LIMIT and LOW_PRIORITY IGNORE: each non-key UPDATE of the parent is asked",
  ignore: my,
  async fn() {
    await using db = await myDatabase(
      MY_CASCADE + `
      create table q (id int primary key) engine=InnoDB;
      insert into q values (1);
      create trigger tk before update on p for each row
        set /*c*/ NEW.id = NEW.id + 100;`,
    );
    const asked = [
      "update q, p set p.v = 9 where p.id = 1 and q.id = 1",
      "update p join q on p.id = q.id set p.v = 9",
      "update p set v = 9 where id = 1 order by id limit 1",
      "update low_priority ignore p set v = 9 where id = 1",
    ];
    assertEquals(await outcomes(db.write, asked), all(asked, "asked"));
    assertEquals(await db.rows("select * from c order by id"), ["1:1", "2:1"]);
  },
});
