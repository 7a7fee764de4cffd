/**
 * An outsider's attacks (stop 48) on the lifecycle of database sessions and
 * drivers: the pool's retiring of a driver that lost its database
 * (DriverPool `#lost`), PgPools' counted calls and its `close`, and the
 * catalog statements sent again after an idle session was ended. Every
 * session is named (application_name) or lives in a schema of this file's
 * own, so only its own sessions are counted and ended.
 */

import { assert, assertEquals } from "@std/assert";
import postgres from "postgres";
import { DriverPool } from "../../lib/db/pool.ts";
import mysql from "mysql2/promise";
import { openMysql } from "../../lib/db/mysql/mysql.ts";
import { openPostgres } from "../../lib/db/postgres/postgres.ts";
import { connect as tcpConnect } from "node:net";
import { needs, openFixture, POSTGRES_URL, READ_OPTIONS } from "../_db.ts";
import { waitUntil } from "../_wait.ts";
import { outcome } from "../_outsider.ts";

type Admin = ReturnType<typeof postgres>;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function named(prefix: string): { url: string; app: string } {
  const app = `${prefix}_${crypto.randomUUID().slice(0, 8)}`;
  const url = new URL(POSTGRES_URL);
  url.searchParams.set("application_name", app);
  return { url: url.toString(), app };
}

/** Sessions of `app` now (state: 'active', 'idle', …; all by default). */
async function sessions(
  admin: Admin,
  app: string,
  state = "%",
): Promise<{ pid: number; state: string; query: string }[]> {
  const rows = await admin.unsafe(
    "select pid, state, query from pg_stat_activity where application_name = $1 and coalesce(state, '') like $2 and pid <> pg_backend_pid()",
    [app, state],
  );
  return rows.map((row) => ({
    pid: Number(row.pid),
    state: String(row.state),
    query: String(row.query),
  }));
}

async function endAll(admin: Admin, app: string): Promise<void> {
  await admin.unsafe(
    "select pg_terminate_backend(pid) from pg_stat_activity where application_name = $1",
    [app],
  );
}

Deno.test({
  name:
    "postgres pool: a tool call holding its connection's driver (check, then query) is not failed 'the connection was closed' because another call lost a session in between",
  ...needs("postgres"),
  async fn() {
    // A tool call resolves its connection's driver once (access.ts
    // resolveConnection) and then makes several calls on it: check, consent
    // (which may wait for the user), query. When another client's call
    // loses its session in between, DriverPool `#lost` finds no call of the
    // driver running (entry.calls === 0) and closes it at once; the held
    // view still points at it, and the tool call's read — nothing of which
    // ran — fails not_connected "the connection was closed". The stop-47
    // fix (close once the driver's calls settle) counts calls, not the
    // tool calls that hold the driver between them.
    const admin = postgres(POSTGRES_URL, { max: 1, onnotice: () => {} });
    const { url, app } = named("dbport_s48a");
    const pool = new DriverPool();
    const spec = { id: crypto.randomUUID(), engine: "postgres" as const, url };
    try {
      // Client A resolves the driver (its view) and checks its statement.
      const held = pool.get(spec, "client-a");
      await held.check("select 2 as a", "read", READ_OPTIONS);
      // Client B's read loses its session (the server ended it).
      const other = outcome(
        pool.get(spec, "client-b").query(
          "select pg_sleep(8) as victim",
          READ_OPTIONS,
        ),
      );
      const [victim] = await waitUntil(
        "client b's read runs",
        async () => {
          const found = await sessions(admin, app, "active");
          return found.filter((s) => s.query.includes("victim")).length === 1 &&
            found.filter((s) => s.query.includes("victim"));
        },
      );
      await admin.unsafe("select pg_terminate_backend($1)", [victim!.pid]);
      assert((await other).includes("[connect]"), await other);
      // Client A now sends the statement it checked.
      const answer = await outcome(held.query("select 2 as a", READ_OPTIONS));
      assertEquals(answer, "answered [[2]]");
    } finally {
      await pool.closeAll();
      await endAll(admin, app);
      await admin.end();
    }
  },
});

