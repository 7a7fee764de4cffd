/**
 * Open findings of the stop 45b outsider (branch attack45b), outside the
 * suite (the name does not end in `_test.ts`): run with
 * `deno test --config deno.dev.json --no-prompt --allow-all tests/e2e/open_findings_stop45b.ts`.
 */

import { assert, assertEquals } from "@std/assert";
import postgres from "postgres";
import { openPostgres } from "../../lib/db/postgres/postgres.ts";
import { needs, openFixture, READ_OPTIONS } from "../_db.ts";

// What I did: at the driver level (below the connection's session share,
// lib/db/session_share.ts, which lets at most four calls of a connection
// in), 18 calls at once on one PostgreSQL connection: six reads of a 24 MB
// value with a 1 MB answer (each closes its session under postgres.js
// mid-row), six plain reads, six reads with bound values; three rounds.
// What happened: a plain or bound read failed with "the database session
// closed before the read began: a session of the pool closed; try again".
// Each session dbport closes refuses every reserve() waiting
// (pg_session.ts requeueWaiters: postgres.js would forget the first one),
// and a call is asked again only three times in all (askingAgain), so a
// read queued behind more than three such closes fails. Not caused by the
// parking (the same with parking turned off) and not reached through MCP
// while the share keeps calls to the pool's size; any caller of the driver
// above four at a time (a future tool, a bench) meets it.
// What should happen: a read that nothing ran for is asked again for as
// long as its own deadline allows, not failed after three refusals.
Deno.test({
  name:
    "open 45b: reads queued behind more than three sessions closed mid-row are not failed with 'try again'",
  ...needs("postgres"),
  async fn() {
    await using fixture = await openFixture("postgres");
    const driver = openPostgres({
      url: fixture.url,
      secrets: [],
      wiredReads: true,
    });
    try {
      for (let round = 0; round < 3; round++) {
        const calls = Array.from({ length: 18 }, async (_, j) => {
          const n = round * 100 + j;
          if (j % 3 === 0) {
            const r = await driver.query(
              `select ${n} as n, repeat('x', 24000000) as big`,
              { ...READ_OPTIONS, maxBytes: 1_000_000, maxCellChars: 100 },
            );
            assertEquals(r.rows[0]?.[0], n);
            assert(r.truncated);
          } else if (j % 3 === 1) {
            const r = await driver.query(`select ${n} as n`, READ_OPTIONS);
            assertEquals(r.rows, [[n]]);
          } else {
            const r = await driver.query("select $1::int + 0 as n", {
              ...READ_OPTIONS,
              params: [n],
            });
            assertEquals(r.rows, [[n]]);
          }
        });
        await Promise.all(calls);
      }
    } finally {
      await driver.close();
    }
  },
});

// What I did: one caller alternating, one after another, 40 plain reads
// (wired, their session parked) and 40 reads with bound values (postgres.js's
// path: the parked session is given back for them), then counted my
// sessions.
// What happened: four sessions — the pool's maximum — where one served
// every call: reserveSession gave the parked session back and asked
// postgres.js for a session in the same turn, before the given-back one was
// released, so postgres.js opened another while under its max.
// What should happen: the given-back session serves the call; one session
// (two at most on a noisy machine). Tried: reserveSession asking
// postgres.js only once the parked session is released (giveBackOne
// returning the release's promise) — one session, but the test "sessions
// ended at random under parked-session reads" then failed two runs in
// three with an uncaught "read ECONNRESET" (a session released idle and
// ended before the deferred reserve() took it): left open, not committed.
Deno.test({
  name:
    "open 45b: plain and bound reads alternating one after another reuse one session, not the pool's four",
  ...needs("postgres"),
  async fn() {
    await using fixture = await openFixture("postgres");
    const app = `dbport_o45b_${crypto.randomUUID().slice(0, 8)}`;
    const url = new URL(fixture.url);
    url.searchParams.set("application_name", app);
    const driver = openPostgres({
      url: url.toString(),
      secrets: [],
      wiredReads: true,
    });
    const admin = postgres(fixture.url, { max: 1, onnotice: () => {} });
    try {
      for (let i = 0; i < 40; i++) {
        const plain = await driver.query(`select ${i} as n`, READ_OPTIONS);
        assertEquals(plain.rows, [[i]]);
        const bound = await driver.query("select $1::int + 0 as n", {
          ...READ_OPTIONS,
          params: [i],
        });
        assertEquals(bound.rows, [[i]]);
      }
      const [row] = await admin`select count(*)::int as n
        from pg_stat_activity where application_name = ${app}`;
      assert((row?.n ?? 0) <= 2, `${row?.n} sessions`);
    } finally {
      await driver.close();
      await admin.end();
    }
  },
});

// What I did: the test "sessions ended under plain and bound reads leave no
// uncaught ECONNRESET" of outsider_stop45b_test.ts with wired reads on
// (parking): four loops of plain and bound reads for 5 s while my backends
// were ended every 100 to 300 ms.
// What happened: once (after the isOrphanedClose fix), the run did not end
// in 10 minutes: a read or the driver's close never settled. Not
// investigated in the time, and not seen again in three later runs of
// this test (which bounds the wait at 60 s).
// What should happen: every read settles (answered or failed) within its
// timeout and the stop grace; close() settles.
Deno.test({
  name: "open 45b: wired plain and bound reads under ended sessions all settle",
  ...needs("postgres"),
  async fn() {
    await using fixture = await openFixture("postgres");
    const app = `dbport_o45b_${crypto.randomUUID().slice(0, 8)}`;
    const url = new URL(fixture.url);
    url.searchParams.set("application_name", app);
    const driver = openPostgres({
      url: url.toString(),
      secrets: [],
      wiredReads: true,
    });
    const admin = postgres(fixture.url, { max: 1, onnotice: () => {} });
    let stop = false;
    const loop = async (k: number) => {
      for (let i = 0; !stop; i++) {
        const n = k * 100_000 + i;
        const result = await driver.query(
          i % 2 === 0 ? `select ${n} as n` : "select $1::int + 0 as n",
          i % 2 === 0 ? READ_OPTIONS : { ...READ_OPTIONS, params: [n] },
        ).catch((e: Error) => e);
        if (!(result instanceof Error)) assertEquals(result.rows, [[n]]);
      }
    };
    const loops = [0, 1, 2, 3].map(loop);
    const until = performance.now() + 5_000;
    while (performance.now() < until) {
      await new Promise((r) => setTimeout(r, 100 + Math.random() * 200));
      await admin`select pg_terminate_backend(pid)
        from pg_stat_activity where application_name = ${app}`;
    }
    stop = true;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const outcome = await Promise.race([
      Promise.all(loops).then(() => driver.close()).then(() => "done"),
      new Promise<string>((r) => timer = setTimeout(() => r("hung"), 60_000)),
    ]);
    clearTimeout(timer);
    await admin.end();
    assertEquals(outcome, "done");
  },
});
