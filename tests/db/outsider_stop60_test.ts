/**
 * Outsider stop 60: the every-row judgment's newest parts (MariaDB writes
 * judged before they run, ON DELETE CASCADE children, standing code asked by
 * its words, PostgreSQL's ALTER ... TYPE ... USING), attacked through the MCP
 * endpoint as tests/db/every_row_approval_test.ts does (execute_query, a
 * readWrite token, Safe Mode silent, approvals cut at 1 s: an asked write
 * answers `ERR user_cancelled`). "held:" held at the attack; "held (fixed:
 * ...)" leaked and is fixed. Six findings are not fixed this stop and their
 * tests are left out (the suite skips nothing); each is in docs/security.md
 * "Every row, by effect" and the closing note: a cascade two levels deep,
 * ON DELETE SET NULL and ON UPDATE CASCADE children (MariaDB); a column
 * type change that rounds every row (MariaDB MODIFY, PostgreSQL TYPE
 * without USING); CREATE OR REPLACE PROCEDURE of a procedure an existing
 * event calls. The last two are fixed since (tests/db/typechange_test.ts).
 *
 * @module
 */

import { assertEquals } from "@std/assert";
import postgres from "postgres";
import mysql from "mysql2/promise";
import { MYSQL_URL, needs, POSTGRES_URL } from "../_db.ts";
import { said } from "../_outsider.ts";
import { savedConnection, serverWith } from "../_connections.ts";
import { callTool } from "../_tool_call.ts";
import type { Engine } from "../../lib/db/types.ts";

const ASKED = "ERR user_cancelled";

/** A readWrite token (Safe Mode silent) on `url`; approvals cut at 1 s. */
async function writer(engine: Engine, url: string) {
  const saved = savedConnection({ engine, url }, "Stop60", {
    externalAccess: "readWrite",
    safeMode: "silent",
  });
  const server = await serverWith([saved], { approvalTimeoutSeconds: 1 });
  const token = (await server.mint("readWrite")).plaintext;
  const write = async (query: string) =>
    said(
      await callTool(server, "execute_query", {
        connection_id: saved.id,
        query,
        max_rows: 50,
      }, { authorization: `Bearer ${token}` }),
    );
  return { server, write };
}

/** "asked", "ran", or the start of any other answer. */
async function outcome(
  write: (query: string) => Promise<string>,
  query: string,
): Promise<string> {
  const answer = await write(query);
  return answer.startsWith(ASKED)
    ? "asked"
    : answer.startsWith("OK")
    ? "ran"
    : answer.slice(0, 160);
}

/** MariaDB objects of the test's own (`<prefix>_...`) in `test`. */
async function myOwn() {
  const prefix = `attack60_${crypto.randomUUID().slice(0, 8)}`;
  const { server, write } = await writer("mysql", MYSQL_URL);
  const root = await mysql.createConnection({
    uri: MYSQL_URL,
    multipleStatements: true,
  });
  const list = async (sql: string) =>
    ((await root.query(sql, [`${prefix}%`]))[0] as { n: string }[]).map((r) =>
      r.n
    );
  return {
    prefix,
    write,
    root,
    /** `select id, <col>` of a table as "id:col" strings. */
    async rows(table: string, col = "id"): Promise<string[]> {
      const [rows] = await root.query(
        `select id, ${col} as c from ${table} order by id`,
      );
      return (rows as { id: number; c: unknown }[]).map((r) =>
        `${r.id}:${r.c}`
      );
    },
    async [Symbol.asyncDispose]() {
      await server[Symbol.asyncDispose]();
      try {
        for (
          const n of await list(
            "select event_name as n from information_schema.events where event_schema = 'test' and event_name like ?",
          )
        ) await root.query(`drop event if exists \`${n}\``);
        for (
          const n of await list(
            "select routine_name as n from information_schema.routines where routine_schema = 'test' and routine_type = 'FUNCTION' and routine_name like ?",
          )
        ) await root.query(`drop function if exists \`${n}\``);
        for (
          const n of await list(
            "select routine_name as n from information_schema.routines where routine_schema = 'test' and routine_type = 'PROCEDURE' and routine_name like ?",
          )
        ) await root.query(`drop procedure if exists \`${n}\``);
        for (
          const n of await list(
            "select table_name as n from information_schema.views where table_schema = 'test' and table_name like ?",
          )
        ) await root.query(`drop view if exists \`${n}\``);
        await root.query("set foreign_key_checks = 0");
        for (
          const n of await list(
            "select table_name as n from information_schema.tables where table_schema = 'test' and table_name like ?",
          )
        ) await root.query(`drop table if exists \`${n}\``);
        await root.query(`drop database if exists \`${prefix}_db\``);
      } finally {
        await root.end();
      }
    },
  };
}