Deno.test({
  name:
    "postgres pool: a catalog call its client cancelled, whose statement waits on a lock, neither marks the connection lost nor outlives the driver's close on the server",
  ...needs("postgres"),
  async fn() {
    // run() (postgres.ts) lets a catalog statement of a cancelled call run
    // to the call's own deadline; stoppable() meanwhile gives up after
    // STOP_GRACE_MS (5 s) with sessionLost — a DbError "connect". The pool
    // takes that for a lost database: the connection is reported not
    // connected and its driver retired and closed, and close() no longer
    // counts the statement (its call settled): the pool is ended under it
    // with no cancel request, and the statement keeps its session on the
    // server until the lock frees.
    const admin = postgres(POSTGRES_URL, { max: 1, onnotice: () => {} });
    // No lifetime timer: `end()` under the locking transaction's COMMIT
    // resolves before its socket's close, which is what cancels postgres.js's
    // lifetime timer — on a loaded machine after the test had ended (CI: a
    // timer "started in this test, but never completed").
    const locker = postgres(POSTGRES_URL, {
      max: 1,
      max_lifetime: 0,
      onnotice: () => {},
    });
    const schema = `s48b_${crypto.randomUUID().slice(0, 8)}`;
    const { url, app } = named("dbport_s48b");
    const pool = new DriverPool();
    const spec = { id: crypto.randomUUID(), engine: "postgres" as const, url };
    let unlock: () => void = () => {};
    try {
      await admin.unsafe(
        `create schema ${schema}; create view ${schema}.v as select 1 as a`,
      );
      const driver = pool.get(spec);
      await driver.version(READ_OPTIONS);
      assert(pool.isConnected(spec.id));
      // Another session holds the view (an ALTER VIEW in an open transaction).
      const locked = new Promise<void>((resolve) => {
        void locker.begin(async (tx) => {
          await tx.unsafe(
            `lock table ${schema}.v in access exclusive mode`,
          );
          resolve();
          await new Promise<void>((r) => (unlock = r));
        }).catch(() => {});
      });
      await locked;
      const control = new AbortController();
      const described = outcome(
        driver.describeTable("v", {
          signal: control.signal,
          timeoutMs: 30_000,
          schema,
        }),
      );
      await waitUntil(
        "the catalog statement waits on the lock",
        async () =>
          (await sessions(admin, app, "active")).some((s) =>
            s.query.includes("pg_get_viewdef")
          ),
      );
      control.abort(); // the client left
      const said = await described;
      await sleep(500);
      const wrong: string[] = [];
      // Nobody reads the call's own answer (its client left), but the pool
      // does: a "connect" failure retires the driver.
      if (!/cancel/.test(said)) wrong.push(`the cancelled call ${said}`);
      const failure = pool.lastFailure(spec.id);
      if (failure !== null) {
        wrong.push(`the connection is marked failed: ${failure.message}`);
      }
      await pool.closeAll();
      await sleep(1_500);
      const left = await sessions(admin, app);
      if (left.length > 0) {
        wrong.push(
          `after closeAll, sessions of the driver still on the server: ${
            left.map((s) => `${s.state}: ${s.query.trim().slice(0, 40)}`)
              .join(" | ")
          }`,
        );
      }
      assertEquals(wrong, []);
    } finally {
      unlock();
      await pool.closeAll();
      await endAll(admin, app);
      await locker.end();
      await admin.unsafe(`drop schema if exists ${schema} cascade`);
      await admin.end();
    }
  },
});

Deno.test({
  name:
    "mariadb: a read whose connection is KILLed (or lost) while its statement runs fails at once as lost, not at its timeout + 5 s",
  ...needs("mysql"),
  async fn() {
    // streamRows (mysql_rows.ts) listens for the query's own "error"; a
    // streamed mysql2 query has no callback, so a fatal error — the server
    // closing the connection (KILL, a restart, the network) — goes to the
    // connection's "error" event instead (mysql2 _notifyError) and the
    // read's promise never settles: it is answered by stoppable() at its
    // timeout (KILL QUERY for a thread already gone) plus STOP_GRACE_MS.
    // Through MCP a read waits its whole statement timeout + 5 s (35 s
    // with the defaults) for a connection that closed at once.
    await using fixture = await openFixture("mysql");
    const admin = await mysql.createConnection({ uri: fixture.url });
    const driver = openMysql({ url: fixture.url, secrets: [] });
    try {
      const marker = `s48my_${crypto.randomUUID().slice(0, 8)}`;
      const began = performance.now();
      const read = outcome(
        driver.query(`select sleep(6) as s, '${marker}' as m`, {
          ...READ_OPTIONS,
          timeoutMs: 8_000,
        }),
      );
      const [found] = await waitUntil("the read runs", async () => {
        const [rows] = await admin.query(
          "select id from information_schema.processlist where info like ? and id <> connection_id()",
          [`%'${marker}'%`],
        ) as unknown as [{ id: number }[]];
        return rows.length === 1 && rows;
      });
      await admin.query(`kill ${Number(found!.id)}`);
      const said = await read;
      const took = performance.now() - began;
      assert(said.includes("[connect]"), said);
      assert(
        took < 5_000,
        `the read settled after ${Math.round(took)} ms: ${said}`,
      );
    } finally {
      await driver.close();
      await admin.end();
    }
  },
});

