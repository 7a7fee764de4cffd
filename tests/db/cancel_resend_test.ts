/**
 * A cancel that lands as a PostgreSQL statement begins must still stop it
 * (lib/db/postgres/pg_cancel.ts). A backend drops a cancel request that
 * finds it waiting for a command — before it has read the statement's
 * batch, or between an extended-protocol batch's messages — so a request
 * that beats the statement to the server was lost: the statement ran on,
 * its read waited the stop's 5 s grace and failed as a lost session, its
 * pool replaced (an outsider: cancels within ~20 ms of a statement's
 * start). A proxy that holds back what sessions send by 40 ms, while cancel
 * requests pass at once, makes every cancel within the first 40 ms land
 * before the statement (tests/_tcp_proxy.ts `slowStatementProxy`).
 *
 * Each driver's sessions are named (application_name): only this test's
 * backends are counted.
 */

import { assert, assertEquals } from "@std/assert";
import postgres from "postgres";
import { DbError } from "../../lib/db/errors.ts";
import type { Driver, QueryOptions } from "../../lib/db/types.ts";
import { ownPostgresDriver } from "../_pg_driver.ts";
import { needs, POSTGRES_URL, READ_OPTIONS } from "../_db.ts";
import { slowStatementProxy } from "../_tcp_proxy.ts";

type Path = "wired" | "bound" | "write";

/** How a statement runs on each path: dbport's reader, postgres.js's. */
function call(path: Path, seconds: number, signal: AbortSignal) {
  const options: QueryOptions = {
    ...READ_OPTIONS,
    mode: path === "write" ? "write" : "read",
    timeoutMs: 60_000,
    signal,
    ...(path === "bound" ? { params: [1] } : {}),
  };
  const text = path === "bound"
    ? `select pg_sleep(${seconds})::text as slept where $1::int = 1`
    : `select pg_sleep(${seconds})::text as slept`;
  return { text, options };
}

/** The call's outcome as text: its rows, or its error's kind and message. */
async function outcome(work: Promise<{ rows: unknown[][] }>): Promise<string> {
  try {
    return `answered ${JSON.stringify((await work).rows)}`;
  } catch (error) {
    return error instanceof DbError
      ? `${error.kind}: ${error.message}`
      : `failed: ${String(error)}`;
  }
}

/** Backends of `app` running `pg_sleep` now. */
async function sleeping(sql: postgres.Sql, app: string): Promise<number> {
  const [row] = await sql`
    select count(*)::int as n from pg_stat_activity
    where application_name like ${app + "%"} and state = 'active'
      and query like '%pg_sleep(%'`;
  return row!.n as number;
}

async function pid(driver: Driver): Promise<number> {
  const result = await driver.query(
    "select pg_backend_pid() as pid",
    READ_OPTIONS,
  );
  return Number(result.rows[0]![0]);
}

const OFFSETS_MS = [0, 1, 2, 5, 10, 20, 30];

for (const path of ["wired", "bound", "write"] as const) {
  Deno.test({
    name:
      `postgres ${path}: a cancel that lands before the backend has read the statement still stops it, at once, on its own session`,
    ...needs("postgres"),
    async fn() {
      // What the outsider saw: cancels within ~20 ms of a statement's
      // start were ignored; the call answered after 5 s as a lost session
      // and the statement ran on to its end. Here: a 30 s pg_sleep,
      // cancelled 0–30 ms after the call on a warm session.
      // Statements reach the server 150 ms late (40 ms was too little on a
      // loaded machine: the abort's timer fired after the statement had
      // arrived, and nothing needed sending again — seen in CI).
      const proxy = slowStatementProxy(new URL(POSTGRES_URL), 150);
      const { driver, app } = ownPostgresDriver(proxy.url, "cresend");
      const admin = postgres(POSTGRES_URL, { max: 1, onnotice: () => {} });
      try {
        const pids = new Set<number>([await pid(driver)]);
        // A write sends its statement once its BEGIN was answered (its
        // trip 150 ms late): its offsets count from then.
        const base = path === "write" ? 155 : 0;
        for (const offset of OFFSETS_MS) {
          const abort = new AbortController();
          const { text, options } = call(path, 30, abort.signal);
          const work = driver.query(text, options);
          const timer = setTimeout(() => abort.abort(), base + offset);
          const said = await outcome(work);
          clearTimeout(timer);
          // A write sends its statement once its BEGIN was answered: one
          // cancelled before that was not started, which is as good.
          assert(
            said ===
                "cancelled: the query was stopped on the database: the request was cancelled" ||
              (path === "write" &&
                said ===
                  "cancelled: the query was not started: the request was cancelled"),
            `cancelled ${base + offset} ms after the call: ${said}`,
          );
          // Answered once the statement ended: nothing of it runs on.
          assertEquals(
            await sleeping(admin, app),
            0,
            `offset ${base + offset} ms`,
          );
          // The next call is served: no session lost. (Since outsider stop
          // 50 a session whose stop sent its request again is closed, not
          // reused — the first request, dropped here, may as well land
          // later through a hop: docs/security.md "Reads on PostgreSQL" —
          // so each stop here may cost one new session, no more.)
          pids.add(await pid(driver));
        }
        assert(proxy.stats.cancels > OFFSETS_MS.length, "sent again");
        assert(
          pids.size <= OFFSETS_MS.length + 1,
          `sessions: ${[...pids].join(", ")}`,
        );
      } finally {
        await driver.close();
        await admin.end();
        await proxy.close();
      }
    },
  });
}

