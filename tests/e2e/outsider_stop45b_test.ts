/**
 * Outsider attack of stop 45b (branch attack45b): wired PostgreSQL sessions
 * parked between reads (lib/db/postgres/pg_parked.ts), the next read taking
 * the parked session as it is, and the session-level settings lean reads
 * leave on it (lib/db/postgres/pg_lean.ts). Fixed from its findings: an
 * unsigned read (explain_query) ran under the last reader's
 * application_name, and a signed VACUUM too; a reset under postgres.js's
 * own type query escaped as an uncaught error; plain and bound reads in
 * turn grew the pool to four sessions; reads queued behind more than three
 * closed sessions failed with "try again".
 */

import { assert, assertEquals } from "@std/assert";
import postgres from "postgres";
import { openPostgres } from "../../lib/db/postgres/postgres.ts";
import { PARK_MS } from "../../lib/db/postgres/pg_parked.ts";
import { isOrphanedClose } from "../../lib/db/postgres/pg_session.ts";
import type { Driver } from "../../lib/db/types.ts";
import { ownPostgresDriver } from "../_pg_driver.ts";
import { saveConnections } from "../../lib/app/connections.ts";
import { inAppDir } from "../../lib/app/paths.ts";
import { CONNECTIONS_FILE } from "../../lib/base/identity.ts";
import { savedConnection, serverWith } from "../_connections.ts";
import { modernRequest, postModern } from "../_server.ts";
import { mainArgs, ROOT, spawnServe } from "../_main.ts";
import { textOf } from "../_outsider.ts";
import type { Signature } from "../../lib/db/signature.ts";
import { needs, openFixture, READ_OPTIONS } from "../_db.ts";
import { waitUntil } from "../_wait.ts";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A driver whose sessions start with an application_name of their own. */
function ownDriver(
  url: string,
  extra: Record<string, string> = {},
): { driver: Driver; app: string } {
  return ownPostgresDriver(url, "dbport_o45b", extra);
}

const signOf = (client: string): Signature => ({
  client,
  token: `tok_${client}`,
  call: crypto.randomUUID().slice(0, 8),
});

const WRITE_OPTIONS = { ...READ_OPTIONS, mode: "write" as const };

/** A read's own settings, read inside the read. */
const SETTINGS = `select current_setting('application_name') as app,
  current_setting('statement_timeout') as timeout,
  current_setting('transaction_read_only') as ro`;

/** A text past the 4,096 characters leavesNoState parses: a DISCARD ALL read. */
const pad = (text: string) => `${text} /* ${"x".repeat(4200)} */`;

// What I did: client A's signed plain SELECT (a lean read: it sets the
// session's application_name to dbport/A and leaves it so, parked), then an
// unsigned read that keeps BEGIN READ ONLY … DISCARD ALL (a text past 4,096
// characters; explain_query's reads are unsigned and EXPLAIN is never lean
// either) on the same session, reading its own application_name.
// What happened: the unsigned read ran as "dbport/A": its BEGIN sets no
// application_name, so the session-level one client A's read left stayed
// (pg_stat_activity named another client's statement).
// What should happen: a read runs under its own name or the session's
// startup one, never the one another client's read left on the session.
Deno.test({
  name:
    "outsider 45b: an unsigned read on a session a signed lean read parked does not run under that client's application_name",
  ...needs("postgres"),
  async fn() {
    await using fixture = await openFixture("postgres");
    const { driver, app } = ownDriver(fixture.url);
    try {
      await driver.query("select 1", {
        ...READ_OPTIONS,
        sign: signOf("alice"),
      });
      const long = await driver.query(pad(SETTINGS), READ_OPTIONS);
      assertEquals(long.rows[0]?.[0], app, "the long unsigned read's name");
      await driver.query("select 2", {
        ...READ_OPTIONS,
        sign: signOf("alice"),
      });
      const lean = await driver.query(SETTINGS, READ_OPTIONS);
      assertEquals(lean.rows[0]?.[0], app, "the lean unsigned read's name");
    } finally {
      await driver.close();
    }
  },
});

