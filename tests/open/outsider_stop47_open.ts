/**
 * Open findings of the stop-47 outsider (issue 38's closing note): each
 * test here FAILS on today's code and is kept out of the suite (the file is
 * not named *_test.ts) until its bug is fixed — then it moves to
 * tests/db/outsider_stop47_test.ts. Run one with
 * `deno test --config deno.dev.json --allow-all tests/open/outsider_stop47_open.ts`.
 */
/**
 * An outsider's attacks on the reads' pool replaced after a lost session
 * (PgPools.lostFrom, pg_session.ts `askingAgain`) and on the socket factory
 * every pool now opens its sessions through (`untilEnded`, commit 9137897),
 * with parking on by default: a read on a replaced pool is answered or
 * stopped on the server, never left running there once dbport gave up.
 */

import { assert, assertEquals } from "@std/assert";
import postgres from "postgres";
import { ownPostgresDriver } from "../_pg_driver.ts";
import { needs, openFixture, POSTGRES_URL, READ_OPTIONS } from "../_db.ts";
import { waitUntil } from "../_wait.ts";
import { savedConnection, serverWith } from "../_connections.ts";
import { modernRequest, postModern } from "../_server.ts";
import { textOf } from "../_outsider.ts";

type Admin = ReturnType<typeof postgres>;

/** Statements of `app` running now (`like`: their text contains it). */
async function running(admin: Admin, app: string, like = "%"): Promise<
  { pid: number; query: string }[]
> {
  const rows = await admin.unsafe(
    "select pid, query from pg_stat_activity where application_name = $1 and state = 'active' and query like $2",
    [app, like],
  );
  return rows.map((row) => ({
    pid: Number(row.pid),
    query: String(row.query),
  }));
}

async function endAll(admin: Admin, app: string): Promise<void> {
  await admin.unsafe(
    "select pg_terminate_backend(pid) from pg_stat_activity where application_name = $1",
    [app],
  );
}

