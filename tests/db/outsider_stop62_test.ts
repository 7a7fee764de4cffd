/**
 * Outsider stop 62 (MariaDB; PostgreSQL and SQLite in
 * tests/db/outsider_stop62_pg_test.ts): attacks on "Every row, by effect"
 * after e8f529b (column type changes and CREATE OR REPLACE of routines asked
 * by their words, MariaDB and SQLite foreign-key actions and triggers
 * counted, REPEATABLE READ for a judged PostgreSQL write, MariaDB's
 * fewer-of-two counts), through the MCP endpoint (readWrite token, Safe Mode
 * silent, approvals cut at 1 s: asked = ERR user_cancelled, nothing
 * changed). Each test's comment says what was sent, what should happen and
 * what happened at the attack; the leaks found are fixed ("fixed at stop
 * 62"). Two are left out and named in docs/security.md: a MariaDB column
 * swap by RENAME COLUMN (renames are schema changes, not judged), and a
 * plain CREATE PROCEDURE of a name an existing (failing) trigger calls.
 *
 * @module
 */

import { assert, assertEquals } from "@std/assert";
import { needs } from "../_db.ts";
import { all, everyRow, outcomes } from "../_every_row_harness.ts";

const { myDatabase } = everyRow({ tag: "attack62", name: "Stop62" });

const my = needs("mysql").ignore;

// MariaDB ------------------------------------------------------------------

/** A parent `p` (rows 1, 2) and child `c` whose two rows both reference 1. */
const ON_UPDATE_CASCADE = (p: string, c: string) => `
  create table ${p} (id int primary key, v int) engine=InnoDB;
  insert into ${p} values (1, 1), (2, 2);
  create table ${c} (id int primary key, pid int,
    foreign key (pid) references ${p} (id) on update cascade) engine=InnoDB;
  insert into ${c} values (1, 1), (2, 1);`;

Deno.test({
  // Sent: an existing `before update on p for each row set new.id =
  // new.id + 100` (a key normalised by a trigger), then `update p set v = 9
  // where id = 1`. Should: asked (the trigger changes the key, and ON
  // UPDATE CASCADE rewrites every row of c). Happened: ran; c's two rows
  // went from pid 1 to pid 101. setColumns reads only the statement's SET
  // (v), so the reference is not "touched"; the trigger body has no
  // UPDATE/DELETE word, so it is not asked about either.
  name:
    "mysql: a BEFORE UPDATE trigger that sets NEW.id sets off ON UPDATE CASCADE on every child row unasked (fixed at stop 62)",
  ignore: my,
  async fn() {
    await using db = await myDatabase(
      ON_UPDATE_CASCADE("p", "c") +
        "create trigger trk before update on p for each row set new.id = new.id + 100;",
    );
    assertEquals(await db.write("update p set v = 9 where id = 1"), "asked");
    assertEquals(await db.rows("select * from c order by id"), ["1:1", "2:1"]);
  },
});

Deno.test({
  // Sent: `update p set id = id + 100 where id = 1 and exists (select 1
  // from q for update)`. Should: asked, as `update p set id = id + 100
  // where id = 1` is (ON UPDATE CASCADE of a key it changes). Happened:
  // ran; both rows of c re-keyed to 101. setColumns reads the columns after
  // the LAST word UPDATE (the subquery's FOR UPDATE), finds no SET after
  // it, and reads no columns: no reference is touched.
  name:
    "mysql: an UPDATE of a key with a FOR UPDATE subquery hides the key from setColumns and ON UPDATE CASCADE runs unasked (fixed at stop 62)",
  ignore: my,
  async fn() {
    await using db = await myDatabase(
      ON_UPDATE_CASCADE("p", "c") +
        "create table q (id int primary key) engine=InnoDB; insert into q values (1);",
    );
    assertEquals(
      await db.write(
        "update p set id = id + 100 where id = 1 and exists (select 1 from q for update)",
      ),
      "asked",
    );
    assertEquals(await db.rows("select * from c order by id"), ["1:1", "2:1"]);
  },
});