Deno.test({
  name:
    "held: postgres pool: drivers retired one after another under repeated session loss (a long read of another client running each time) are all closed, their sessions gone",
  ...needs("postgres"),
  async fn() {
    const admin = postgres(POSTGRES_URL, { max: 1, onnotice: () => {} });
    const { url, app } = named("dbport_s48c");
    const pool = new DriverPool();
    const spec = { id: crypto.randomUUID(), engine: "postgres" as const, url };
    try {
      const failed: string[] = [];
      for (let round = 0; round < 6; round++) {
        // A read of client a holds the driver while client b's is lost.
        const long = outcome(
          pool.get(spec, "a").query(
            `select pg_sleep(0.6) as long${round}`,
            READ_OPTIONS,
          ),
        );
        await pool.get(spec, "c").version(READ_OPTIONS);
        const victim = outcome(
          pool.get(spec, "b").query(
            `select pg_sleep(5) as victim${round}`,
            READ_OPTIONS,
          ),
        );
        await waitUntil(
          "client b's read runs",
          async () =>
            (await sessions(admin, app, "active")).some((s) =>
              s.query.includes(`victim${round}`)
            ),
        );
        await admin.unsafe(
          "select pg_terminate_backend(pid) from pg_stat_activity where application_name = $1 and query like $2",
          [app, `%victim${round}%`],
        );
        assert((await victim).includes("[connect]"), await victim);
        const answer = await long;
        if (!answer.startsWith("answered")) failed.push(answer);
      }
      assertEquals(failed, [], "client a's reads are answered");
      // Every retired driver closed once its last read settled.
      await waitUntil(
        "no session of the retired drivers is left",
        async () => (await sessions(admin, app)).length === 0,
      );
    } finally {
      await pool.closeAll();
      await endAll(admin, app);
      await admin.end();
    }
  },
});

Deno.test({
  name:
    "postgres: dbport's own statements sent as the server ends every idle session (an administrator, a restart: 57P01) are sent again, not failed as a lost database",
  ...needs("postgres"),
  async fn() {
    // postgres.ts run() sends a catalog statement again after ECONNRESET,
    // EPIPE, CONNECTION_CLOSED or 57P05 — not after 57P01, which is what
    // the statement meets when PostgreSQL itself says why it closes the
    // idle session (pg_terminate_backend, a fast shutdown for a restart):
    // the call fails "[connect] terminating connection due to
    // administrator command", and the pool retires the whole driver. Seen
    // both on a call written before dbport read the close and on the next
    // round's first call (the close long read). The race is won most
    // runs; five rounds (each holds the event loop 0.9 s).
    const admin = postgres(POSTGRES_URL, { max: 1, onnotice: () => {} });
    const { url, app } = named("dbport_s48d");
    const pool = new DriverPool();
    const spec = { id: crypto.randomUUID(), engine: "postgres" as const, url };
    const options = { signal: new AbortController().signal, timeoutMs: 5_000 };
    const failed: string[] = [];
    const note = async (what: string, work: Promise<unknown>) => {
      const said = await outcome(work);
      if (!said.startsWith("answered")) failed.push(`${what}: ${said}`);
    };
    try {
      for (let round = 0; round < 5; round++) {
        await note(
          `round ${round}, first version()`,
          pool.get(spec).version(options),
        );
        await note(
          `round ${round}, first read`,
          pool.get(spec).query("select 1 as a", READ_OPTIONS),
        );
        // The server ends the sessions while this process's event loop is
        // held: the calls below are written before the close is read.
        const kill = admin.unsafe(
          `select pg_sleep(0.3); select pg_terminate_backend(pid) from pg_stat_activity where application_name = '${app}'`,
        ).simple();
        await sleep(50);
        const end = Date.now() + 900;
        while (Date.now() < end) { /* held */ }
        const answers = [
          note(`round ${round}, version()`, pool.get(spec).version(options)),
          note(
            `round ${round}, listSchemas()`,
            pool.get(spec).listSchemas(options),
          ),
          note(
            `round ${round}, read`,
            pool.get(spec).query("select 2 as a", READ_OPTIONS),
          ),
        ];
        await kill;
        await Promise.all(answers);
      }
      assertEquals(failed, []);
    } finally {
      await pool.closeAll();
      await endAll(admin, app);
      await admin.end();
    }
  },
});