// What I did: two signed clients with different timeouts alternating lean
// reads and DISCARD ALL reads (long texts) on one parked session, each
// reading its own application_name, statement_timeout and read-only flag.
// What should happen (and happened): each read sees its own name and its
// own timeout (+5 s), always read-only.
Deno.test({
  name:
    "outsider 45b: clients alternating on a parked session each read with their own name, timeout, read-only",
  ...needs("postgres"),
  async fn() {
    await using fixture = await openFixture("postgres");
    const { driver } = ownDriver(fixture.url);
    try {
      const who = [
        { client: "alice", timeoutMs: 3_000 },
        { client: "bob", timeoutMs: 41_000 },
        { client: "carol", timeoutMs: 3_000 },
      ];
      for (let i = 0; i < 30; i++) {
        const { client, timeoutMs } = who[i % 3]!;
        const text = i % 4 === 3 ? pad(SETTINGS) : SETTINGS;
        const result = await driver.query(text, {
          ...READ_OPTIONS,
          timeoutMs,
          sign: signOf(client),
        });
        assertEquals(result.rows[0], [
          `dbport/${client}`,
          `${(timeoutMs + 5_000) / 1000}s`,
          "on",
        ], `read ${i}`);
      }
    } finally {
      await driver.close();
    }
  },
});

// What I did: sessions that the server ends itself while parked —
// idle_session_timeout of 300 ms (PostgreSQL 14+), under the 2 s parking —
// then reads again, several times, and counted my sessions.
// What should happen (and happened): each read after the server's FATAL
// answers right (the session spoke while parked: dropped, not handed to a
// read), nothing escapes as an unhandled rejection, and no session is left.
Deno.test({
  name:
    "outsider 45b: parked sessions ended by idle_session_timeout cost the next reads nothing",
  ...needs("postgres"),
  async fn() {
    await using fixture = await openFixture("postgres");
    const { driver, app } = ownDriver(fixture.url, {
      idle_session_timeout: "300",
    });
    const admin = postgres(fixture.url, { max: 1, onnotice: () => {} });
    try {
      for (let round = 0; round < 4; round++) {
        const reads = await Promise.all(
          Array.from(
            { length: 3 },
            (_, i) =>
              driver.query(`select ${round * 10 + i} as n`, READ_OPTIONS),
          ),
        );
        reads.forEach((r, i) => assertEquals(r.rows, [[round * 10 + i]]));
        await sleep(900);
      }
      const last = await driver.query("select 'after' as s", READ_OPTIONS);
      assertEquals(last.rows, [["after"]]);
    } finally {
      await driver.close();
      await waitUntil("my sessions closed", async () => {
        const [row] = await admin`select count(*)::int as n
          from pg_stat_activity where application_name = ${app}`;
        return row?.n === 0;
      }, { timeoutMs: 10_000 }).catch(() => {});
      await admin.end();
    }
  },
});

// What I did: a read running (pg_sleep 1 s) when the driver is closed, and
// a session parked besides it.
// What should happen (and happened): close() settles promptly, the read
// settles (answered or failed), and no session of mine is left open.
Deno.test({
  name:
    "outsider 45b: closing the driver with a read in flight and a session parked is prompt and leaves no session",
  ...needs("postgres"),
  async fn() {
    await using fixture = await openFixture("postgres");
    const { driver, app } = ownDriver(fixture.url);
    const admin = postgres(fixture.url, { max: 1, onnotice: () => {} });
    try {
      await Promise.all([
        driver.query("select 1", READ_OPTIONS),
        driver.query("select 2", READ_OPTIONS),
      ]);
      const slow = driver.query("select pg_sleep(1), 'slow' as s", READ_OPTIONS)
        .then(() => "answered", () => "failed");
      await sleep(200);
      const started = performance.now();
      await driver.close();
      const took = performance.now() - started;
      assert(took < 4_000, `close took ${Math.round(took)} ms`);
      let timer: ReturnType<typeof setTimeout> | undefined;
      const outcome = await Promise.race([
        slow,
        new Promise<string>((r) => timer = setTimeout(() => r("hung"), 8_000)),
      ]);
      clearTimeout(timer);
      assert(outcome !== "hung", "the read in flight never settled");
      let left = -1;
      await waitUntil("my sessions closed", async () => {
        const [row] = await admin`select count(*)::int as n
          from pg_stat_activity where application_name = ${app}`;
        left = row?.n ?? -1;
        return left === 0;
      }, { timeoutMs: 10_000 }).catch(() => {});
      assertEquals(left, 0, "sessions left open after close");
    } finally {
      await admin.end();
    }
  },
});

/** My sessions in pg_stat_activity, by state. */
async function sessionsOf(admin: postgres.Sql, app: string) {
  const rows =
    await admin`select coalesce(state, '') as state, count(*)::int as n
    from pg_stat_activity where application_name = ${app}
      or application_name like 'dbport/o45b%' group by 1`;
  return Object.fromEntries(
    rows.map((r) => [r.state as string, r.n as number]),
  );
}