Deno.test({
  // Sent: `create or replace table r (id int primary key, v int)` on a
  // table r of 2 rows. Should: asked (MariaDB drops r and makes it anew:
  // every row is gone), as DROP TABLE is. Happened: ran; r is empty.
  name:
    "mysql: CREATE OR REPLACE TABLE of an existing table empties it unasked (fixed at stop 62)",
  ignore: my,
  async fn() {
    await using db = await myDatabase(`
      create table r (id int primary key, v int) engine=InnoDB;
      insert into r values (1, 1), (2, 2);`);
    // Destructive now, as DROP TABLE: a readWrite token is refused.
    const answer = await db.write(
      "create or replace table r (id int primary key, v int)",
    );
    assert(answer.startsWith("ERR"), answer);
    assertEquals(await db.rows("select * from r order by id"), ["1:1", "2:2"]);
  },
});

Deno.test({
  name:
    "mysql: column type changes written oddly (comments, backquotes, ONLINE, ALGORITHM=COPY, LOCK=NONE, CHANGE) are asked; an executable comment is refused; the values stay",
  ignore: my,
  async fn() {
    await using db = await myDatabase(`
      create table t (id int primary key, v decimal(10,2)) engine=InnoDB;
      insert into t values (1, 1.25), (2, 2.75);`);
    const asked = [
      "alter online table t modify v decimal(5,0)",
      "alter table t algorithm=copy, modify v decimal(5,0)",
      "alter table t lock = none, change v v decimal(5,0)",
      "alter /* x */ table /* y */ t /* z */ modify /* w */ v decimal(5,0)",
      "alter table `t` modify `v` decimal(5,0)",
      "alter table t modify column if exists v decimal(5,0)",
    ];
    assertEquals(await outcomes(db.write, asked), all(asked, "asked"));
    const refused = await db.write(
      "alter table t /*M!100000 modify v decimal(5,0) */",
    );
    assert(refused.startsWith("ERR denied"), refused);
    assertEquals(await db.rows("select * from t order by id"), [
      "1:1.25",
      "2:2.75",
    ]);
  },
});

Deno.test({
  name:
    "mysql: an upsert hiding its key behind CHARACTER SET, a REPLACE whose children cascade, trigger bodies with labels, nested blocks, QUICK IGNORE and backquotes, a trigger emptying a view, and a schema-qualified DELETE are asked; the rows stay",
  ignore: my,
  async fn() {
    await using db = await myDatabase(
      ON_UPDATE_CASCADE("p3", "c3") + `
      create table rp (id int primary key, v int) engine=InnoDB;
      insert into rp values (1, 1), (2, 2);
      create table rc (id int primary key, pid int,
        foreign key (pid) references rp (id) on delete cascade) engine=InnoDB;
      insert into rc values (1, 1), (2, 1);
      create table k2 (id int primary key, v int) engine=InnoDB;
      insert into k2 values (1, 1), (2, 2), (3, 3);
      create table log2 (id int) engine=InnoDB;
      create trigger tl2 after insert on log2 for each row lbl: begin begin
        if new.id > 0 then delete quick ignore from \`k2\` where id > 0; end if;
      end; end lbl;
      create table k3 (id int primary key, v int) engine=InnoDB;
      insert into k3 values (1, 1), (2, 2), (3, 3);
      create view v3 as select * from k3;
      create table log3 (id int) engine=InnoDB;
      create trigger tl3 after insert on log3 for each row delete from v3;`,
    );
    const [name] = await db.rows("select database()");
    const asked = [
      "insert into p3 values (1, 0) on duplicate key update v = cast('1' as char character set utf8mb4), id = id + 100",
      "replace into rp values (1, 9)",
      "insert into log2 values (1)",
      "insert into log3 values (1)",
      `delete from ${name}.k2 where id > 0 and id < 100`,
    ];
    assertEquals(await outcomes(db.write, asked), all(asked, "asked"));
    assertEquals(await db.rows("select * from c3 order by id"), ["1:1", "2:1"]);
    assertEquals(await db.rows("select * from rc order by id"), ["1:1", "2:1"]);
    assertEquals(await db.rows("select id from k2 order by id"), [
      "1",
      "2",
      "3",
    ]);
    assertEquals(await db.rows("select id from k3 order by id"), [
      "1",
      "2",
      "3",
    ]);
  },
});

