/**
 * An outsider's attacks on closing a PostgreSQL driver (PgPools.close and
 * retirePool, commit 780219a) and on parked sessions (pg_parked.ts), with
 * parking on: a closed driver keeps no session open and answers no read,
 * whatever its reads' sessions do while it closes.
 */

import { assert, assertEquals } from "@std/assert";
import postgres from "postgres";
import { setParking } from "../../lib/db/postgres/pg_parked.ts";
import { openPostgres } from "../../lib/db/postgres/postgres.ts";
import { ownPostgresDriver } from "../_pg_driver.ts";
import { slowRelay } from "../_slow_relay.ts";
import { needs, POSTGRES_URL, READ_OPTIONS } from "../_db.ts";
import { waitUntil } from "../_wait.ts";
import { exportQueryTool } from "../../lib/features/tools/export_query.ts";
import { RequestStopped } from "../../lib/server/inflight.ts";
import type { Cell, Driver, QueryOptions } from "../../lib/db/types.ts";
import {
  callContext,
  fakeConnection,
  fakeDeps,
  FakeDriver,
  principalWith,
} from "../_fake_driver.ts";

type Admin = ReturnType<typeof postgres>;

async function sessionsOf(admin: Admin, app: string): Promise<number> {
  // A backend leaves pg_stat_activity a moment after its client closed
  // (seen under load): up to 2 s for the count to reach 0. A session left
  // idle by a leak stays for postgres.js's 60 s idle timeout.
  let count = -1;
  for (let i = 0; i < 40; i++) {
    const [row] = await admin.unsafe(
      "select count(*)::int as n from pg_stat_activity where application_name = $1",
      [app],
    );
    count = Number(row?.n ?? -1);
    if (count === 0) break;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return count;
}

/** A promise's outcome as text, or "still waiting" after `ms`. */
async function outcome(work: Promise<unknown>, ms: number): Promise<string> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    return await Promise.race([
      work.then(
        (value) =>
          `answered ${
            JSON.stringify((value as { rows?: unknown } | undefined)?.rows)
          }`,
        (error) => `failed: ${String(error)}`,
      ),
      new Promise<string>((resolve) => {
        timer = setTimeout(() => resolve(`still waiting after ${ms} ms`), ms);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

Deno.test({
  name:
    "postgres close: a read whose session dies while the driver closes does not open a new pool after close (no read answered, no session left)",
  ...needs("postgres"),
  async fn() {
    // PgPools.close() retires and ends `this.sql`, but a read of that pool
    // losing its session afterwards calls `lostFrom(pool)`, which still sees
    // `pool === this.sql` and puts a fresh, unretired pool in its place:
    // reads asked of the closed driver are answered on it, and its session
    // idles for postgres.js's idle timeout (60 s) after close — the pool is
    // never ended. Seen as "4 sessions after close" under C=16 reads with
    // sessions ended by an administrator.
    const admin = postgres(POSTGRES_URL, { max: 1, onnotice: () => {} });
    try {
      for (const parking of [true, false]) {
        setParking(parking);
        const { driver, app } = ownPostgresDriver(POSTGRES_URL, "dbport_s46c");
        try {
          const slow = driver.query("SELECT pg_sleep(3) AS s", READ_OPTIONS);
          slow.catch(() => {});
          await waitUntil(
            "the slow read runs",
            async () =>
              (await admin.unsafe(
                "select 1 from pg_stat_activity where application_name = $1 and state = 'active' and query like '%pg_sleep(3)%'",
                [app],
              )).length === 1,
          );
          const closing = driver.close();
          // The session dies under the read while the driver closes (an
          // administrator, a network loss, the server restarting).
          await admin.unsafe(
            "select pg_terminate_backend(pid) from pg_stat_activity where application_name = $1",
            [app],
          );
          assert(
            (await outcome(slow, 8_000)).startsWith("failed"),
            `parking ${parking}: the read lost its session`,
          );
          assertEquals(
            await outcome(closing, 8_000),
            "answered undefined",
            `parking ${parking}`,
          );
          // A closed driver answers nothing more.
          const after = await outcome(
            driver.query("SELECT 1 AS one", READ_OPTIONS),
            8_000,
          );
          assert(
            after.startsWith("failed") && /closed/.test(after),
            `parking ${parking}: a read after close: ${after}`,
          );
          await new Promise((resolve) => setTimeout(resolve, 200));
          assertEquals(
            await sessionsOf(admin, app),
            0,
            `parking ${parking}: sessions left open after close`,
          );
        } finally {
          setParking(null);
          await driver.close();
          await admin.unsafe(
            "select pg_terminate_backend(pid) from pg_stat_activity where application_name = $1",
            [app],
          );
        }
      }
    } finally {
      await admin.end();
    }
  },
});

/**
 * A fake connection whose stream is a real PostgreSQL read (the vetting is
 * the fake's), and whose call is cancelled the moment that read ended: the
 * client has its `-33002` answer by then.
 */
class CancelledAsStreamEnds extends FakeDriver {
  constructor(readonly control: AbortController, readonly real: Driver) {
    super();
  }
  async streamRead(
    text: string,
    options: QueryOptions,
    onBatch: (columns: string[], rows: Cell[][]) => Promise<void>,
  ): Promise<{ rows: number }> {
    const streamed = await this.real.streamRead!(text, options, onBatch);
    this.control.abort(new RequestStopped("cancelled"));
    return streamed;
  }
}

Deno.test({
  name:
    "export_query cancelled as its stream ends leaves no file after the cancelled answer",
  ...needs("postgres"),
  async fn() {
    // createUnlessStopped (71db3fd) looks at the signal only before the
    // stream; a cancel landing after the last batch was written (or while
    // it was) lets the call finish and keep its file, which appears after
    // the client was answered -33002 — the same symptom CI saw.
    const control = new AbortController();
    const { driver: real } = ownPostgresDriver(POSTGRES_URL, "dbport_s46e");
    const driver = new CancelledAsStreamEnds(control, real);
    const connection = fakeConnection();
    const deps = fakeDeps([connection], { driver });
    const ctx = callContext(principalWith(["tools:read", "resources:read"]), {
      signal: control.signal,
    });
    const dir = deps.exportDirectory();
    try {
      const answer = await exportQueryTool(deps).call({
        connection_id: connection.id,
        query: "select g from generate_series(1, 120) g",
        format: "csv",
      }, ctx).then(() => "answered", (error) => `failed: ${String(error)}`);
      assert(control.signal.aborted);
      const files: string[] = [];
      try {
        for await (const entry of Deno.readDir(dir)) files.push(entry.name);
      } catch (error) {
        if (!(error instanceof Deno.errors.NotFound)) throw error;
      }
      assertEquals(
        files,
        [],
        `a cancelled export (${answer}) left its file`,
      );
    } finally {
      await real.close();
      await Deno.remove(dir, { recursive: true }).catch(() => {});
    }
  },
});

Deno.test({
  name:
    "postgres close without wired reads (TLS, DBPORT_PG_WIRE=0): a read connecting while the driver closes leaves no session open",
  ...needs("postgres"),
  // The session left behind holds postgres.js's idle timer (60 s).
  sanitizeOps: false,
  sanitizeResources: false,
  async fn() {
    // 780219a made a retired pool refuse to open a session only when it has
    // a socket factory of dbport's own (wired reads). Without one — every
    // TLS connection, a Unix socket, several hosts, DBPORT_PG_WIRE=0 —
    // postgres.js still reconnects the closed pool's session for the
    // reserve() dbport refused, after close resolved: it idles for the idle
    // timeout (60 s), the pool already ended.
    const admin = postgres(POSTGRES_URL, { max: 1, onnotice: () => {} });
    const relay = slowRelay(400);
    const app = `dbport_s46w_${crypto.randomUUID().slice(0, 8)}`;
    const url = new URL(relay.url);
    url.searchParams.set("application_name", app);
    const driver = openPostgres({
      url: url.toString(),
      secrets: [],
      wiredReads: false,
    });
    try {
      const waiting = driver.query("SELECT 2 AS two", READ_OPTIONS);
      // Its session is connecting (the relay holds it 400 ms).
      await new Promise((resolve) => setTimeout(resolve, 150));
      const closed = driver.close();
      const read = await outcome(waiting, 8_000);
      assert(read.startsWith("failed") && /closed/.test(read), read);
      await closed;
      // The relay's 400 ms, and then some.
      await new Promise((resolve) => setTimeout(resolve, 1_200));
      assertEquals(
        { accepted: relay.accepted(), sessions: await sessionsOf(admin, app) },
        { accepted: 1, sessions: 0 },
        "sessions opened and left open after close",
      );
    } finally {
      await admin.unsafe(
        "select pg_terminate_backend(pid) from pg_stat_activity where application_name = $1",
        [app],
      );
      relay.close();
      await admin.end();
    }
  },
});

Deno.test({
  name:
    "postgres close: catalog statements queued while the driver closes leave no session of dbport's own pool open",
  ...needs("postgres"),
  // The session left behind holds postgres.js's idle timer (60 s).
  sanitizeOps: false,
  sanitizeResources: false,
  async fn() {
    // dbport's own pool (`PgPools.meta`: the catalog, a statement's
    // vetting) has two sessions and no socket factory that refuses once
    // closed: a third statement queued while both connect is left in
    // postgres.js's queue when close() ends them, and postgres.js reopens a
    // session for it after close resolved — answered, then idle for the
    // idle timeout (60 s). DriverPool closes a driver whose call lost its
    // database while its other calls are vetted or list tables.
    const admin = postgres(POSTGRES_URL, { max: 1, onnotice: () => {} });
    const relay = slowRelay(400);
    const app = `dbport_s46m_${crypto.randomUUID().slice(0, 8)}`;
    const url = new URL(relay.url);
    url.searchParams.set("application_name", app);
    const driver = openPostgres({
      url: url.toString(),
      secrets: [],
      wiredReads: true,
    });
    try {
      const calls = [1, 2, 3].map(() =>
        driver.version(READ_OPTIONS).then(() => "answered", String)
      );
      // Both sessions of the pool are connecting (the relay holds them).
      await new Promise((resolve) => setTimeout(resolve, 150));
      const closed = driver.close();
      const outcomes = await outcome(Promise.all(calls), 8_000);
      assert(!outcomes.startsWith("still waiting"), outcomes);
      await closed;
      await new Promise((resolve) => setTimeout(resolve, 1_200));
      assertEquals(
        await sessionsOf(admin, app),
        0,
        `sessions left open after close (${relay.accepted()} opened)`,
      );
    } finally {
      await admin.unsafe(
        "select pg_terminate_backend(pid) from pg_stat_activity where application_name = $1",
        [app],
      );
      relay.close();
      await admin.end();
    }
  },
});

Deno.test({
  name:
    "held: with parking on, 16 reads racing a driver's close each get their own answer or a closed refusal, and no session outlives close",
  ...needs("postgres"),
  async fn() {
    const admin = postgres(POSTGRES_URL, { max: 1, onnotice: () => {} });
    setParking(true);
    try {
      for (let round = 0; round < 2; round++) {
        const { driver, app } = ownPostgresDriver(POSTGRES_URL, "dbport_s46r");
        try {
          // Sessions parked by a first wave.
          await Promise.all(
            Array.from(
              { length: 16 },
              (_, i) => driver.query(`SELECT ${i} AS n`, READ_OPTIONS),
            ),
          );
          const reads = Array.from({ length: 16 }, (_, i) =>
            outcome(
              driver.query(
                i % 3 === 0
                  ? `SELECT ${100 + i} AS n, pg_sleep(0.02)`
                  : `SELECT ${100 + i} AS n`,
                READ_OPTIONS,
              ),
              8_000,
            ));
          await new Promise((resolve) => setTimeout(resolve, round * 3));
          assertEquals(
            await outcome(driver.close(), 8_000),
            "answered undefined",
          );
          const outcomes = await Promise.all(reads);
          outcomes.forEach((text, i) =>
            assert(
              text.startsWith(`answered [[${100 + i}`) ||
                (text.startsWith("failed") && /closed/.test(text)),
              `read ${i}: ${text}`,
            )
          );
          assertEquals(await sessionsOf(admin, app), 0, `round ${round}`);
        } finally {
          await driver.close();
        }
      }
    } finally {
      setParking(null);
      await admin.end();
    }
  },
});

Deno.test({
  name:
    "held: with parking on, a read cancelled on a parked session stops at once and the next reads get their own answers",
  ...needs("postgres"),
  async fn() {
    setParking(true);
    const { driver } = ownPostgresDriver(POSTGRES_URL, "dbport_s46k");
    try {
      for (let i = 0; i < 4; i++) {
        // Parks the session the slow read then takes.
        await driver.query(`SELECT ${i} AS n`, READ_OPTIONS);
        const control = new AbortController();
        const started = performance.now();
        const slow = driver.query("SELECT pg_sleep(5)", {
          ...READ_OPTIONS,
          signal: control.signal,
        });
        setTimeout(() => control.abort(), 100);
        const stopped = await outcome(slow, 8_000);
        assert(/cancelled/.test(stopped), stopped);
        assert(performance.now() - started < 2_000, "stopped at once");
        const next = await Promise.all([
          driver.query(`SELECT ${200 + i} AS n`, READ_OPTIONS),
          driver.query(`SELECT ${300 + i} AS n`, READ_OPTIONS),
        ]);
        assertEquals(next.map((r) => r.rows), [[[200 + i]], [[300 + i]]]);
      }
    } finally {
      setParking(null);
      await driver.close();
    }
  },
});
