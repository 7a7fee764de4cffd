/**
 * What a MariaDB or SQLite write sets off beyond its own table is judged
 * like its own rows (lib/db/every_row_effects.ts; docs/security.md "Every
 * row, by effect"), through the MCP endpoint as
 * tests/db/every_row_approval_test.ts does (execute_query, a readWrite
 * token, Safe Mode silent, approvals cut at 1 s: an asked write answers
 * `ERR user_cancelled` and the rows stay). Outsider stops 59 and 60 left
 * these open: a cascade two levels deep, ON DELETE SET NULL and ON UPDATE
 * CASCADE children (MariaDB), and an existing trigger that empties another
 * table (MariaDB and SQLite). Writes that pick their rows still run.
 *
 * @module
 */

import { assertEquals } from "@std/assert";
import { needs } from "../_db.ts";
import { all, everyRow, outcomes } from "../_every_row_harness.ts";

const { myOwn, liteOwn } = everyRow({
  tag: "cascade",
  name: "Cascade",
  cut: 160,
});

type MyDb = Awaited<ReturnType<typeof myOwn>> & {
  /** A table's rows as "id:col" strings, by id. */
  rows(table: string, col?: string): Promise<string[]>;
};

/** A MariaDB test on tables of its own (`cascade_<id>_...`) in `test`. */
function myTest(name: string, fn: (db: MyDb, p: string) => Promise<void>) {
  const { ignore } = needs("mysql");
  Deno.test({
    name,
    ignore,
    async fn() {
      await using db = await myOwn();
      const rows = (table: string, col = "id") =>
        db.rows(`select id, ${col} as c from $p_${table} order by id`);
      await fn({ ...db, rows }, db.prefix);
    },
  });
}

/** `parent -> child -> grandchild`, each key `rule` of its parent. */
function chain(p: string, name: string, rule: string, gc: string): string {
  return `
    create table ${p}_${name}p (id int primary key, v int) engine=InnoDB;
    insert into ${p}_${name}p values (1, 1), (2, 2);
    create table ${p}_${name}c (id int primary key, pid int,
      foreign key (pid) references ${p}_${name}p (id) ${rule}) engine=InnoDB;
    insert into ${p}_${name}c values (1, 1), (2, 2);
    create table ${p}_${name}g (id int primary key, cid int,
      foreign key (cid) references ${p}_${name}c (id) ${rule}) engine=InnoDB;
    insert into ${p}_${name}g values ${gc};`;
}

myTest(
  "mysql: a DELETE whose ON DELETE CASCADE empties a grandchild is asked about and rolled back; one whose grandchildren keep rows runs",
  async (db, p) => {
    await db.root(
      chain(p, "a", "on delete cascade", "(1, 1), (2, 1)") +
        chain(p, "b", "on delete cascade", "(1, 1), (2, 2)"),
    );
    const asked = [`delete from ${p}_ap where id = 1`];
    assertEquals(await outcomes(db.write, asked), all(asked, "asked"));
    assertEquals(await db.rows("ap", "v"), ["1:1", "2:2"]);
    assertEquals(await db.rows("ac", "pid"), ["1:1", "2:2"]);
    assertEquals(await db.rows("ag", "cid"), ["1:1", "2:1"]);
    const ran = [`delete from ${p}_bp where id = 1`];
    assertEquals(await outcomes(db.write, ran), all(ran, "ran"));
    assertEquals(await db.rows("bg", "cid"), ["2:2"]);
  },
);

myTest(
  "mysql: foreign keys that reach more tables than dbport follows (21 CASCADE children) are asked about before the write runs",
  async (db, p) => {
    let sql = `create table ${p}_k0 (id int primary key) engine=InnoDB;
      insert into ${p}_k0 values (1), (2);`;
    for (let i = 1; i <= 21; i++) {
      sql += `create table ${p}_k${i} (id int primary key, pid int,
        foreign key (pid) references ${p}_k0 (id) on delete cascade)
        engine=InnoDB; insert into ${p}_k${i} values (1, 1), (2, 2);`;
    }
    await db.root(sql);
    const asked = [`delete from ${p}_k0 where id = 1`];
    assertEquals(await outcomes(db.write, asked), all(asked, "asked"));
    assertEquals(await db.rows("k21", "pid"), ["1:1", "2:2"]);
  },
);