/** A PostgreSQL database of the test's own. */
async function pgOwn() {
  const name = `attack60_${crypto.randomUUID().slice(0, 8)}`;
  const root = postgres(POSTGRES_URL, { max: 1, onnotice: () => {} });
  await root.unsafe(`create database ${name}`);
  const url = new URL(POSTGRES_URL);
  url.pathname = `/${name}`;
  const own = postgres(url.href, { max: 1, onnotice: () => {} });
  const { server, write } = await writer("postgres", url.href);
  return {
    write,
    sql: own,
    async [Symbol.asyncDispose]() {
      await server[Symbol.asyncDispose]();
      await own.end();
      await root.unsafe(`drop database if exists ${name} with (force)`);
      await root.end();
    },
  };
}

/** MariaDB fixtures: every attack's tables, made by root. */
async function myFixtures(db: Awaited<ReturnType<typeof myOwn>>) {
  const p = db.prefix;
  await db.root.query(`
    create table ${p}_t (id int primary key, v int) engine=InnoDB;
    insert into ${p}_t values (1, 1), (2, 2), (3, 3);
    create table ${p}_log (id int) engine=InnoDB;
    create table ${p}_log2 (id int) engine=InnoDB;
    create function ${p}_wipe() returns int modifies sql data
      begin delete from ${p}_t; return 1; end;
    create procedure ${p}_proc() begin end;
    create event ${p}_ev2 on schedule every 1 day
      starts current_timestamp + interval 1 day disable do call ${p}_proc();
    create table ${p}_pa (id int primary key) engine=InnoDB;
    insert into ${p}_pa values (1), (2);
    create table ${p}_ch (id int primary key, pid int,
      foreign key (pid) references ${p}_pa (id) on delete cascade) engine=InnoDB;
    insert into ${p}_ch values (1, 1), (2, 2);
    create table ${p}_gc (id int primary key, cid int,
      foreign key (cid) references ${p}_ch (id) on delete cascade) engine=InnoDB;
    insert into ${p}_gc values (1, 1), (2, 1);
    create table ${p}_pn (id int primary key) engine=InnoDB;
    insert into ${p}_pn values (1), (2);
    create table ${p}_sn (id int primary key, pid int null,
      foreign key (pid) references ${p}_pn (id) on delete set null) engine=InnoDB;
    insert into ${p}_sn values (1, 1), (2, 1);
    create table ${p}_pu (id int primary key) engine=InnoDB;
    insert into ${p}_pu values (1), (2);
    create table ${p}_cu (id int primary key, pid int,
      foreign key (pid) references ${p}_pu (id) on update cascade) engine=InnoDB;
    insert into ${p}_cu values (1, 1), (2, 1);
    create table ${p}_m (id int primary key, v int) engine=MyISAM;
    insert into ${p}_m values (1, 1), (2, 2), (3, 3);
    create view ${p}_vm as select * from ${p}_m;
    create table ${p}_pt (id int primary key) engine=InnoDB
      partition by range (id) (partition p0 values less than (100),
                               partition p1 values less than maxvalue);
    insert into ${p}_pt values (1);
    create table ${p}_ex (id int primary key) engine=InnoDB;
    insert into ${p}_ex values (5), (6);
    create table ${p}_d (id int primary key, v int) engine=InnoDB;
    insert into ${p}_d values (1, 1), (2, 1), (3, 1);
    create table ${p}_n (id int primary key, v decimal(6,2)) engine=InnoDB;
    insert into ${p}_n values (1, 1.40), (2, 2.60);
    create database ${p}_db;
    create table ${p}_db.m2 (id int primary key) engine=MEMORY;
    insert into ${p}_db.m2 values (1), (2);`);
}

