/**
 * Outsider stop 61: attacks on "Every row, by effect" after a117cca (a row
 * another session commits meanwhile is not a row the write kept), through
 * the MCP endpoint (readWrite token, Safe Mode silent, approvals cut at
 * 1 s: asked = ERR user_cancelled, nothing changed), with a second session
 * of the tester's own acting meanwhile. Each test's comment gives what was
 * sent, what should happen and what happened at the attack; every leak
 * found is fixed and its test holds it ("held (fixed: ...)"): the xmin
 * filter of a117cca was replaced by REPEATABLE READ for a judged
 * PostgreSQL write, MariaDB counts the fewer of its snapshot's and the
 * committed rows, rows inserted and deleted by one write ask, track_counts
 * is read after the write, and a write to a foreign table always asks.
 *
 * @module
 */

import { assert, assertEquals, assertMatch } from "@std/assert";
import postgres from "postgres";
import { needs, POSTGRES_URL } from "../_db.ts";
import { everyRow, pause } from "../_every_row_harness.ts";

const { pgOwn, myOwn, writer } = everyRow({ tag: "attack61", name: "Stop61" });

/** A postgres_fdw server `loop` back to the database of `url`. */
function loopback(url: string): string {
  const { port, pathname } = new URL(url);
  return `create server loop foreign data wrapper postgres_fdw options
    (host '127.0.0.1', port '${port || "5432"}', dbname '${pathname.slice(1)}');
  create user mapping for public server loop options (user 'postgres');`;
}

const T3 = `create table t (id int primary key, v text);
  insert into t select g, 'v' from generate_series(1, 3) g;`;

// ---------------------------------------------------------------- leaks

Deno.test({
  name:
    "postgres held (fixed: the judged write runs in REPEATABLE READ): a row another session inserted in a SAVEPOINT before the write and commits while it runs is counted as a row the write kept",
  // Sent: session B `begin; select txid_current(); savepoint s; insert into
  // t values (100, 'b'); release savepoint s`, then the token's `delete
  // from t where id > 0 and pg_sleep(0.3) is not null`, B commits while it
  // sleeps (any other transaction ending first, as on a busy server,
  // here `select txid_current()`). Should: asked (every row t had, 1..3, deleted). Happened: ran,
  // t = [100]. txid_visible_in_snapshot is not for subtransaction ids: the
  // snapshot's xip lists top-level ids only, so B's subtransaction id (in
  // progress at the snapshot) reads as visible and its row as one the
  // write saw and kept.
  ...needs("postgres"),
  async fn() {
    await using db = await pgOwn(T3);
    await using b = await db.session();
    await b.unsafe("begin");
    await b.unsafe("select txid_current()");
    await b.unsafe("savepoint s");
    await b.unsafe("insert into t values (100, 'b')");
    await b.unsafe("release savepoint s");
    // Any transaction that ends after B's subtransaction id (on a busy
    // server, always) moves the snapshot's xmax past it.
    await db.sql.unsafe("select txid_current()");
    const a = db.write(
      "delete from t where id > 0 and pg_sleep(0.3) is not null",
    );
    await db.running("delete from t where id > 0");
    await b.unsafe("commit");
    assertEquals(await a, "asked");
    assertEquals(await db.ids("t"), [1, 2, 3, 100]);
  },
});

Deno.test({
  name:
    "postgres held (fixed: REPEATABLE READ refuses it): the same through a lock wait, no sleep: B's SAVEPOINT row is counted as kept after B commits and the write's wait ends",
  // Sent: B `begin; update t set v = 'b' where id = 2; savepoint s; insert
  // into t values (100, 'b'); release savepoint s`; the token's `delete
  // from t where id > 0` waits on row 2; B commits. Should: asked (1..3
  // deleted). Happened: ran, t = [100]. Same cause as above; an
  // application that nests transactions (savepoints) does this by itself.
  ...needs("postgres"),
  async fn() {
    await using db = await pgOwn(T3);
    await using b = await db.session();
    await b.unsafe("begin");
    await b.unsafe("update t set v = 'b' where id = 2");
    await b.unsafe("savepoint s");
    await b.unsafe("insert into t values (100, 'b')");
    await b.unsafe("release savepoint s");
    await db.sql.unsafe("select txid_current()");
    const a = db.write("delete from t where id > 0");
    await db.running("delete from t where id > 0");
    await pause(100);
    await b.unsafe("commit");
    assertMatch(await a, /could not serialize access/);
    assertEquals(await db.ids("t"), [1, 2, 3, 100]);
  },
});