// What I did: 200 calls at once on one connection, mixed — plain reads,
// reads with bound values, DISCARD ALL reads, writes, reads that fail
// (division by zero mid-rows, a syntax error), reads cut by the row cap,
// reads stopped by a 300 ms timeout, reads cancelled by their caller — each
// carrying a value of its own, in four rounds with parking in between.
// What should happen (and happened): every answer is its own query's,
// nothing hangs, and once parking is over my sessions are at most the
// pool's four, all idle.
Deno.test({
  name:
    "outsider 45b: mixed concurrent traffic on parked sessions: every answer its own, no session lost or leaked",
  ...needs("postgres"),
  async fn() {
    await using fixture = await openFixture("postgres");
    const { driver, app } = ownDriver(fixture.url);
    const admin = postgres(fixture.url, { max: 1, onnotice: () => {} });
    const table = `o45b_${crypto.randomUUID().slice(0, 8)}`;
    try {
      await driver.query(`create table ${table} (x int)`, WRITE_OPTIONS);
      let written = 0;
      for (let round = 0; round < 4; round++) {
        const calls = Array.from({ length: 50 }, async (_, j) => {
          const n = round * 1000 + j;
          const sign = signOf(`o45b${j % 3}`);
          const opts = { ...READ_OPTIONS, sign };
          switch (j % 9) {
            case 0: {
              const r = await driver.query(`select ${n} as n`, opts);
              assertEquals(r.rows, [[n]], `plain ${n}`);
              return;
            }
            case 1: {
              const r = await driver.query("select $1::int + 0 as n", {
                ...opts,
                params: [n],
              });
              assertEquals(r.rows, [[n]], `bound ${n}`);
              return;
            }
            case 2: {
              const r = await driver.query(pad(`select ${n} as n`), opts);
              assertEquals(r.rows, [[n]], `long ${n}`);
              return;
            }
            case 3: {
              const r = await driver.query(
                `insert into ${table} values (${n})`,
                { ...WRITE_OPTIONS, sign },
              );
              assertEquals(r.rowsAffected, 1);
              written++;
              return;
            }
            case 4: {
              const e = await driver.query(
                `select ${n} / (g - 3) from generate_series(1, 5) g`,
                opts,
              ).then(() => null, (e: Error) => e);
              assert(e !== null && /division by zero/.test(e.message), `${e}`);
              return;
            }
            case 5: {
              const e = await driver.query(`selec ${n}`, opts).then(
                () => null,
                (e: Error) => e,
              );
              assert(e !== null && /syntax/.test(e.message), `${e}`);
              return;
            }
            case 6: {
              const r = await driver.query(
                `select ${n} + g as n from generate_series(0, 99) g`,
                { ...opts, maxRows: 3 },
              );
              assertEquals(r.rows, [[n], [n + 1], [n + 2]]);
              assert(r.truncated);
              return;
            }
            case 7: {
              const e = await driver.query(
                `select pg_sleep(5), ${n}`,
                { ...opts, timeoutMs: 300 },
              ).then(() => null, (e: Error) => e);
              assert(e !== null, "a read past its timeout answered");
              return;
            }
            case 8: {
              const stop = new AbortController();
              const p = driver.query(`select pg_sleep(5), ${n}`, {
                ...opts,
                signal: stop.signal,
              }).then(() => null, (e: Error) => e);
              setTimeout(() => stop.abort(), 50 + (j % 5) * 20);
              assert((await p) !== null, "a cancelled read answered");
              return;
            }
          }
        });
        let timer: ReturnType<typeof setTimeout> | undefined;
        const all = Promise.all(calls).then(() => "done");
        const outcome = await Promise.race([
          all,
          new Promise<string>((r) =>
            timer = setTimeout(() => r("hung"), 60_000)
          ),
        ]);
        clearTimeout(timer);
        assertEquals(outcome, "done", `round ${round}`);
        if (round % 2 === 1) await sleep(PARK_MS + 500);
      }
      const count = await driver.query(
        `select count(*)::int from ${table}`,
        READ_OPTIONS,
      );
      assertEquals(count.rows, [[written]]);
      await sleep(PARK_MS + 1_000);
      const states = await sessionsOf(admin, app);
      const total = Object.values(states).reduce((a, b) => a + b, 0);
      assert(total <= 4, `sessions: ${JSON.stringify(states)}`);
      assertEquals(total, states["idle"] ?? 0, JSON.stringify(states));
    } finally {
      await driver.query(`drop table if exists ${table}`, WRITE_OPTIONS)
        .catch(() => {});
      await driver.close();
      await admin.end();
    }
  },
});