Deno.test({
  name:
    "held: postgres pool: writes (plain and bound) under sessions ended every ~50 ms are never sent twice: each value is in the table at most once, every answered one is there",
  ...needs("postgres"),
  async fn() {
    const admin = postgres(POSTGRES_URL, { max: 1, onnotice: () => {} });
    const schema = `s48w_${crypto.randomUUID().slice(0, 8)}`;
    const { url, app } = named("dbport_s48w");
    const pool = new DriverPool();
    const spec = { id: crypto.randomUUID(), engine: "postgres" as const, url };
    let killing = true;
    let killer = Promise.resolve();
    try {
      await admin.unsafe(
        `create schema ${schema}; create table ${schema}.t (v int)`,
      );
      killer = (async () => {
        while (killing) {
          await admin.unsafe(
            "select pg_terminate_backend(pid) from pg_stat_activity where application_name = $1 order by random() limit 1",
            [app],
          ).catch(() => {});
          await sleep(50);
        }
      })();
      const answered: number[] = [];
      const until = Date.now() + 4_000;
      let next = 0;
      await Promise.all([0, 1, 2, 3].map(async (client) => {
        while (Date.now() < until) {
          const v = next++;
          const bound = v % 2 === 0;
          const said = await outcome(
            pool.get(spec, `w${client}`).query(
              bound
                ? `insert into ${schema}.t (v) values ($1::int)`
                : `insert into ${schema}.t (v) values (${v})`,
              {
                ...READ_OPTIONS,
                mode: "write",
                ...(bound ? { params: [v] } : {}),
              },
            ),
          );
          if (said.startsWith("answered")) answered.push(v);
        }
      }));
      killing = false;
      await killer;
      const rows = await admin.unsafe(
        `select v, count(*)::int as n from ${schema}.t group by v`,
      );
      const twice = rows.filter((row) => row.n !== 1).map((row) => row.v);
      const present = new Set(rows.map((row) => Number(row.v)));
      assertEquals(twice, [], "values written twice");
      assertEquals(answered.filter((v) => !present.has(v)), []);
      assert(answered.length > 0);
    } finally {
      killing = false;
      await killer;
      await pool.closeAll();
      await endAll(admin, app);
      await admin.unsafe(`drop schema if exists ${schema} cascade`);
      await admin.end();
    }
  },
});