myTest(
  "mysql: ON DELETE SET NULL that nulls every child row, and ON UPDATE CASCADE or SET NULL of a changed key, are asked about; writes that leave child rows or keys alone run",
  async (db, p) => {
    await db.root(`
      create table ${p}_np (id int primary key, v int) engine=InnoDB;
      insert into ${p}_np values (1, 1), (2, 2);
      create table ${p}_nc (id int primary key, pid int null,
        foreign key (pid) references ${p}_np (id) on delete set null
        on update set null) engine=InnoDB;
      insert into ${p}_nc values (1, 1), (2, 1);
      create table ${p}_up (id int primary key, v int) engine=InnoDB;
      insert into ${p}_up values (1, 1), (2, 2);
      create table ${p}_uc (id int primary key, pid int,
        foreign key (pid) references ${p}_up (id) on update cascade)
        engine=InnoDB;
      insert into ${p}_uc values (1, 1), (2, 1);
      create table ${p}_mp (id int primary key) engine=InnoDB;
      insert into ${p}_mp values (1), (2);
      create table ${p}_mc (id int primary key, pid int null,
        foreign key (pid) references ${p}_mp (id) on delete set null)
        engine=InnoDB;
      insert into ${p}_mc values (1, 1), (2, 2);`);
    const asked = [
      `delete from ${p}_np where id = 1`,
      `update ${p}_np set id = 10 where id = 1`,
      `update ${p}_up set id = 10 where id = 1`,
    ];
    assertEquals(await outcomes(db.write, asked), all(asked, "asked"));
    assertEquals(await db.rows("nc", "pid"), ["1:1", "2:1"]);
    assertEquals(await db.rows("uc", "pid"), ["1:1", "2:1"]);
    const ran = [
      `delete from ${p}_mp where id = 1`,
      `update ${p}_up set v = 5 where id = 1`,
      `update ${p}_np set v = 5 where id = 1`,
    ];
    assertEquals(await outcomes(db.write, ran), all(ran, "ran"));
    assertEquals(await db.rows("mc", "pid"), ["1:null", "2:2"]);
    assertEquals(await db.rows("up", "v"), ["1:5", "2:2"]);
  },
);

myTest(
  "mysql: an INSERT whose existing trigger empties or updates another table is asked about and rolled back; one whose trigger only inserts into a log, or deletes one row, runs",
  async (db, p) => {
    await db.root(`
      create table ${p}_t (id int primary key, v int) engine=InnoDB;
      insert into ${p}_t values (1, 1), (2, 2), (3, 3);
      create table ${p}_log (id int) engine=InnoDB;
      create trigger ${p}_tr after insert on ${p}_log
        for each row delete from ${p}_t;
      create table ${p}_log2 (id int) engine=InnoDB;
      create trigger ${p}_tr2 before insert on ${p}_log2
        for each row update ${p}_t set v = v + 1;
      create table ${p}_audit (id int) engine=InnoDB;
      create table ${p}_log3 (id int) engine=InnoDB;
      create trigger ${p}_tr3 after insert on ${p}_log3
        for each row begin insert into ${p}_audit values (new.id); end;
      create table ${p}_log4 (id int) engine=InnoDB;
      create trigger ${p}_tr4 after insert on ${p}_log4
        for each row delete from ${p}_t where id = new.id;`);
    const asked = [
      `insert into ${p}_log values (1)`,
      `insert into ${p}_log2 values (1)`,
    ];
    assertEquals(await outcomes(db.write, asked), all(asked, "asked"));
    assertEquals(await db.rows("t", "v"), ["1:1", "2:2", "3:3"]);
    const ran = [
      `insert into ${p}_log3 values (7)`,
      `insert into ${p}_log4 values (3)`,
    ];
    assertEquals(await outcomes(db.write, ran), all(ran, "ran"));
    assertEquals(await db.rows("audit", "id"), ["7:7"]);
    assertEquals(await db.rows("t", "v"), ["1:1", "2:2"]);
  },
);

Deno.test({
  name:
    "sqlite: an INSERT whose existing trigger empties or updates another table, and a DELETE of one row whose trigger empties its own table, are asked about and rolled back; an INSERT whose trigger only inserts into a log runs",
  async fn() {
    await using lite = await liteOwn(`
      create table t (id integer primary key, v int);
      insert into t values (1, 1), (2, 2), (3, 3);
      create table log (id int);
      create trigger tr after insert on log begin delete from t; end;
      create table log2 (id int);
      create trigger tr2 after insert on log2 begin update t set v = v + 1; end;
      create table audit (id int);
      create table log3 (id int);
      create trigger tr3 after insert on log3
        begin insert into audit values (new.id); end;
      create table r (id integer primary key, v int);
      insert into r values (1, 1), (2, 2), (3, 3);
      create trigger trr after delete on r begin delete from r; end;`);
    const rows = (table: string) =>
      lite.rows(`select * from ${table} order by 1`);
    const asked = [
      "insert into log values (1)",
      "insert into log2 values (1)",
    ];
    assertEquals(await outcomes(lite.write, asked), all(asked, "asked"));
    assertEquals(rows("t"), ["1:1", "2:2", "3:3"]);
    assertEquals(rows("r"), ["1:1", "2:2", "3:3"]);
    const ran = ["insert into log3 values (7)"];
    assertEquals(await outcomes(lite.write, ran), all(ran, "ran"));
    assertEquals(rows("audit"), ["7"]);
  },
});