Deno.test({
  name:
    "postgres held (fixed: rows inserted and deleted in one write are asked about): rows a function inserts in a subtransaction it rolls back inflate the inserted count, and its DELETE of every row runs unasked",
  // Sent: `select wipe()`, wipe() (plpgsql, made by the owner) = begin
  // begin insert into t select 1000 + g ... generate_series(1, 10);
  // raise exception 'undo'; exception when others then null; end; delete
  // from t where true; end. Should: asked (t's 3 rows deleted). Happened:
  // ran, t empty. pg_stat_xact_user_tables keeps a rolled-back
  // subtransaction's n_tup_ins, so "rows before" = now - ins + del =
  // 0 - 10 + 3 < 2. Not the new filter's doing: the count formula's.
  ...needs("postgres"),
  async fn() {
    await using db = await pgOwn(`${T3}
      create function wipe() returns void language plpgsql as $$
        begin
          begin
            insert into t select 1000 + g, 'z' from generate_series(1, 10) g;
            raise exception 'undo';
          exception when others then null;
          end;
          delete from t where true;
        end $$;`);
    assertEquals(await db.write("select wipe()"), "asked");
    assertEquals(await db.ids("t"), [1, 2, 3]);
  },
});

Deno.test({
  name:
    "postgres held (fixed: track_counts is read after the write): a function that turns track_counts off (superuser login) before its DELETE leaves no count to judge",
  // Sent: `select quiet()`, quiet() = perform set_config('track_counts',
  // 'off', true); delete from t where true. Should: asked. Happened: see
  // the report (a relation opened while track_counts is off counts no
  // rows in pg_stat_xact_user_tables).
  ...needs("postgres"),
  async fn() {
    await using db = await pgOwn(`${T3}
      create function quiet() returns void language plpgsql as $$
        begin
          perform set_config('track_counts', 'off', true);
          delete from t where true;
        end $$;`);
    assertEquals(await db.write("select quiet()"), "asked");
    assertEquals(await db.ids("t"), [1, 2, 3]);
  },
});

Deno.test({
  name:
    "mysql held (fixed: the fewer of the snapshot's and the committed rows): another session re-keys a row while the write runs; the snapshot count sees its old key as a row kept",
  // Sent: `delete from $p_t where id > 0 and sleep(0.4) = 0` (t = 1, 2);
  // while it sleeps on row 1, session B commits `update $p_t set id = 3
  // where id = 2`. Should: asked (the write deleted every row t has:
  // 1 and 3). Happened: see the report. The DELETE reads current rows
  // (InnoDB locking read) but the count after reads the snapshot taken at
  // START TRANSACTION, where id 2 still stands. New with a117cca: before
  // it the count's read view was made after the DELETE (asked). An UPDATE
  // of every row (`update $p_t set v = 'x' where id > 0 and sleep(0.4) =
  // 0`) leaks the same way.
  ...needs("mysql"),
  async fn() {
    await using db = await myOwn([
      "create table $p_t (id int primary key, v varchar(8)) engine = InnoDB",
      "insert into $p_t values (1, 'v'), (2, 'v')",
      "create table $p_u (id int primary key, v varchar(8)) engine = InnoDB",
      "insert into $p_u values (1, 'v'), (2, 'v')",
    ]);
    const a = db.write("delete from $p_t where id > 0 and sleep(0.4) = 0");
    await db.running("sleep(0.4)");
    await db.other("update $p_t set id = 3 where id = 2");
    assertEquals(await a, "asked");
    assertEquals(await db.ids("$p_t"), [1, 3]);
    const b = db.write(
      "update $p_u set v = 'x' where id > 0 and sleep(0.4) = 0",
    );
    await db.running("update");
    await db.other("update $p_u set id = 3 where id = 2");
    assertEquals(await b, "asked");
    assertEquals(await db.ids("$p_u"), [1, 3]);
  },
});

Deno.test({
  name:
    "postgres held: a DELETE of every row that waits on another session's row lock is refused (REPEATABLE READ: a row changed meanwhile) after that session commits",
  ...needs("postgres"),
  async fn() {
    await using db = await pgOwn(T3);
    await using b = await db.session();
    await b.unsafe("begin");
    await b.unsafe("update t set v = 'b' where id = 2");
    await b.unsafe("insert into t values (100, 'b')");
    const a = db.write("delete from t where id > 0");
    await db.running("delete from t where id > 0");
    await pause(100);
    await b.unsafe("commit");
    // REPEATABLE READ: row 2 changed after the write's snapshot.
    assertMatch(await a, /could not serialize access/);
    assertEquals(await db.ids("t"), [1, 2, 3, 100]);
  },
});