Deno.test({
  name:
    "held: postgres: close() under a plain read, a bound read, an export and a catalog statement waiting on a lock stops all four on the server within seconds and fails them as closed",
  ...needs("postgres"),
  async fn() {
    const admin = postgres(POSTGRES_URL, { max: 1, onnotice: () => {} });
    // No lifetime timer: `end()` under the locking transaction's COMMIT
    // resolves before its socket's close, which is what cancels postgres.js's
    // lifetime timer — on a loaded machine after the test had ended (CI: a
    // timer "started in this test, but never completed").
    const locker = postgres(POSTGRES_URL, {
      max: 1,
      max_lifetime: 0,
      onnotice: () => {},
    });
    const schema = `s48e_${crypto.randomUUID().slice(0, 8)}`;
    const { url, app } = named("dbport_s48e");
    const pool = new DriverPool();
    const spec = { id: crypto.randomUUID(), engine: "postgres" as const, url };
    let unlock: () => void = () => {};
    try {
      await admin.unsafe(
        `create schema ${schema}; create view ${schema}.v as select 1 as a`,
      );
      const driver = pool.get(spec);
      await driver.version(READ_OPTIONS);
      await new Promise<void>((resolve) => {
        void locker.begin(async (tx) => {
          await tx.unsafe(`lock table ${schema}.v in access exclusive mode`);
          resolve();
          await new Promise<void>((r) => (unlock = r));
        }).catch(() => {});
      });
      const options = { ...READ_OPTIONS, timeoutMs: 30_000 };
      const calls = [
        outcome(
          pool.get(spec, "o1").query("select pg_sleep(20) as plain", options),
        ),
        outcome(
          pool.get(spec, "o2").query("select pg_sleep($1::float8) as bound", {
            ...options,
            params: [20],
          }),
        ),
        outcome(
          pool.get(spec, "o3").streamRead!(
            "select pg_sleep(20) as exported",
            options,
            async () => {},
          ),
        ),
        outcome(
          pool.get(spec, "o4").describeTable("v", { ...options, schema }),
        ),
      ];
      await waitUntil(
        "the four statements run",
        async () =>
          (await sessions(admin, app, "active")).filter((s) =>
            /pg_sleep|pg_get_viewdef/.test(s.query)
          ).length === 4,
      );
      const began = performance.now();
      await pool.closeAll();
      const closing = performance.now() - began;
      for (const said of await Promise.all(calls)) {
        assert(/closed/.test(said), said);
      }
      await waitUntil(
        "no statement of the closed driver runs",
        async () => (await sessions(admin, app, "active")).length === 0,
        { timeoutMs: 3_000 },
      );
      assert(closing < 5_000, `close took ${Math.round(closing)} ms`);
    } finally {
      unlock();
      await pool.closeAll();
      await endAll(admin, app);
      await locker.end();
      await admin.unsafe(`drop schema if exists ${schema} cascade`);
      await admin.end();
    }
  },
});

Deno.test({
  name:
    "postgres: close() when no cancel request can get out (the tunnel went down): a read is not answered 'stopped on the database' while its statement still runs there",
  ...needs("postgres"),
  // postgres.js keeps timers of its own past an ended pool's end: a
  // session it was reopening (its connect timeout; the reopening delay,
  // pg_options.ts reopenDelay), which then finds the pool ended and opens
  // none (pg_pools.ts untilEnded). What the test counts is on the server.
  sanitizeOps: false,
  sanitizeResources: false,
  async fn() {
    // close() aborts the running reads; their cancel requests need a new
    // socket, which never opens (an SSH tunnel that went down). close()
    // returns after its 2 s grace and ends the pools; the bound read then
    // fails "the query was stopped on the database: the connection was
    // closed" (stoppable reads any failure after its stop as the stop's
    // success), yet its statement runs on on the server. (The plain wired
    // read says "did not answer within 5 s", which is true.)
    const admin = postgres(POSTGRES_URL, { max: 1, onnotice: () => {} });
    const { url, app } = named("dbport_s48f");
    const target = new URL(url);
    let down = false;
    const driver = openPostgres({
      url,
      secrets: [],
      wiredReads: true,
      socket: () =>
        down ? new Promise(() => {}) : Promise.resolve(
          tcpConnect(Number(target.port || 5432), target.hostname),
        ),
    });
    try {
      await driver.version(READ_OPTIONS);
      const options = { ...READ_OPTIONS, timeoutMs: 30_000 };
      const reads = [
        outcome(driver.query("select pg_sleep(9) as plain", options)),
        outcome(
          driver.query("select pg_sleep($1::float8) as bound", {
            ...options,
            params: [9],
          }),
        ),
      ];
      await waitUntil(
        "both reads run",
        async () => (await sessions(admin, app, "active")).length === 2,
      );
      down = true;
      await driver.close();
      const answers = await Promise.all(reads);
      const still = (await sessions(admin, app, "active")).map((s) => s.query);
      const wrong = answers.filter((said, i) =>
        /stopped on the database/.test(said) &&
        still.some((q) => q.includes(i === 0 ? "plain" : "bound"))
      );
      assertEquals(wrong, [], `still running: ${JSON.stringify(still)}`);
    } finally {
      await driver.close();
      await endAll(admin, app);
      await admin.end();
    }
  },
});
