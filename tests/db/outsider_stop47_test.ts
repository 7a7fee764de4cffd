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