/** Each statement's outcome ("asked", "ran", or the answer). */
async function outcomes(
  write: (query: string) => Promise<string>,
  steps: string[],
): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const step of steps) out[step] = await outcome(write, step);
  return out;
}

function expect(steps: string[], what: string): Record<string, string> {
  return Object.fromEntries(steps.map((step) => [step, what]));
}

type MyDb = Awaited<ReturnType<typeof myOwn>>;

/** A MariaDB test on fresh fixtures. */
function myTest(
  name: string,
  fn: (db: MyDb, p: string) => Promise<void>,
) {
  const { ignore } = needs("mysql");
  Deno.test({
    name,
    ignore,
    async fn() {
      await using db = await myOwn();
      await myFixtures(db);
      await fn(db, db.prefix);
    },
  });
}

/** PostgreSQL fixtures, made by the database's owner. */
const PG_FIXTURES = `
  create table t (id int primary key, n numeric(6,2));
  insert into t values (1, 1.4), (2, 2.6);
  create table u (id int primary key, v text);
  insert into u values (1, 'a'), (2, 'b');
  create table log (id int);
  create function noop() returns trigger language plpgsql as
    $$ begin return null; end $$;
  create trigger trg after insert on log for each row execute function noop();
  create function wipe_t() returns trigger language plpgsql as
    $$ begin delete from public.u where id > 0; return null; end $$;`;

type PgDb = Awaited<ReturnType<typeof pgOwn>>;

/** A PostgreSQL test on a fresh database. */
function pgTest(name: string, fn: (db: PgDb) => Promise<void>) {
  const { ignore } = needs("postgres");
  Deno.test({
    name,
    ignore,
    async fn() {
      await using db = await pgOwn();
      await db.sql.unsafe(PG_FIXTURES);
      await fn(db);
    },
  });
}

// ---- MariaDB ----

// Sent: `insert into log values (wipe())`, wipe() a stored function that runs
// `delete from t` (3 rows, InnoDB). Should: asked (as a SELECT or CALL of
// stored code is). Did: ran; t empty. Only SELECT/CALL/DO/SET/EXECUTE/VALUES/
// WITH are judged as calling code; an INSERT, UPDATE or DELETE may too.
myTest(
  "held (fixed: mysql_every_row.ts storedCall): mysql: INSERT ... VALUES (f()) whose stored function deletes every row of another table",
  async (db, p) => {
    const q = `insert into ${p}_log values (${p}_wipe())`;
    assertEquals(await outcomes(db.write, [q]), expect([q], "asked"));
    assertEquals(await db.rows(`${p}_t`), ["1:1", "2:2", "3:3"]);
  },
);

// Sent: `delete from vm where id > 0`, vm a view of MyISAM table m (3 rows).
// Should: asked before it runs, m kept (as `delete from m where id > 0` is).
// Did: answered ERR user_cancelled ("rolled back") but m is empty:
// untriable() skips anything not a BASE TABLE, so the view was tried.
myTest(
  "held (fixed: mysql_changes.ts untriable: any view): mysql: a DELETE through a view of a MyISAM table is asked about only after its rows are gone",
  async (db, p) => {
    const q = `delete from ${p}_vm where id > 0`;
    assertEquals(await outcomes(db.write, [q]), expect([q], "asked"));
    assertEquals(await db.rows(`${p}_m`), ["1:1", "2:2", "3:3"]);
  },
);