Deno.test({
  name:
    "mysql: ordinary writes still run unasked: ADD COLUMN, SET DEFAULT, CREATE PROCEDURE, an INSERT with an audit trigger, a non-key UPDATE of one row of a parent with ON UPDATE CASCADE children",
  ignore: my,
  async fn() {
    await using db = await myDatabase(
      ON_UPDATE_CASCADE("p", "c") + `
      create table a (id int primary key, v int) engine=InnoDB;
      insert into a values (1, 1), (2, 2);
      create table audit (id int) engine=InnoDB;
      create trigger ta after insert on a for each row insert into audit values (new.id);`,
    );
    const ran = [
      "alter table a add column x int",
      "alter table a alter column v set default 3",
      "create procedure pp() select 1",
      "insert into a (id, v) values (3, 3)",
      "update p set v = 5 where id = 1",
    ];
    assertEquals(await outcomes(db.write, ran), all(ran, "ran"));
    assertEquals(await db.rows("select id from audit"), ["3"]);
    assertEquals(await db.rows("select * from c order by id"), ["1:1", "2:1"]);
  },
});

Deno.test({
  // Sent: `alter table r add column modify int` (MODIFY is not reserved in
  // MariaDB: a column may be named so). Should: ran (ADD COLUMN keeps every
  // value). Happened: asked, "it changes the type of column int of r":
  // myRetyped takes any top-level word MODIFY for the subcommand.
  name:
    "mysql: ADD COLUMN of a column named modify is asked as a type change (fixed at stop 62)",
  ignore: my,
  async fn() {
    await using db = await myDatabase(
      "create table r (id int primary key, v int) engine=InnoDB;",
    );
    assertEquals(await db.write("alter table r add column modify int"), "ran");
  },
});

Deno.test({
  // Cost: a silent single-row UPDATE, INSERT and DELETE on MariaDB, on a
  // schema of 2 tables and one of 301 (150 parent/child pairs with ON
  // DELETE CASCADE): the judgment reads information_schema (TRIGGERS,
  // REFERENTIAL_CONSTRAINTS) per write. Measured at the attack (ms per call
  // through the MCP endpoint, 20 calls each): 2 tables UPDATE 17.7 / INSERT
  // 7.8 / DELETE 12.7, again 46.8 / 15.1 / 39.8 (shared server, noisy);
  // 301 tables UPDATE 23.1 / INSERT 13.9 / DELETE 24.8. No cost beyond the
  // noise was seen at 300 tables.
  name:
    "mysql: a silent single-row UPDATE, INSERT and DELETE on a schema of 301 tables run unasked (their cost is in the comment, not asserted)",
  ignore: my,
  async fn() {
    let setup = `create table t (id int primary key, v int) engine=InnoDB;
      insert into t values (1, 1), (2, 2), (3, 3);`;
    for (let i = 0; i < 300; i += 2) {
      setup += `create table p${i} (id int primary key, v int) engine=InnoDB;
        create table c${i} (id int primary key, pid int, foreign key (pid)
          references p${i} (id) on delete cascade) engine=InnoDB;`;
    }
    await using db = await myDatabase(setup);
    for (let i = 0; i < 5; i++) {
      assertEquals(
        await db.write("update t set v = v + 1 where id = 1"),
        "ran",
      );
      assertEquals(
        await db.write(`insert into t values (${100 + i}, 1)`),
        "ran",
      );
      assertEquals(
        await db.write(`delete from t where id = ${100 + i}`),
        "ran",
      );
    }
    assertEquals(await db.rows("select id from t order by id"), [
      "1",
      "2",
      "3",
    ]);
  },
});