Deno.test({
  name:
    "postgres: a DELETE that waits on a row lock another session changes the row of is refused (REPEATABLE READ), nothing deleted",
  // Sent: `delete from t where v = 'v'` on t (1..3, v = 'v') while B holds
  // `update t set v = 'b' where id = 2` uncommitted; B commits. The write
  // deletes 1 and 3 and keeps 2 (not every row), but row 2's new version
  // is B's, committed after the snapshot, so it is not counted as kept:
  // asked (before a117cca it ran). Documented as erring towards asking;
  // asserted as it is.
  ...needs("postgres"),
  async fn() {
    await using db = await pgOwn(T3);
    await using b = await db.session();
    await b.unsafe("begin");
    await b.unsafe("update t set v = 'b' where id = 2");
    const a = db.write("delete from t where v = 'v'");
    await db.running("delete from t where v = 'v'");
    await pause(100);
    await b.unsafe("commit");
    assertMatch(await a, /could not serialize access/);
    assertEquals(await db.ids("t"), [1, 2, 3]);
  },
});

Deno.test({
  name:
    "postgres held: MERGE, an upsert from the table itself, a partitioned and an inheritance parent emptied while another session commits rows are asked about",
  ...needs("postgres"),
  async fn() {
    await using db = await pgOwn(`${T3}
      create table p (id int, v text) partition by range (id);
      create table p1 partition of p for values from (0) to (100);
      create table p2 partition of p for values from (100) to (1000);
      insert into p values (1, 'v'), (2, 'v'), (150, 'v');
      create table h (id int, v text);
      create table hc () inherits (h);
      insert into h values (1, 'v'); insert into hc values (2, 'v');`);
    const cases: [string, string, string][] = [
      [
        "merge into t using (select pg_sleep(0.3) z) s on t.id > 0 when matched then delete",
        "merge into t using",
        "insert into t values (100, 'b')",
      ],
      [
        "insert into t select id, 'x' from t where pg_sleep(0.1) is not null on conflict (id) do update set v = excluded.v",
        "insert into t select id, 'x'",
        "insert into t values (101, 'b')",
      ],
      [
        "delete from p where id > 0 and pg_sleep(0.2) is not null",
        "delete from p where id > 0",
        "insert into p values (500, 'b')",
      ],
      [
        "update h set v = 'x' where id > 0 and pg_sleep(0.3) is not null",
        "update h set v = 'x'",
        "insert into hc values (3, 'b')",
      ],
    ];
    for (const [statement, marker, meanwhile] of cases) {
      const a = db.write(statement);
      await db.running(marker);
      await db.sql.unsafe(meanwhile);
      assertEquals(await a, "asked", statement);
    }
    assertEquals(await db.ids("t"), [1, 2, 3, 100, 101]);
    assertEquals(await db.ids("p"), [1, 2, 150, 500]);
    assertEquals(
      (await db.sql`select count(*)::int as n from h where v = 'x'`)[0]!.n,
      0,
    );
  },
});

Deno.test({
  name:
    "postgres held (no false ask since the write runs in REPEATABLE READ): a write of some rows while another session changes the others runs",
  // The rows another session changed meanwhile are not counted as rows
  // the write kept (docs: "errs towards asking"): `update t set v = 'x'
  // where id <= 2 and pg_sleep(0.3) is not null` on t (1..3) while B
  // commits `update t set v = 'b' where id = 3` is asked, though it
  // changes two of three rows (before a117cca it ran).
  ...needs("postgres"),
  async fn() {
    await using db = await pgOwn(T3);
    const a = db.write(
      "update t set v = 'x' where id <= 2 and pg_sleep(0.3) is not null",
    );
    await db.running("update t set v = 'x' where id <= 2");
    await db.sql.unsafe("update t set v = 'b' where id = 3");
    assertEquals(await a, "ran");
    // Without the other session's change it runs.
    assertEquals(
      await db.write("update t set v = 'x' where id <= 2"),
      "ran",
    );
  },
});