for (const path of ["wired", "bound"] as const) {
  Deno.test({
    name:
      `postgres ${path}: a cancel request sent again that arrives after its statement ended never stops the next client's read on the session`,
    ...needs("postgres"),
    async fn() {
      // The first request lands before the statement (dropped), the one
      // sent again is held back 600 ms: the statement (150 ms) has ended
      // by itself long before it arrives. The next read on the session —
      // bob's, 0.8 s — must not be what it stops.
      const proxy = slowStatementProxy(new URL(POSTGRES_URL), 150, [0, 600]);
      const { driver } = ownPostgresDriver(proxy.url, "cresend_late");
      try {
        await pid(driver);
        const abort = new AbortController();
        const { text, options } = call(path, 0.15, abort.signal);
        const work = driver.query(text, options);
        // Once the statement was sent (it reaches the server 150 ms later).
        const timer = setTimeout(() => abort.abort(), 5);
        await outcome(work);
        clearTimeout(timer);
        assert(proxy.stats.cancels >= 2, `cancels: ${proxy.stats.cancels}`);
        const bob = call(path, 0.8, new AbortController().signal);
        assertEquals(
          await outcome(driver.query(bob.text, bob.options)),
          'answered [[""]]',
        );
      } finally {
        await driver.close();
        await proxy.close();
      }
    },
  });
}

for (const path of ["wired", "bound"] as const) {
  Deno.test({
    name:
      `postgres ${path}: a driver closed while a cancel request waits to be sent again leaves no timer`,
    ...needs("postgres"),
    async fn() {
      // The statement reaches the server 300 ms late: the first request is
      // dropped and the next waits its pause when the driver closes. The
      // test's sanitizers fail on any timer left.
      const proxy = slowStatementProxy(new URL(POSTGRES_URL), 300);
      const { driver } = ownPostgresDriver(proxy.url, "cresend_close");
      try {
        await pid(driver);
        const abort = new AbortController();
        const { text, options } = call(path, 2, abort.signal);
        const work = outcome(driver.query(text, options));
        // Sent (it reaches the server 300 ms later), then the driver closes
        // while the next request waits.
        await new Promise<void>((resolve) =>
          setTimeout(() => {
            abort.abort();
            resolve();
          }, 5)
        );
        while (proxy.stats.cancels === 0) {
          await new Promise((resolve) => setTimeout(resolve, 5));
        }
        await driver.close();
        const said = await work;
        assert(!said.startsWith("answered"), said);
      } finally {
        await driver.close();
        await proxy.close();
      }
    },
  });
}

Deno.test({
  name:
    "postgres wired: a statement that runs on though the server took every cancel request closes its own session only, its pool kept",
  ...needs("postgres"),
  async fn() {
    // Every cancel request is closed by the proxy without reaching the
    // server: each looks delivered, none stops anything (a statement the
    // server cannot interrupt). The read used to fail after the stop's
    // 5 s grace as a lost session ("connect"): its pool was replaced and
    // the connection shown as failing (lib/db/pool.ts). Now it answers
    // as cancelled, saying the statement may run on; the pool's other
    // session serves the next read.
    const proxy = slowStatementProxy(new URL(POSTGRES_URL), 0, [], true);
    const { driver, app } = ownPostgresDriver(proxy.url, "cresend_deaf");
    const admin = postgres(POSTGRES_URL, { max: 1, onnotice: () => {} });
    try {
      // Two sessions: one is parked (the read below takes it), the other
      // idles in the pool.
      const two = "select pg_backend_pid() as pid, pg_sleep(0.2)::text";
      const opened = await Promise.all([
        driver.query(two, READ_OPTIONS),
        driver.query(two, READ_OPTIONS),
      ]);
      const pids = opened.map((result) => Number(result.rows[0]![0]));
      const abort = new AbortController();
      const { text, options } = call("wired", 6.5, abort.signal);
      const work = driver.query(text, options);
      const timer = setTimeout(() => abort.abort(), 50);
      const said = await outcome(work);
      clearTimeout(timer);
      assert(
        said.startsWith(
          "cancelled: the request was cancelled: the database took the cancel request but the statement had not stopped 5 s later",
        ),
        said,
      );
      assert(proxy.stats.cancels > 1, `cancels: ${proxy.stats.cancels}`);
      const next = await pid(driver);
      assert(pids.includes(next), `${next} not of ${pids.join(", ")}`);
    } finally {
      await driver.close();
      // The statement's backend, its session closed, until pg_sleep ends.
      await admin.unsafe(
        `select pg_terminate_backend(pid) from pg_stat_activity where application_name like '${app}%'`,
      );
      await admin.end();
      await proxy.close();
    }
  },
});