// What I did: 60 times, a read on the parked session cancelled by its
// caller at a moment just before or after it ends (a cancel request that
// may land after the statement), then at once another read on the pool.
// What should happen (and happened): the next read answers its own value,
// never "canceling statement due to user request".
Deno.test({
  name:
    "outsider 45b: a read cancelled near its end never cancels the next read on the parked session",
  ...needs("postgres"),
  async fn() {
    await using fixture = await openFixture("postgres");
    const { driver } = ownDriver(fixture.url);
    try {
      await driver.query("select 1", READ_OPTIONS);
      for (let i = 0; i < 60; i++) {
        const stop = new AbortController();
        const first = driver.query(
          `select pg_sleep(0.01), ${i}`,
          { ...READ_OPTIONS, signal: stop.signal },
        ).then(() => "answered", () => "stopped");
        setTimeout(() => stop.abort(), i % 15);
        await first;
        const next = await driver.query(
          `select pg_sleep(0.02), ${i} as n`,
          READ_OPTIONS,
        );
        assertEquals(next.rows[0]?.[1], i);
      }
    } finally {
      await driver.close();
    }
  },
});

// What I did: `main.ts serve` with a saved PostgreSQL connection; reads
// over HTTP (each reading its backend's pid) leave sessions parked, then
// SIGTERM at once.
// What should happen (and happened): the process exits promptly, and the
// backends of the parked sessions are gone from pg_stat_activity.
Deno.test({
  name:
    "outsider 45b: serve stopped with SIGTERM while sessions are parked exits promptly and closes them",
  ...needs("postgres"),
  async fn() {
    await using fixture = await openFixture("postgres");
    const home = await Deno.makeTempDir({ prefix: "o45b-term-" });
    const admin = postgres(fixture.url, { max: 1, onnotice: () => {} });
    let child: Deno.ChildProcess | null = null;
    try {
      const made = await new Deno.Command(Deno.execPath(), {
        args: mainArgs(
          "tokens",
          "create",
          "--name",
          "o45b",
          "--level",
          "readOnly",
          "--json",
        ),
        cwd: ROOT,
        env: { DBPORT_HOME: home, NO_COLOR: "1" },
        stdout: "piped",
        stderr: "piped",
      }).output();
      const out = JSON.parse(new TextDecoder().decode(made.stdout));
      const token: string = out.token ?? out.plaintext;
      const db = savedConnection(fixture, "o45b_term");
      await saveConnections(inAppDir(home, CONNECTIONS_FILE), [db]);
      const serve = await spawnServe(home);
      child = serve.child;
      const ask = (n: number) =>
        postModern(
          serve.url!,
          modernRequest("tools/call", {
            name: "execute_query",
            arguments: {
              connection_id: db.id,
              query: `select pg_backend_pid() as pid, ${n} as n`,
            },
          }, crypto.randomUUID()),
          { authorization: `Bearer ${token}` },
        );
      const answers = await Promise.all([ask(1), ask(2), ask(3)]);
      const pids = new Set<number>();
      for (const answer of answers) {
        const text = textOf(answer);
        const pid = /"pid":\s*(\d+)/.exec(text) ?? /\[\s*(\d+),/.exec(text);
        assert(pid !== null, text.slice(0, 400));
        pids.add(Number(pid[1]));
      }
      const started = performance.now();
      serve.child.kill("SIGTERM");
      await serve.readRest();
      await serve.child.status;
      await serve.child.stderr.cancel().catch(() => {});
      child = null;
      const took = performance.now() - started;
      assert(took < 8_000, `serve took ${Math.round(took)} ms to exit`);
      let left: number[] = [];
      await waitUntil("the parked backends gone", async () => {
        const rows = await admin`select pid from pg_stat_activity
          where pid = any(${[...pids]}::int[])`;
        left = rows.map((r) => r.pid as number);
        return left.length === 0;
      }, { timeoutMs: 10_000 }).catch(() => {});
      assertEquals(left, [], "backends left after serve exited");
    } finally {
      if (child !== null) {
        try {
          child.kill("SIGKILL");
        } catch { /* gone */ }
        await child.status;
        await child.stdout.cancel().catch(() => {});
        await child.stderr.cancel().catch(() => {});
      }
      await admin.end();
      await Deno.remove(home, { recursive: true });
    }
  },
});

// What I did: client alice's plain reads fill the pool (lean reads: each
// session left named dbport/alice, parked, then given back), then client
// bob's signed VACUUM — a write that refuses a transaction, so it runs on
// its own after ROLLBACK, where bob's SET LOCAL application_name no longer
// holds — held on a lock so that pg_stat_activity shows it running.
// What happened: bob's VACUUM ran as "dbport/alice".
// What should happen: bob's statement runs under bob's name.
Deno.test({
  name:
    "outsider 45b: a signed write run outside a transaction (VACUUM) runs under its own client's name, not the last reader's",
  ...needs("postgres"),
  async fn() {
    await using fixture = await openFixture("postgres");
    const { driver } = ownDriver(fixture.url);
    const admin = postgres(fixture.url, { max: 2, onnotice: () => {} });
    const table = `o45b_vac_${crypto.randomUUID().slice(0, 8)}`;
    try {
      await driver.query(`create table ${table} (x int)`, WRITE_OPTIONS);
      const alice = { ...READ_OPTIONS, sign: signOf("alice") };
      await Promise.all(
        Array.from(
          { length: 4 },
          (_, i) => driver.query(`select pg_sleep(0.2), ${i}`, alice),
        ),
      );
      let seen: string | null = null;
      let release!: () => void;
      const released = new Promise<void>((r) => release = r);
      const locked = admin.begin(async (tx) => {
        await tx.unsafe(`lock table ${table} in access exclusive mode`);
        await released;
      });
      await waitUntil("the table locked", async () => {
        const rows = await admin.unsafe(
          `select count(*)::int as n from pg_locks
            where relation = '${table}'::regclass and granted
              and mode = 'AccessExclusiveLock'`,
        );
        return rows[0]?.n === 1;
      }, { timeoutMs: 10_000 });
      const vacuum = driver.query(`vacuum ${table}`, {
        ...WRITE_OPTIONS,
        sign: signOf("bob"),
      });
      try {
        await waitUntil("the VACUUM waiting on the lock", async () => {
          const rows = await admin.unsafe(
            `select application_name from pg_stat_activity
              where query ilike '%vacuum ${table}%' and pid <> pg_backend_pid()
                and state = 'active'`,
          );
          seen = (rows[0]?.application_name as string | undefined) ?? null;
          return seen !== null;
        }, { timeoutMs: 10_000 });
      } finally {
        release();
        await locked;
      }
      await vacuum;
      assertEquals(seen, "dbport/bob");
    } finally {
      await driver.query(`drop table if exists ${table}`, WRITE_OPTIONS)
        .catch(() => {});
      await driver.close();
      await admin.end();
    }
  },
});

// What I did: reads of a 24 MB value with a 1 MB answer (the read closes its
// session under postgres.js mid-row) at once with plain reads and reads with
// bound values, four calls at a time (what the connection's session share
// lets in), eight rounds, then counted my sessions after parking.
// What should happen (and happened): the huge reads answer cut, every other
// read answers its own value, and my sessions end at most the pool's four.
Deno.test({
  name:
    "outsider 45b: huge values stopped mid-row among parked-session reads, four at a time: every answer its own, no session leaked",
  ...needs("postgres"),
  async fn() {
    await using fixture = await openFixture("postgres");
    const { driver, app } = ownDriver(fixture.url);
    const admin = postgres(fixture.url, { max: 1, onnotice: () => {} });
    try {
      for (let round = 0; round < 8; round++) {
        const calls = Array.from({ length: 4 }, async (_, j) => {
          const n = round * 100 + j;
          if (j === 0) {
            const r = await driver.query(
              `select ${n} as n, repeat('x', 24000000) as big`,
              { ...READ_OPTIONS, maxBytes: 1_000_000, maxCellChars: 100 },
            );
            assertEquals(r.rows[0]?.[0], n);
            assert(r.truncated, "a huge value's answer is cut");
          } else if (j < 3) {
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
      await sleep(PARK_MS + 1_000);
      const states = await sessionsOf(admin, app);
      const total = Object.values(states).reduce((a, b) => a + b, 0);
      assert(total <= 4, `sessions: ${JSON.stringify(states)}`);
    } finally {
      await driver.close();
      await admin.end();
    }
  },
});

// What I did: on a parked session (taken with no marker: the cancel request
// names the backend from the first read's marker), reads of pg_sleep(30)
// stopped by a 500 ms timeout or by their caller at 300 ms, alternating,
// each with a unique tag, and looked for the tag in pg_stat_activity.
// What should happen (and happened): each ends within a few seconds with
// its timeout or cancellation, and its statement is no longer running on
// the server; the session's next read answers right.
Deno.test({
  name:
    "outsider 45b: reads on a parked session stopped by timeout or cancel stop on the server",
  ...needs("postgres"),
  async fn() {
    await using fixture = await openFixture("postgres");
    const { driver } = ownDriver(fixture.url);
    const admin = postgres(fixture.url, { max: 1, onnotice: () => {} });
    try {
      await driver.query("select 1", READ_OPTIONS);
      for (let i = 0; i < 6; i++) {
        const tag = `o45b_stop_${crypto.randomUUID().slice(0, 8)}`;
        const stop = new AbortController();
        const started = performance.now();
        const timer = setTimeout(() => stop.abort(), 300);
        const error = await driver.query(
          `select pg_sleep(30), '${tag}'`,
          i % 2 === 0
            ? { ...READ_OPTIONS, timeoutMs: 500 }
            : { ...READ_OPTIONS, signal: stop.signal },
        ).then(() => null, (e: Error) => e);
        clearTimeout(timer);
        const took = performance.now() - started;
        assert(error !== null, "a stopped read answered");
        assert(
          /timeout|cancel/i.test(error.message),
          `read ${i}: ${error.message}`,
        );
        assert(took < 5_000, `read ${i} took ${Math.round(took)} ms`);
        const running = await admin.unsafe(
          `select count(*)::int as n from pg_stat_activity
            where query like '%${tag}%' and state = 'active'
              and pid <> pg_backend_pid()`,
        );
        assertEquals(running[0]?.n, 0, `read ${i} still running`);
        const next = await driver.query(`select ${i} as n`, READ_OPTIONS);
        assertEquals(next.rows, [[i]]);
      }
    } finally {
      await driver.close();
      await admin.end();
    }
  },
});

// What I did: four loops of wired reads for 5 s — plain (lean) and DISCARD
// ALL reads alternating, each checking its own value — while every 250 ms
// my backends were ended with pg_terminate_backend (parked ones and ones
// mid-read alike). Reads with bound values are left out here (the test
// "wired plain and bound reads under ended sessions all settle" below has
// them).
// What should happen (and happened): a read either answers its own value
// or fails as a lost session — never another read's answer — nothing
// hangs, nothing escapes as an uncaught error, and after it reads answer
// right again with at most the pool's four sessions.
Deno.test({
  name:
    "outsider 45b: sessions ended at random under parked-session reads: no wrong answer, no hang, reads recover",
  ...needs("postgres"),
  async fn() {
    await using fixture = await openFixture("postgres");
    const { driver, app } = ownDriver(fixture.url);
    const admin = postgres(fixture.url, { max: 1, onnotice: () => {} });
    try {
      let stop = false;
      let answered = 0;
      let failed = 0;
      const wrong: string[] = [];
      const loop = async (k: number) => {
        for (let i = 0; !stop; i++) {
          const n = k * 100_000 + i;
          const text = i % 2 === 0
            ? `select ${n} as n`
            : pad(`select ${n} as n`);
          const result = await driver.query(text, READ_OPTIONS).catch((
            e: Error,
          ) => e);
          if (result instanceof Error) failed++;
          else if (result.rows[0]?.[0] !== n) {
            wrong.push(`${n}: ${JSON.stringify(result.rows)}`);
          } else answered++;
        }
      };
      const loops = [0, 1, 2, 3].map(loop);
      const killer = (async () => {
        const until = performance.now() + 5_000;
        while (performance.now() < until) {
          await sleep(250);
          await admin`select pg_terminate_backend(pid)
            from pg_stat_activity where application_name = ${app}`;
        }
        stop = true;
      })();
      let timer: ReturnType<typeof setTimeout> | undefined;
      const outcome = await Promise.race([
        Promise.all([killer, ...loops]).then(() => "done"),
        new Promise<string>((r) => timer = setTimeout(() => r("hung"), 60_000)),
      ]);
      clearTimeout(timer);
      assertEquals(outcome, "done");
      assertEquals(wrong, [], "wrong answers");
      assert(answered > 20, `answered ${answered}, failed ${failed}`);
      // The last kill's closes reach dbport first (a read sent before one
      // did fails as any read on a session ended under it).
      await sleep(300);
      for (let i = 0; i < 8; i++) {
        const r = await driver.query(`select ${i} as n`, READ_OPTIONS);
        assertEquals(r.rows, [[i]]);
      }
      await sleep(PARK_MS + 1_000);
      const states = await sessionsOf(admin, app);
      const total = Object.values(states).reduce((a, b) => a + b, 0);
      assert(total <= 4, `sessions: ${JSON.stringify(states)}`);
    } finally {
      await driver.close();
      await admin.end();
    }
  },
});

/** A tool call over HTTP from the MCP client `client`. */
function callAs(
  url: string,
  client: string,
  name: string,
  args: Record<string, unknown>,
) {
  return postModern(
    url,
    modernRequest(
      "tools/call",
      { name, arguments: args } as never,
      crypto.randomUUID(),
      { "io.modelcontextprotocol/clientInfo": { name: client, version: "1" } },
    ),
  );
}

// What I did (through MCP): clients alpha45b and beta45b alternating
// execute_query reads of their own application_name on one connection,
// then, right after alpha's read (its session parked, named
// dbport/alpha45b), beta's explain_query — unsigned, never a lean read —
// held on a lock (planning waits for it) so that pg_stat_activity shows it.
// What happened before the fix: beta's EXPLAIN ran as "dbport/alpha45b"
// (with analyze it did not: the tool's plain EXPLAIN before it, a DISCARD
// ALL read, had reset the name). What should happen (and happens now): each read runs
// under its own client's name, and the explain not under alpha's.
Deno.test({
  name:
    "outsider 45b: through MCP, alternating clients read under their own names, and explain_query not under the last reader's",
  ...needs("postgres"),
  async fn() {
    await using fixture = await openFixture("postgres");
    const db = savedConnection(fixture, "o45b_names");
    await using server = await serverWith([db]);
    const admin = postgres(fixture.url, { max: 2, onnotice: () => {} });
    try {
      for (let i = 0; i < 6; i++) {
        const client = i % 2 === 0 ? "alpha45b" : "beta45b";
        const answer = await callAs(server.url, client, "execute_query", {
          connection_id: db.id,
          query: `select current_setting('application_name') as app, ${i} as i`,
        });
        const text = textOf(answer);
        assert(text.includes(`dbport/${client}`), text.slice(0, 400));
      }
      await callAs(server.url, "alpha45b", "execute_query", {
        connection_id: db.id,
        query: "select 1 as one",
      });
      const table = `"${fixture.schema}".authors`;
      let release!: () => void;
      const released = new Promise<void>((r) => release = r);
      const locked = admin.begin(async (tx) => {
        await tx.unsafe(`lock table ${table} in access exclusive mode`);
        await released;
      });
      await waitUntil("the table locked", async () => {
        const rows = await admin.unsafe(
          `select count(*)::int as n from pg_locks
            where relation = '${table}'::regclass and granted
              and mode = 'AccessExclusiveLock'`,
        );
        return rows[0]?.n === 1;
      }, { timeoutMs: 10_000 });
      let seen: string | null = null;
      const explain = callAs(server.url, "beta45b", "explain_query", {
        connection_id: db.id,
        query: `select count(*) from ${table}`,
        analyze: false,
      });
      try {
        await waitUntil("the explain waiting on the lock", async () => {
          const rows = await admin.unsafe(
            `select application_name from pg_stat_activity
              where query ilike '%explain%${fixture.schema}%authors%'
                and state = 'active' and pid <> pg_backend_pid()`,
          );
          seen = (rows[0]?.application_name as string | undefined) ?? null;
          return seen !== null;
        }, { timeoutMs: 10_000 });
      } finally {
        release();
        await locked;
      }
      const answer = await explain;
      assertEquals(answer.status, 200, answer.text.slice(0, 300));
      assert(seen !== "dbport/alpha45b", `the explain ran as ${seen}`);
    } finally {
      await admin.end();
    }
  },
});

// What I did: four loops of reads for 5 s on one PostgreSQL connection —
// plain reads and reads with bound values alternating — while every 100 to
// 300 ms my backends were ended with pg_terminate_backend; wired reads off
// here (postgres.js's path only; wired: "wired plain and bound reads under
// ended sessions all settle" below, where the same run once did not end).
// What happened: in most runs (4 of 5 unwired, 3 of 6 wired with parking
// off, 1 of 4 wired) an uncaught "(in promise) Error: read ECONNRESET"
// failed the test runner: postgres.js's own type query (fetch_types, the
// first thing a new pool's session sends — a pool replaced after a lost
// session is new) rejected with the socket's reset, a promise no caller
// holds. pg_session.ts let through only CONNECTION_*/57P0x rejections with
// a postgres.js frame (this one has none), and nothing else in lib/ listens
// for unhandled rejections: in `serve` it would end the process — an
// administrator ending sessions under load stopped dbport. Not caused by
// the parking.
// What should happen: a session reset fails its statement (or none), never
// the process. Fixed: pg_session.ts isOrphanedClose also takes an
// ECONNRESET/EPIPE that postgres.js named its type query on.
Deno.test({
  name:
    "outsider 45b: sessions ended under plain and bound reads leave no uncaught ECONNRESET",
  ...needs("postgres"),
  async fn() {
    await using fixture = await openFixture("postgres");
    assertEquals(await readsUnderEndedSessions(fixture.url, false), "done");
  },
});

/**
 * Four loops of plain and bound reads for 5 s, each checking its own
 * value, while the loops' backends are ended every 100 to 300 ms; "done"
 * once every read settled and the driver closed, "hung" after 60 s.
 */
async function readsUnderEndedSessions(
  url: string,
  wiredReads: boolean,
): Promise<"done" | "hung"> {
  const app = `dbport_o45b_${crypto.randomUUID().slice(0, 8)}`;
  const named = new URL(url);
  named.searchParams.set("application_name", app);
  const driver = openPostgres({
    url: named.toString(),
    secrets: [],
    wiredReads,
  });
  const admin = postgres(url, { max: 1, onnotice: () => {} });
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
  try {
    const loops = [0, 1, 2, 3].map(loop);
    const until = performance.now() + 5_000;
    while (performance.now() < until) {
      await sleep(100 + Math.random() * 200);
      await admin`select pg_terminate_backend(pid)
        from pg_stat_activity where application_name = ${app}`;
    }
    stop = true;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const outcome = await Promise.race([
      Promise.all(loops).then(() => driver.close()).then(() => "done" as const),
      new Promise<"hung">((r) => timer = setTimeout(() => r("hung"), 60_000)),
    ]);
    clearTimeout(timer);
    return outcome;
  } finally {
    stop = true;
    await admin.end();
  }
}

Deno.test("outsider 45b: isOrphanedClose takes a reset under postgres.js's type query, not under another statement", () => {
  const reset = (query: string, code = "ECONNRESET") =>
    Object.assign(new Error(`read ${code}`), {
      code,
      query,
      stack:
        `Error: read ${code}\n    at TCPWrap.onStreamRead (ext:deno_node/x.ts:1:1)`,
    });
  const types = `select b.oid, b.typarray from pg_catalog.pg_type a
    left join pg_catalog.pg_type b on b.oid = a.typelem`;
  assertEquals(isOrphanedClose(reset(types)), true);
  assertEquals(isOrphanedClose(reset(types, "EPIPE")), true);
  assertEquals(isOrphanedClose(reset("select 1")), false);
  assertEquals(isOrphanedClose(reset(types, "ETIMEDOUT")), false);
  assertEquals(
    isOrphanedClose(Object.assign(new Error("read ECONNRESET"), {
      code: "ECONNRESET",
    })),
    false,
  );
});

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
// Fixed: askingAgain asks again past three for as long as the statement's
// timeout allows (lib/db/postgres/pg_session.ts).
Deno.test({
  name:
    "outsider 45b: reads queued behind more than three sessions closed mid-row are not failed with 'try again'",
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
// (two at most on a noisy machine).
// Fixed: reserveSession asks postgres.js once the given-back session is
// released (pg_parked.ts giveBackOne); the uncaught ECONNRESET that first
// came with it is the type query's (isOrphanedClose), and a read that took
// a parked session ended a moment before is asked again (diedParked).
Deno.test({
  name:
    "outsider 45b: plain and bound reads alternating one after another reuse one session, not the pool's four",
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
// timeout and the stop grace; close() settles. Held in every later run
// (kept as a regular test, bounded at 60 s).
Deno.test({
  name:
    "outsider 45b: wired plain and bound reads under ended sessions all settle",
  ...needs("postgres"),
  async fn() {
    await using fixture = await openFixture("postgres");
    assertEquals(await readsUnderEndedSessions(fixture.url, true), "done");
  },
});