myTest(
  "held: mysql: a DELETE of every row of a MyISAM table, or of a MEMORY table in another schema, is asked before it runs",
  async (db, p) => {
    const steps = [
      `delete from ${p}_m where id > 0`,
      `delete from ${p}_db.m2 where id > 0`,
    ];
    assertEquals(await outcomes(db.write, steps), expect(steps, "asked"));
    assertEquals(await db.rows(`${p}_m`), ["1:1", "2:2", "3:3"]);
    assertEquals(await db.rows(`${p}_db.m2`), ["1:1", "2:2"]);
  },
);

// Sent: `alter table pt exchange partition p0 with table ex` (pt p0 holds 1,
// ex holds 5, 6; InnoDB). Should: asked (every row of ex replaced). Did: ran;
// ex = {1}, pt = {5, 6}.
myTest(
  "held (fixed: standing_code.ts): mysql: ALTER TABLE ... EXCHANGE PARTITION ... WITH TABLE replaces every row of the other table",
  async (db, p) => {
    const q = `alter table ${p}_pt exchange partition p0 with table ${p}_ex`;
    assertEquals(await outcomes(db.write, [q]), expect([q], "asked"));
    assertEquals(await db.rows(`${p}_ex`), ["5:5", "6:6"]);
  },
);

myTest(
  "held: mysql: CREATE TRIGGER whose body has a WHERE, after a comment or a quoted DEFINER, asks",
  async (db, p) => {
    const steps = [
      `create trigger ${p}_trg0 after insert on ${p}_log for each row delete from ${p}_t where id > 0`,
      `create /*x*/ trigger ${p}_trg3 after delete on ${p}_log2 for each row delete from ${p}_t where id > 0`,
      `create definer = \`table\`@localhost trigger ${p}_trg4 before update on ${p}_log2 for each row delete from ${p}_t where id > 0`,
    ];
    assertEquals(await outcomes(db.write, steps), expect(steps, "asked"));
  },
);

// Sent: `create definer = type@localhost trigger trg after insert on log for
// each row delete from t where id > 0` (also user, role, sequence, server).
// Should: asked (CREATE TRIGGER asks). Did: all five ran; triggers exist.
// standingDanger takes the first OBJECTS word (TYPE, USER, ...) as the kind.
myTest(
  "held (fixed: standing_code.ts kindAt): mysql: CREATE DEFINER = type|user|role|sequence|server@localhost TRIGGER is not asked (standing_code.ts takes the definer's name as the object kind)",
  async (db, p) => {
    const steps = ["type", "user", "role", "sequence", "server"].map((who, i) =>
      `create definer = ${who}@localhost trigger ${p}_trd${i} after insert on ${p}_log for each row delete from ${p}_t where id > 0`
    );
    assertEquals(await outcomes(db.write, steps), expect(steps, "asked"));
    const [trg] = await db.root.query(
      `select trigger_name as n from information_schema.triggers where trigger_schema = 'test' and trigger_name like '${p}%'`,
    );
    assertEquals((trg as { n: string }[]).map((r) => r.n), []);
  },
);

// Sent: `create definer = type@localhost event ev on schedule at ... do delete
// from t where id > 0`. Should: asked. Did: ran (same cause as above).
myTest(
  "held (fixed: standing_code.ts kindAt): mysql: CREATE DEFINER = type@localhost EVENT ... DO DELETE ... WHERE is not asked",
  async (db, p) => {
    const q =
      `create definer = type@localhost event ${p}_ev on schedule at current_timestamp + interval 1 day do delete from ${p}_t where id > 0`;
    assertEquals(await outcomes(db.write, [q]), expect([q], "asked"));
  },
);

// Sent: `alter definer = type@localhost event ev2 enable` (ev2 disabled,
// calls a procedure). Should: asked, as `alter event ev2 enable` is. Did:
// ran; ev2 ENABLED.
myTest(
  "held (fixed: standing_code.ts kindAt): mysql: ALTER DEFINER = type@localhost EVENT e ENABLE turns on a disabled event unasked (ALTER EVENT asks)",
  async (db, p) => {
    const steps = [
      `alter event ${p}_ev2 enable`,
      `alter definer = type@localhost event ${p}_ev2 enable`,
    ];
    assertEquals(await outcomes(db.write, steps), expect(steps, "asked"));
    const [evs] = await db.root.query(
      `select status as s from information_schema.events where event_schema = 'test' and event_name = '${p}_ev2'`,
    );
    assertEquals((evs as { s: string }[]).map((r) => r.s), ["DISABLED"]);
  },
);