Deno.test({
  name:
    "mysql held: a SET TRANSACTION or COMMIT put before the DELETE does not escape the snapshot (refused or asked, nothing deleted)",
  ...needs("mysql"),
  async fn() {
    await using db = await myOwn([
      "create table $p_t (id int primary key) engine = InnoDB",
      "insert into $p_t values (1), (2), (3)",
    ]);
    for (
      const sent of [
        "set transaction isolation level read committed; delete from $p_t where id > 0",
        "commit; delete from $p_t where id > 0",
        "delete from $p_t where id > 0; commit",
        "set statement transaction_isolation = 'READ-COMMITTED' for delete from $p_t where id > 0",
      ]
    ) {
      const answer = await db.write(sent);
      assert(answer !== "ran", `${sent}: ${answer}`);
    }
    assertEquals(await db.ids("$p_t"), [1, 2, 3]);
  },
});

Deno.test({
  name:
    "postgres held (no false ask since the count reads no xmin): a login with column-level SELECT has its write of two of three rows run",
  // Sent, as a login granted `select (v), update (v) on t` only: `update t
  // set v = 'x' where v <> 'keep'` on t (1 'v', 2 'v', 3 'keep'): two of
  // three rows. The count after reads `r.xmin`, which needs SELECT on the
  // whole table ("permission denied for table t"): unjudged, asked. Before
  // a117cca the count (`select 1 from t`, allowed with one readable
  // column) said 3 rows and it ran. Asserted as it is.
  ...needs("postgres"),
  async fn() {
    const role = `attack61_${crypto.randomUUID().slice(0, 8)}`;
    await using db = await pgOwn(`${T3}
      update t set v = 'keep' where id = 3;
      create role ${role} login;
      grant select (v), update (v) on t to ${role};`);
    const url = new URL(db.url);
    url.username = role;
    const { server, write } = await writer("postgres", url.href);
    try {
      assertEquals(
        await write("update t set v = 'x' where v <> 'keep'"),
        "ran",
      );
      assertEquals(
        (await db.sql`select count(*)::int as n from t where v = 'x'`)[0]!.n,
        2,
      );
    } finally {
      await server[Symbol.asyncDispose]();
      await db.sql.unsafe(`drop owned by ${role}`);
      await db.sql.end();
      const root = postgres(POSTGRES_URL, { max: 1, onnotice: () => {} });
      await root.unsafe(
        `drop database if exists ${
          new URL(db.url).pathname.slice(1)
        } with (force)`,
      );
      await root.unsafe(`drop role if exists ${role}`);
      await root.end();
    }
  },
});

Deno.test({
  name:
    "postgres held (fixed: a write to a foreign table always asks): a DELETE of every row of a foreign table (postgres_fdw) is not counted and runs unasked",
  // Sent: `delete from ft where true`, ft an existing postgres_fdw foreign
  // table of r (1..3) (loopback to the same database here; any server in
  // life). Should: asked (every row ft had). Happened: ran, r empty. A
  // foreign table has no pg_stat_xact_user_tables row (the remote rows
  // are deleted by the fdw's own connection), so nothing is judged; a
  // write whose target is a foreign table cannot be counted and should
  // be asked about, as a MariaDB write to a table that cannot roll back
  // is. Not the new filter's doing.
  ...needs("postgres"),
  async fn() {
    await using db = await pgOwn(`
      create extension postgres_fdw;
      create table r (id int primary key, v text);
      insert into r select g, 'v' from generate_series(1, 3) g;`);
    await db.sql.unsafe(`${loopback(db.url)}
      create foreign table ft (id int, v text) server loop
        options (table_name 'r');`);
    assertEquals(await db.write("delete from ft where true"), "asked");
    assertEquals(await db.ids("r"), [1, 2, 3]);
  },
});

Deno.test({
  name:
    "postgres: a write of a partitioned table with a foreign partition asks (it may write the foreign one, whose rows no count tells)",
  // Sent: `update p set v = 'x' where id < 3` on p (local partition p1:
  // 1, 2, 3; foreign partition p2 over r: 100, 101), two of five rows.
  // Asked: the write may reach p2, whose rows no count of this server tells.
  ...needs("postgres"),
  async fn() {
    await using db = await pgOwn(`
      create extension postgres_fdw;
      create table r (id int primary key, v text);
      insert into r values (100, 'v'), (101, 'v');
      create table p (id int, v text) partition by range (id);
      create table p1 partition of p for values from (0) to (100);
      insert into p1 select g, 'v' from generate_series(1, 3) g;`);
    await db.sql.unsafe(`${loopback(db.url)}
      create foreign table p2 partition of p for values from (100) to (1000)
        server loop options (table_name 'r');`);
    assertEquals(await db.write("update p set v = 'x' where id < 3"), "asked");
    assertEquals(
      (await db.sql`select count(*)::int as n from p where v = 'x'`)[0]!.n,
      0,
    );
  },
});
