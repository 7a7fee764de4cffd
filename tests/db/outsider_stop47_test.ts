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
import { needs, POSTGRES_URL, READ_OPTIONS } from "../_db.ts";
import { waitUntil } from "../_wait.ts";
import { outcome } from "../_outsider.ts";

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

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

Deno.test({
  name:
    "held: a bound read and an export on a replaced (not yet ended) pool, cancelled by their caller, stop on the server at once",
  ...needs("postgres"),
  async fn() {
    const admin = postgres(POSTGRES_URL, { max: 1, onnotice: () => {} });
    const { driver, app } = ownPostgresDriver(POSTGRES_URL, "dbport_s47c");
    try {
      const control = new AbortController();
      const options = { ...READ_OPTIONS, signal: control.signal };
      const bound = outcome(
        driver.query("SELECT pg_sleep($1::float8) AS s, 1 AS bound", {
          ...options,
          params: [6],
        }),
      );
      const exported = outcome(
        driver.streamRead!(
          "SELECT pg_sleep(6) AS s, 2 AS exported",
          options,
          async () => {},
        ),
      );
      const other = outcome(
        driver.query("SELECT pg_sleep(6) AS s, 3 AS other", READ_OPTIONS),
      );
      await waitUntil(
        "the three reads run",
        async () => (await running(admin, app, "%pg_sleep%")).length === 3,
      );
      const [victim] = await running(admin, app, "%3 AS other%");
      await admin.unsafe("select pg_terminate_backend($1)", [victim!.pid]);
      assert((await other).startsWith("failed"));
      const cancelled = performance.now();
      control.abort();
      for (const answer of [await bound, await exported]) {
        assert(/cancelled/.test(answer), answer);
      }
      await waitUntil(
        "the cancelled statements stop",
        async () => (await running(admin, app)).length === 0,
        { timeoutMs: 1_000 },
      );
      assert(performance.now() - cancelled < 1_500);
    } finally {
      await driver.close();
      await endAll(admin, app);
      await admin.end();
    }
  },
});

Deno.test({
  name:
    "postgres: a read cancelled by its caller while it waits for a session fails at once, not when a session frees",
  ...needs("postgres"),
  async fn() {
    // wiredRead and inReadTransaction look at the signal once, before
    // reserveSession; the wait for a session (postgres.js's queue, the
    // pool's four sessions busy) never looks at it again: a cancelled read
    // held its caller — and its place ahead of live reads in the queue —
    // until a session freed (2 s here), then failed "not started".
    const admin = postgres(POSTGRES_URL, { max: 1, onnotice: () => {} });
    const { driver, app } = ownPostgresDriver(POSTGRES_URL, "dbport_s47d");
    try {
      const busy = Promise.allSettled(
        [1, 2, 3, 4].map(() =>
          driver.query("SELECT pg_sleep(2) AS busy", READ_OPTIONS)
        ),
      );
      await waitUntil(
        "the pool's four sessions are busy",
        async () => (await running(admin, app, "%pg_sleep%")).length === 4,
      );
      for (const params of [[], [1]]) {
        const control = new AbortController();
        const waiting = outcome(
          driver.query(
            params.length === 0 ? "SELECT 1 AS one" : "SELECT $1::int AS one",
            { ...READ_OPTIONS, params, signal: control.signal },
          ),
        );
        await sleep(100);
        control.abort();
        const aborted = performance.now();
        const answer = await waiting;
        const late = Math.round(performance.now() - aborted);
        assert(/cancelled/.test(answer), answer);
        assert(
          late < 500,
          `params ${params.length}: settled ${late} ms after its cancel`,
        );
      }
      await busy;
    } finally {
      await driver.close();
      await endAll(admin, app);
      await admin.end();
    }
  },
});

Deno.test({
  name:
    "held: dbport's own pool, through the socket factory, leaves no session after close whatever its catalog calls met",
  ...needs("postgres"),
  async fn() {
    const admin = postgres(POSTGRES_URL, { max: 1, onnotice: () => {} });
    const { driver, app } = ownPostgresDriver(POSTGRES_URL, "dbport_s47f");
    const options = { signal: new AbortController().signal, timeoutMs: 5_000 };
    try {
      for (let round = 0; round < 3; round++) {
        const calls = [
          driver.version(options),
          driver.listSchemas(options),
          driver.check("SELECT 1", "read", options),
        ].map(outcome);
        if (round === 1) await endAll(admin, app);
        await Promise.all(calls);
      }
      // Queued catalog calls as it closes.
      const late = [driver.version(options), driver.listSchemas(options)]
        .map(outcome);
      await driver.close();
      await Promise.all(late);
      await sleep(200);
      assertEquals(
        (await admin.unsafe(
          "select count(*)::int as n from pg_stat_activity where application_name = $1",
          [app],
        ))[0]?.n,
        0,
        "sessions left after close",
      );
    } finally {
      await driver.close();
      await admin.end();
    }
  },
});

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
      // streamRead answers { rows: 1 }: `outcome` shows its row count.
      assertEquals(await exported, "answered 1", "the export");
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
      // Stopped on the server, and said so.
      for (const answer of await Promise.all([bound, exported])) {
        assert(/the connection was closed/.test(answer), answer);
      }
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
        const ended = (await admin.unsafe(
          "select pid from pg_stat_activity where application_name = $1",
          [app],
        )).map((row) => row.pid as number);
        await endAll(admin, app);
        // The sessions ended are gone (a session the pool opens again
        // meanwhile for a reserve() the server refused at once is not one
        // of them: postgres.js keeps such a reserve() queued).
        await waitUntil(
          "the ended sessions gone",
          async () =>
            (await admin.unsafe(
              "select 1 from pg_stat_activity where pid = any($1::int[])",
              [ended],
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