/** A promise's outcome as text, at once. */
function outcome(work: Promise<unknown>): Promise<string> {
  return work.then(
    (value) =>
      `answered ${
        JSON.stringify(
          (value as { rows?: unknown } | undefined)?.rows ?? value,
        )
      }`,
    (error) => `failed: ${String(error)}`,
  );
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

Deno.test({
  name:
    "postgres: a bound read and an export running when another read's session is lost are answered, not ended with their replaced pool 5 s later (nor left running on the server)",
  ...needs("postgres"),
  async fn() {
    // PgPools.lostFrom ends the replaced pool with `end({ timeout: 5 })`:
    // postgres.js waits 5 s for its reserved sessions, then destroys them.
    // A wired read keeps its socket and is answered; a read on postgres.js's
    // path (a bound read, an export's cursor) fails "write
    // CONNECTION_DESTROYED" 5 s after a sibling session was lost, though
    // its own session was healthy and its timeout far off — and no cancel
    // request goes out (the pool has ended: `untilEnded` refuses it), so
    // its statement runs on for its whole statement_timeout.
    const admin = postgres(POSTGRES_URL, { max: 1, onnotice: () => {} });
    const { driver, app } = ownPostgresDriver(POSTGRES_URL, "dbport_s47a");
    try {
      const options = { ...READ_OPTIONS, timeoutMs: 20_000 };
      const started = performance.now();
      const bound = outcome(
        driver.query("SELECT pg_sleep($1::float8) AS s, 1 AS bound", {
          ...options,
          params: [6.5],
        }),
      );
      const exported = outcome(
        driver.streamRead!(
          "SELECT pg_sleep(6.5) AS s, 2 AS exported",
          options,
          async () => {},
        ),
      );
      const other = outcome(
        driver.query("SELECT pg_sleep(6.5) AS s, 3 AS other", options),
      );
      await waitUntil(
        "the three reads run",
        async () => (await running(admin, app, "%pg_sleep%")).length === 3,
      );
      // The third read's session is ended (an administrator, a network
      // loss): its pool is replaced.
      const [victim] = await running(admin, app, "%3 AS other%");
      await admin.unsafe("select pg_terminate_backend($1)", [victim!.pid]);
      assert((await other).startsWith("failed"), "the ended session's read");
      assertEquals(await bound, 'answered [["",1]]', "the bound read");
      assertEquals(await exported, 'answered {"rows":1}', "the export");
      assert(performance.now() - started >= 6_000);
      await sleep(300);
      assertEquals(
        await running(admin, app),
        [],
        "statements left running on the server",
      );
    } finally {
      await driver.close();
      await endAll(admin, app);
      await admin.end();
    }
  },
});

Deno.test({
  name:
    "postgres close: a bound read and an export running when the driver closes leave no statement running on the server after close",
  ...needs("postgres"),
  // The failed reads' own timers outlive the test on the current code.
  sanitizeOps: false,
  async fn() {
    // close() ends the reads' pool with `end({ timeout: 1 })`: a read on
    // postgres.js's path still running is destroyed after 1 s, no cancel
    // request sent, and its statement runs on the server after close for
    // up to its statement_timeout (the pool's connections replaced by a
    // connection edit are closed so while their calls run: ConnectionPool
    // #retire). A wired read (held) runs on and is answered after close.
    const admin = postgres(POSTGRES_URL, { max: 1, onnotice: () => {} });
    const { driver, app } = ownPostgresDriver(POSTGRES_URL, "dbport_s47b");
    try {
      const options = { ...READ_OPTIONS, timeoutMs: 20_000 };
      const bound = outcome(
        driver.query("SELECT pg_sleep($1::float8) AS s, 1 AS bound", {
          ...options,
          params: [4],
        }),
      );
      const exported = outcome(
        driver.streamRead!(
          "SELECT pg_sleep(4) AS s, 2 AS exported",
          options,
          async () => {},
        ),
      );
      await waitUntil(
        "both reads run",
        async () => (await running(admin, app, "%pg_sleep%")).length === 2,
      );
      await driver.close();
      await Promise.all([bound, exported]);
      await sleep(300);
      assertEquals(
        (await running(admin, app)).map((r) => r.query),
        [],
        "statements left running on the server after close",
      );
    } finally {
      await endAll(admin, app);
      await admin.end();
    }
  },
});

Deno.test({
  name:
    "postgres through MCP: a session ended under one client's read does not fail another client's read that waited for a session (nothing ran) with not_connected",
  ...needs("postgres"),
  async fn() {
    // The driver replaces its reads' pool when a session is lost, and a
    // read waiting for a session is asked again of the new pool (commit
    // d948652). But ConnectionPool (lib/db/pool.ts #observed) closes the
    // whole driver on the lost read's "connect" error: every read still
    // waiting for a session of it fails "not_connected: … the database
    // session closed before the read began: the connection was closed; try
    // again" (a bound read or an export running fails a second later: see
    // the close test above). Seen under an administrator ending one session
    // every ~150 ms: 6 of 100 reads answered.
    await using fixture = await openFixture("postgres", { ownDatabase: true });
    const dbname = new URL(fixture.url).pathname.slice(1);
    const admin = postgres(fixture.url, { max: 2, onnotice: () => {} });
    const db = savedConnection(fixture, "o47_wait");
    await using server = await serverWith([db]);
    const table = `"${fixture.schema}".authors`;
    const ask = (client: string, query: string) =>
      postModern(
        server.url,
        modernRequest(
          "tools/call",
          {
            name: "execute_query",
            arguments: { connection_id: db.id, query },
          } as never,
          crypto.randomUUID(),
          {
            "io.modelcontextprotocol/clientInfo": {
              name: client,
              version: "1",
            },
          },
        ),
      ).then(textOf);
    const lockWaiters = async () =>
      Number(
        (await admin.unsafe(
          "select count(*)::int as n from pg_stat_activity where datname = $1 and wait_event_type = 'Lock'",
          [dbname],
        ))[0]?.n,
      );
    let release = () => {};
    try {
      assert((await ask("warm", "select 0 as n")).includes('"rows":[[0]]'));
      const released = new Promise<void>((resolve) => release = resolve);
      const locked = admin.begin(async (tx) => {
        await tx.unsafe(`lock table ${table} in access exclusive mode`);
        await released;
      });
      await waitUntil(
        "the table locked",
        async () =>
          (await admin.unsafe(
            `select 1 from pg_locks where relation = '${table}'::regclass and granted and mode = 'AccessExclusiveLock'`,
          )).length === 1,
      );
      // Three clients' reads hold the sessions the connection gives out,
      // waiting on the lock; a fourth client's read waits for a session.
      const blocked = [1, 2, 3].map((i) =>
        ask(`c${i}`, `select count(*) as c, ${i} as n from ${table}`)
      );
      await waitUntil(
        "three reads wait on the lock",
        async () => (await lockWaiters()) === 3,
      );
      const waiting = ask("c4", "select 4 as n");
      await sleep(500);
      assertEquals(
        await lockWaiters(),
        3,
        "the fourth read waits for a session",
      );
      // An administrator ends the first read's session.
      await admin.unsafe(
        "select pg_terminate_backend(pid) from pg_stat_activity where datname = $1 and wait_event_type = 'Lock' and query like '%1 as n%'",
        [dbname],
      );
      await sleep(300);
      release();
      await locked;
      const answers = await Promise.all(blocked);
      assert(/not_connected/.test(answers[0]!), answers[0]);
      assert(answers[1]!.includes('"rows":[["2",2]]'), answers[1]);
      assert(answers[2]!.includes('"rows":[["2",3]]'), answers[2]);
      const answer = await waiting;
      assert(
        answer.includes('"rows":[[4]]'),
        `the waiting read: ${answer.slice(0, 300)}`,
      );
    } finally {
      release();
      await admin.end();
    }
  },
});

Deno.test({
  name:
    "postgres: a catalog call after the server ended dbport's own idle sessions answers (reconnects), not read ECONNRESET / EPIPE",
  ...needs("postgres"),
  async fn() {
    // dbport's own pool (catalog, vetting: PgPools.meta) keeps its idle
    // sessions; one the server ends while idle (an administrator,
    // idle_session_timeout, a restart) is still taken for the next catalog
    // statement, which fails "read ECONNRESET" or "This socket has been
    // ended by the other party [EPIPE]" — through MCP a not_connected
    // answer, and the whole driver closed (pool.ts). The reads' pool asks
    // such a read again (pg_wired.ts diedParked); this pool does not. Fails
    // before commit 9137897 too (postgres.js's own sockets).
    const admin = postgres(POSTGRES_URL, { max: 1, onnotice: () => {} });
    const { driver, app } = ownPostgresDriver(POSTGRES_URL, "dbport_s47e");
    const options = { signal: new AbortController().signal, timeoutMs: 5_000 };
    try {
      // The race (the call written before dbport saw the close) is won
      // most times: five rounds.
      for (let round = 0; round < 5; round++) {
        await Promise.all([
          driver.version(options),
          driver.check("SELECT 1", "read", options),
        ]);
        await endAll(admin, app);
        await waitUntil(
          "the ended sessions gone",
          async () =>
            (await admin.unsafe(
              "select 1 from pg_stat_activity where application_name = $1",
              [app],
            )).length === 0,
        );
        const answers = await Promise.all([
          outcome(driver.version(options)),
          outcome(driver.listSchemas(options)),
        ]);
        for (const answer of answers) {
          assert(answer.startsWith("answered"), `round ${round}: ${answer}`);
        }
      }
    } finally {
      await driver.close();
      await admin.end();
    }
  },
});