myTest(
  "held: mysql: ALTER /*M! ignore */, /*! ignore */ or /*x*/ IGNORE TABLE ... ADD UNIQUE does not run",
  async (db, p) => {
    const steps = [
      `alter /*M! ignore */ table ${p}_d add unique (v)`,
      `alter /*! ignore */ table ${p}_d add unique (v)`,
      `alter /*x*/ ignore table ${p}_d add unique (v)`,
    ];
    const out = await outcomes(db.write, steps);
    assertEquals(
      Object.values(out).includes("ran"),
      false,
      JSON.stringify(out),
    );
    assertEquals(await db.rows(`${p}_d`, "v"), ["1:1", "2:1", "3:1"]);
  },
);

myTest(
  "held: mysql: ordinary statements run (a SELECT, an UPDATE by key, ADD COLUMN event)",
  async (db, p) => {
    const steps = [
      `select count(*) from ${p}_t`,
      `update ${p}_t set v = 9 where id = 1`,
      `alter table ${p}_t add column event int`,
    ];
    assertEquals(await outcomes(db.write, steps), expect(steps, "ran"));
  },
);

// ---- PostgreSQL ----

// Sent: `create schema attack60_s create table x (id int) create trigger xt
// after insert on x for each row execute function public.wipe_t()`. Should:
// asked (CREATE TRIGGER asks). Did: ran; trigger xt exists (kind read: SCHEMA).
pgTest(
  "held (fixed: standing_code.ts): postgres: CREATE SCHEMA ... CREATE TRIGGER installs a trigger unasked",
  async (db) => {
    const q =
      "create schema attack60_s create table x (id int) create trigger xt after insert on x for each row execute function public.wipe_t()";
    assertEquals(await outcomes(db.write, [q]), expect([q], "asked"));
    assertEquals(
      (await db.sql`select tgname from pg_trigger where tgname = 'xt'`).length,
      0,
    );
  },
);

// Sent: `alter table u alter column id type bigint, add constraint u_ex
// exclude using btree (id with =)`. Should: run (no TYPE ... USING). Did:
// asked: rewritesColumn pairs the TYPE with EXCLUDE's USING. Since any
// type change asks (column_change.ts; tests/db/typechange_classifier_test.ts
// checks that this one asks as a type change, not as TYPE ... USING), the
// pairing is tried here with a column named `type`, which changes no type.
pgTest(
  "held (fixed: standing_code.ts rewritesColumn): postgres: false refusal: ADD COLUMN type ..., ADD CONSTRAINT ... EXCLUDE USING btree is not asked as TYPE ... USING",
  async (db) => {
    const q =
      "alter table u add column type int, add constraint u_ex exclude using btree (id with =)";
    assertEquals(await outcomes(db.write, [q]), expect([q], "ran"));
  },
);

pgTest(
  "held: postgres: CREATE /*x*/ TRIGGER asks, and so does any column type change (widening one, SET DATA TYPE varchar: column_change.ts); CREATE INDEX ... USING runs; CREATE OR REPLACE of a PL/pgSQL trigger function is refused",
  async (db) => {
    const asked = [
      "create /*x*/ trigger t2 after insert on log for each row execute function wipe_t()",
      "alter table u alter column id type bigint",
      "alter table u alter column v set data type varchar(10)",
    ];
    assertEquals(await outcomes(db.write, asked), expect(asked, "asked"));
    const ran = ["create index on u using btree (v)"];
    assertEquals(await outcomes(db.write, ran), expect(ran, "ran"));
    const replace =
      "create or replace function noop() returns trigger language plpgsql as $$ begin delete from public.u where id > 0; return null; end $$";
    const out = await outcome(db.write, replace);
    assertEquals(out.startsWith("ERR denied"), true, out);
  },
);
