/**
 * An outsider's attacks (stop 49) on lean PostgreSQL reads after commit
 * 825f31a (lib/db/postgres/pg_lean.ts `planFor` / `timeoutFits`): a wired
 * session keeps the `statement_timeout` a lean read set while it is at least
 * the next read's need and under a second more, and every other
 * session-level setting a lean read set (read-only default, signed
 * `application_name`) until it changes. Sessions are parked and shared by
 * every client of a connection. Each driver's sessions are named
 * (application_name), and each test's objects live in a fixture schema of
 * its own.
 */

import { assert, assertEquals } from "@std/assert";
import { DbError } from "../../lib/db/errors.ts";
import type { Signature } from "../../lib/db/signature.ts";
import type { Driver } from "../../lib/db/types.ts";
import { hasLeanReads, ownPostgresDriver } from "../_pg_driver.ts";
import postgres from "postgres";
import { needs, openFixture, READ_OPTIONS } from "../_db.ts";
import { savedConnection, serverWith } from "../_connections.ts";
import { executeAs, outcome } from "../_outsider.ts";
import { slowCancelProxy } from "../_tcp_proxy.ts";
import { waitUntil } from "../_wait.ts";

const CALL = { timeoutMs: 10_000 };

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function sign(client: string, call: string): Signature {
  return { client, token: "t", call };
}

function read(driver: Driver, text: string, timeoutMs: number, by: string) {
  return driver.query(text, {
    ...READ_OPTIONS,
    timeoutMs,
    signal: new AbortController().signal,
    sign: sign(by, crypto.randomUUID().slice(0, 8)),
  });
}

/** `statement_timeout` as `current_setting` shows it, in ms. */
function shownMs(shown: string): number {
  const value = Number.parseFloat(shown);
  if (shown.endsWith("ms")) return value;
  if (shown.endsWith("min")) return value * 60_000;
  if (shown.endsWith("s")) return value * 1_000;
  return value;
}

/** The server's major version. */
async function serverMajor(
  admin: (sql: string) => Promise<unknown[]>,
): Promise<number> {
  const [row] = await admin(
    "select current_setting('server_version_num')::int / 10000 as major",
  ) as { major: number }[];
  return Number(row?.major);
}

/** The tier the driver's check (its catalog vetting) gives `text`. */
async function vetted(driver: Driver, text: string): Promise<string> {
  const checked = await driver.check(text, "read", {
    ...CALL,
    signal: new AbortController().signal,
  });
  return checked.ok ? String(checked.tier) : `refused: ${checked.message}`;
}

Deno.test({
  name:
    "postgres lean read: a function swapped after its vetting cannot leave its statement_timeout on a shared session for other clients' reads",
  ...needs("postgres"),
  async fn(t) {
    // What I did: as the owner of a function an AI client calls (another
    // database user), made `f()` a LANGUAGE sql `select 1` (vetted a read),
    // and replaced it with plpgsql that runs
    // `set_config('statement_timeout', '1', false)` between the call's
    // check and its query (vet-then-run: the window is the consent wait,
    // the session wait, the parse). The lean read ran it alone, without
    // the ROLLBACK that used to undo it, so the setting stayed on the
    // session; the read's WireSession still says 15 s. Then another client
    // ("bob") read `select pg_sleep(0.05)` three times with 10 s, 9.7 s and
    // 9.4 s: each of those needs fits the recorded 15 s (825f31a: kept
    // when under a second more), so nothing set it again.
    // What happened: each of bob's reads failed after ~1 ms, "[timeout]
    // canceling statement due to statement timeout [SQLSTATE 57014]" — the
    // server's 57014 surfaced for a read whose own 10 s had not run out, on
    // every read the parked session served.
    // What should happen: a setting a statement changed outside dbport's
    // knowledge never reaches another read: bob's reads answer (the session
    // is closed or its settings set again, or the lean read keeps its
    // ROLLBACK-equivalent for functions that are not built-ins).
    await using fixture = await openFixture("postgres");
    if (!hasLeanReads(await serverMajor(fixture.admin), t.name)) return;
    const { driver } = ownPostgresDriver(fixture.url, "stop49_to");
    const f = `${fixture.schema}.f`;
    try {
      await fixture.admin(
        `create function ${f}() returns int language sql as $$ select 1 $$`,
      );
      assertEquals(await vetted(driver, `select ${f}()`), "read");
      await fixture.admin(
        `create or replace function ${f}() returns int language plpgsql as $$
         begin perform set_config('statement_timeout', '1', false); return 1; end $$`,
      );
      assertEquals(
        await outcome(read(driver, `select ${f}() as one`, 10_000, "alice")),
        "answered [[1]]",
      );
      const seen: string[] = [];
      for (const timeoutMs of [10_000, 9_700, 9_400]) {
        seen.push(
          await outcome(
            read(
              driver,
              "select pg_sleep(0.05)::text as slept",
              timeoutMs,
              "bob",
            ),
          ),
        );
      }
      assertEquals(seen, [
        'answered [[""]]',
        'answered [[""]]',
        'answered [[""]]',
      ]);
    } finally {
      await driver.close();
    }
  },
});

Deno.test({
  name:
    "postgres lean read: a function swapped after its vetting cannot leave a search_path on a shared session that runs another client's vetted read through an unvetted function",
  ...needs("postgres"),
  async fn(t) {
    // What I did: as above, `f()` vetted as a LANGUAGE sql read, then
    // replaced (after the check) with plpgsql that runs
    // `set_config('search_path', '<schema>, pg_catalog, public', false)`;
    // the schema also holds a plpgsql `lower(text)`. Another client ("bob")
    // then read `select lower('X')`: the driver's check (dbport's catalog
    // session, whose search_path is the server's default) found
    // pg_catalog.lower, a built-in on the allowlist: a read.
    // What happened: bob's lean read ran on the parked session the first
    // read had left with the schema ahead of pg_catalog (search_path is not
    // reported, so pg_read.ts `changed` never saw it) and called the
    // schema's plpgsql `lower` — code dbport never vetted, with dbport's
    // privileges, under bob's name: it answered "EVIL:dbport/bob".
    // What should happen: a read runs with the names its vetting resolved:
    // bob's answer is "x", and the session's search_path is the one the
    // session started with.
    await using fixture = await openFixture("postgres");
    if (!hasLeanReads(await serverMajor(fixture.admin), t.name)) return;
    const { driver } = ownPostgresDriver(fixture.url, "stop49_sp");
    const schema = fixture.schema;
    try {
      await fixture.admin(
        `create function ${schema}.f() returns int language sql as $$ select 1 $$`,
      );
      await fixture.admin(
        `create function ${schema}.lower(text) returns text language plpgsql as $$
         begin return 'EVIL:' || current_setting('application_name'); end $$`,
      );
      assertEquals(await vetted(driver, `select ${schema}.f()`), "read");
      await fixture.admin(
        `create or replace function ${schema}.f() returns int language plpgsql as $$
         begin perform set_config('search_path', '${schema}, pg_catalog, public', false);
         return 1; end $$`,
      );
      assertEquals(
        await outcome(
          read(driver, `select ${schema}.f() as one`, 10_000, "alice"),
        ),
        "answered [[1]]",
      );
      const victim = "select lower('X') as l";
      assertEquals(await vetted(driver, victim), "read", "bob's read vetted");
      assertEquals(
        await outcome(read(driver, victim, 10_000, "bob")),
        'answered [["x"]]',
      );
    } finally {
      await driver.close();
    }
  },
});

Deno.test({
  name:
    "postgres lean read: concurrent clients with timeouts a second or less apart each run under at least their own need, their own name, read-only",
  ...needs("postgres"),
  async fn(t) {
    // What I did: 12 reads at a time on one connection (its four sessions,
    // parked and shared), 8 rounds, each read's timeout drawn from values
    // 1 ms, 999 ms, 1000 ms, 1001 ms and fractions apart (and the 300 s
    // maximum), signed by one of three clients or unsigned, each reading
    // its session's statement_timeout, application_name and read-only
    // state. What happened: every read saw a timeout of at least its
    // timeoutMs + 5 s and under a second more, its own name, read-only.
    // This pins it.
    await using fixture = await openFixture("postgres");
    if (!hasLeanReads(await serverMajor(fixture.admin), t.name)) return;
    const { driver, app } = ownPostgresDriver(fixture.url, "stop49_mix");
    const timeouts = [
      2_000,
      2_999.5,
      3_000,
      3_001,
      3_999,
      4_000,
      10_000,
      10_999,
      11_000,
      300_000,
    ];
    const clients = ["alice", "bob", "carol", ""];
    const text =
      "select current_setting('statement_timeout') as t, current_setting('application_name') as a, current_setting('transaction_read_only') as ro";
    const wrong: string[] = [];
    try {
      for (let round = 0; round < 8; round++) {
        await Promise.all(Array.from({ length: 12 }, async (_, i) => {
          const timeoutMs = timeouts[(round * 7 + i * 3) % timeouts.length]!;
          const client = clients[(round + i) % clients.length]!;
          const result = await driver.query(text, {
            ...READ_OPTIONS,
            timeoutMs,
            signal: new AbortController().signal,
            ...(client === "" ? {} : { sign: sign(client, `${round}.${i}`) }),
          }).catch((error) => {
            // A starved machine's read may run out of its own time: not
            // what this pins.
            if (error instanceof DbError && error.kind === "timeout") {
              return null;
            }
            throw error;
          });
          if (result === null) return;
          const [t, a, ro] = result.rows[0] as string[];
          const ms = shownMs(t!);
          const need = timeoutMs + 5_000;
          const name = client === "" ? app : `dbport/${client}`;
          if (ms < need || ms >= need + 1_000 || a !== name || ro !== "on") {
            wrong.push(`${timeoutMs} ms by ${name}: ${t} ${a} ${ro}`);
          }
        }));
      }
      assertEquals(wrong, []);
    } finally {
      await driver.close();
    }
  },
});

Deno.test({
  name:
    "postgres lean read: reads at their timeout's edge answer or fail as a timeout, never as the server's own stop, and leave no statement running",
  ...needs("postgres"),
  async fn(t) {
    // What I did: 10 rounds of 8 concurrent reads of pg_sleep just under,
    // at and over timeouts of 1 ms, 200 ms and 250 ms, the sessions shared
    // with reads of 300 s (whose session timeout is 305 s). What happened:
    // each answered or failed "[timeout]" with the client's own message
    // ("the statement timeout of … ran out"), and no session of the
    // driver was left active. This pins it.
    await using fixture = await openFixture("postgres");
    if (!hasLeanReads(await serverMajor(fixture.admin), t.name)) return;
    const { driver, app } = ownPostgresDriver(fixture.url, "stop49_edge");
    const client = `edge_${crypto.randomUUID().slice(0, 8)}`;
    const other: string[] = [];
    try {
      for (let round = 0; round < 10; round++) {
        await Promise.all(Array.from({ length: 8 }, async (_, i) => {
          const timeoutMs = [1, 200, 250, 300_000][(round + i) % 4]!;
          const sleep = [0.19, 0.2, 0.21, 0.25][(round * 3 + i) % 4]!;
          try {
            await read(
              driver,
              `select pg_sleep(${sleep})::text`,
              timeoutMs,
              client,
            );
          } catch (error) {
            if (
              !(error instanceof DbError) || error.kind !== "timeout" ||
              !/statement timeout of .* ran out/.test(error.message)
            ) other.push(`${timeoutMs} ms, sleep ${sleep}: ${String(error)}`);
          }
        }));
      }
      assertEquals(other, []);
      // A stopped statement's backend may still be ending as the read
      // answers (its session closed after the cancel): none is left within
      // a second (CI saw one still active at the first look).
      let active: unknown[] = [];
      for (let i = 0; i < 20; i++) {
        active = await fixture.admin(
          `select pid from pg_stat_activity where application_name in ('${app}', 'dbport/${client}') and state = 'active'`,
        );
        if (active.length === 0) break;
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      assert(active.length === 0, JSON.stringify(active));
    } finally {
      await driver.close();
    }
  },
});

Deno.test({
  name:
    "postgres lean read: sessions through writes, bound reads, EXPLAIN, VACUUM and long texts and back: each lean read after runs with its own timeout, name and read-only state",
  ...needs("postgres"),
  async fn(test) {
    // What I did: sequential calls on one driver (one session, parked and
    // given back between calls): a lean read of 300 s by alice, a write by
    // bob, a lean read of 1 s, a bound read, an unsigned lean read, an
    // EXPLAIN, a VACUUM (run outside a transaction, with session-level
    // settings of its own), a read over 4 KB (not lean), each lean read
    // reading its session's statement_timeout, application_name and
    // read-only state. What happened: every read saw its own. This pins
    // that the recorded session state is forgotten and set again across
    // postgres.js's own path.
    await using fixture = await openFixture("postgres");
    if (!hasLeanReads(await serverMajor(fixture.admin), test.name)) return;
    const { driver, app } = ownPostgresDriver(fixture.url, "stop49_seq");
    const t = `${fixture.schema}.seq`;
    await fixture.admin(`create table ${t} (a int)`);
    const probe =
      "select current_setting('statement_timeout') as t, current_setting('application_name') as a, current_setting('transaction_read_only') as r";
    const options = (
      client: string | null,
      timeoutMs: number,
      extra: Record<string, unknown> = {},
    ) => ({
      ...READ_OPTIONS,
      timeoutMs,
      signal: new AbortController().signal,
      ...(client === null ? {} : { sign: sign(client, "c") }),
      ...extra,
    });
    const row = async (text: string, opts: ReturnType<typeof options>) =>
      JSON.stringify((await driver.query(text, opts)).rows[0]);
    try {
      const seen = [
        await row(probe, options("alice", 300_000)),
        await row(
          `insert into ${t} values (1) returning current_setting('statement_timeout'), current_setting('application_name'), current_setting('transaction_read_only')`,
          options("bob", 2_000, { mode: "write" }),
        ),
        await row(probe, options("carol", 1_000)),
        await row(
          `${probe} where $1::int = 1`,
          options("dave", 4_000, {
            params: [1],
          }),
        ),
        await row(probe, options(null, 1_000)),
      ];
      await driver.query(`explain ${probe}`, options(null, 1_000));
      seen.push(await row(probe, options("erin", 1_000)));
      await driver.query(
        `vacuum ${t}`,
        options("frank", 3_000, {
          mode: "write",
        }),
      );
      seen.push(await row(probe, options("gina", 2_000)));
      seen.push(
        await row(
          `${probe} /* ${"x".repeat(5_000)} */`,
          options("hank", 3_000),
        ),
      );
      seen.push(await row(probe, options(null, 2_000)));
      assertEquals(seen, [
        '["305s","dbport/alice","on"]',
        '["7s","dbport/bob","off"]',
        '["6s","dbport/carol","on"]',
        '["9s","dbport/dave","on"]',
        `["6s","${app}","on"]`,
        '["6s","dbport/erin","on"]',
        '["7s","dbport/gina","on"]',
        '["8s","dbport/hank","on"]',
        `["7s","${app}","on"]`,
      ]);
    } finally {
      await driver.close();
    }
  },
});

Deno.test({
  name:
    "postgres lean read: a function swapped after its vetting cannot SET ROLE a shared session so that other clients' reads run with a role the login does not inherit",
  ...needs("postgres"),
  async fn(t) {
    // What I did: dbport logs in as a role that does not inherit its
    // member role `priv` (NOINHERIT: it may SET ROLE to it, but has none of
    // its privileges), and only `priv` may read `secret`. As above, `f()`
    // was vetted a LANGUAGE sql read and replaced after its check with
    // plpgsql running `set_config('role', '<priv>', false)`. Then another
    // client ("bob") read `select v from secret`.
    // What happened: bob's lean read ran on the parked session as `priv`
    // (`role` is not reported: only is_superuser is, and it did not
    // change) and answered the secret row, where the login itself is
    // refused "permission denied".
    // What should happen: another client's read runs as the login: it is
    // refused, as it is on a fresh session.
    await using fixture = await openFixture("postgres");
    if (!hasLeanReads(await serverMajor(fixture.admin), t.name)) return;
    const tag = crypto.randomUUID().replaceAll("-", "").slice(0, 8);
    const login = `stop49_login_${tag}`;
    const priv = `stop49_priv_${tag}`;
    const schema = fixture.schema;
    await fixture.admin(`create role ${login} login noinherit`);
    await fixture.admin(`create role ${priv}`);
    try {
      await fixture.admin(`grant ${priv} to ${login}`);
      await fixture.admin(
        `grant usage on schema ${schema} to ${login}, ${priv}`,
      );
      await fixture.admin(`create table ${schema}.secret (v text)`);
      await fixture.admin(`insert into ${schema}.secret values ('s3cret')`);
      await fixture.admin(`grant select on ${schema}.secret to ${priv}`);
      await fixture.admin(
        `create function ${schema}.f() returns int language sql as $$ select 1 $$`,
      );
      const url = new URL(fixture.url);
      url.username = login;
      url.password = "";
      const { driver } = ownPostgresDriver(url.toString(), "stop49_role");
      try {
        const victim = `select v from ${schema}.secret`;
        // On a fresh session the login is refused.
        assert(
          (await outcome(read(driver, victim, 10_000, "bob"))).includes(
            "permission denied",
          ),
        );
        assertEquals(await vetted(driver, `select ${schema}.f()`), "read");
        await fixture.admin(
          `create or replace function ${schema}.f() returns int language plpgsql as $$
           begin perform set_config('role', '${priv}', false); return 1; end $$`,
        );
        assertEquals(
          await outcome(
            read(driver, `select ${schema}.f() as one`, 10_000, "alice"),
          ),
          "answered [[1]]",
        );
        const answer = await outcome(read(driver, victim, 10_000, "bob"));
        assert(answer.includes("permission denied"), answer);
      } finally {
        await driver.close();
      }
    } finally {
      await fixture.admin(`drop table if exists ${schema}.secret`);
      await fixture.admin(`drop function if exists ${schema}.f()`);
      await fixture.admin(
        `revoke all on schema ${schema} from ${login}, ${priv}`,
      );
      await fixture.admin(`drop role if exists ${login}`);
      await fixture.admin(`drop role if exists ${priv}`);
    }
  },
});

/**
 * An attacker's statement whose timeout fires while it runs and whose
 * cancel request is slow to arrive (it ends first), then another client's
 * lean read of `pg_sleep(1.5)` with 10 s on the driver's only session.
 */
async function afterLateCancel(
  fixtureUrl: string,
  attacker: {
    text: string;
    extra: Record<string, unknown>;
    stream?: boolean;
  },
): Promise<{ victim: string; cancels: number }> {
  const proxy = slowCancelProxy(new URL(fixtureUrl), 600);
  const { driver } = ownPostgresDriver(proxy.url, "stop49_late");
  try {
    await read(driver, "select 1", 10_000, "warm");
    const options = {
      ...READ_OPTIONS,
      timeoutMs: 30,
      signal: new AbortController().signal,
      sign: sign("mallory", "a"),
      ...attacker.extra,
    };
    await (attacker.stream === true
      ? driver.streamRead!(attacker.text, options, () => Promise.resolve())
      : driver.query(attacker.text, options)).catch(() => {});
    const victim = await outcome(
      read(driver, "select pg_sleep(1.5)::text as slept", 10_000, "bob"),
    );
    return { victim, cancels: proxy.stats.cancels };
  } finally {
    await driver.close();
    await proxy.close();
  }
}

Deno.test({
  name:
    "postgres: a bound read's, a write's or an export's cancel request that arrives after its statement ended never stops another client's next read on the session",
  ...needs("postgres"),
  async fn() {
    // What I did: a proxy in front of the server held each cancel request
    // back 600 ms (a slow network or tunnel, a busy postmaster). Mallory
    // ran `select pg_sleep(0.1) … where $1::int = 1` with a bound value
    // (postgres.js's own path) and a 30 ms timeout; in a second driver, the
    // same statement as a write; in a third, as an export's streamed read
    // (export_query, `streamRead`). Their timeouts fired, postgres.js sent the
    // cancel request (pg_session.ts stoppableStatement: `query.cancel()`,
    // whose delivery nobody waits for), the statement ended first and the
    // session went back to the pool (ROLLBACK, DISCARD ALL, released).
    // Bob's lean read of `pg_sleep(1.5)` with 10 s then took that session.
    // What happened: mallory's late cancel request stopped bob's read:
    // "[timeout] canceling statement due to user request [SQLSTATE 57014]"
    // after ~0.5 s of bob's 10 s (as it would stop any statement of any
    // client that took the session next). Without the proxy the same
    // happens by chance: 14 concurrent reads, half of them bound reads
    // cancelled or timed out at random, failed 7-18 of ~280 other clients'
    // 10 s reads this way.
    // What should happen: as on the wired path (pg_wired.ts: a session is
    // given back only once its cancel request was delivered), a session
    // whose statement was sent a cancel request serves no other statement
    // before the request was delivered: bob's read answers.
    await using fixture = await openFixture("postgres");
    const text =
      "select pg_sleep(0.1)::text as slept where $1::int = 1 or true";
    const bound = await afterLateCancel(fixture.url, {
      text,
      extra: { params: [1] },
    });
    const write = await afterLateCancel(fixture.url, {
      text: "select pg_sleep(0.1)::text as slept",
      extra: { mode: "write" },
    });
    const streamed = await afterLateCancel(fixture.url, {
      text: "select pg_sleep(0.1)::text as slept",
      extra: {},
      stream: true,
    });
    assertEquals(bound.cancels, 1, "the bound read's timeout sent a cancel");
    assertEquals(write.cancels, 1, "the write's timeout sent a cancel");
    assertEquals(streamed.cancels, 1, "the export's timeout sent a cancel");
    assertEquals(
      { bound: bound.victim, write: write.victim, streamed: streamed.victim },
      {
        bound: 'answered [[""]]',
        write: 'answered [[""]]',
        streamed: 'answered [[""]]',
      },
    );
  },
});

Deno.test({
  name:
    "postgres: a wired read's cancel request that arrives after its statement ended never stops the next read on the session",
  ...needs("postgres"),
  async fn() {
    // What I did: the same, with mallory's statement a lean read (the
    // wired path, its own cancel request). What happened: the session was
    // held until the request was delivered, and bob's read answered. This
    // pins it.
    await using fixture = await openFixture("postgres");
    const wired = await afterLateCancel(fixture.url, {
      text: "select pg_sleep(0.1)::text as slept",
      extra: {},
    });
    assertEquals(wired, { victim: 'answered [[""]]', cancels: 1 });
  },
});

Deno.test({
  name:
    "postgres through MCP: a bound read's timeout whose cancel request arrives after its statement ended never fails another client's execute_query",
  ...needs("postgres"),
  async fn() {
    // What I did: the same through MCP, the saved connection's URL the
    // proxy that holds each cancel request back 1 s (pg_sleep is no read
    // for dbport, so a lock held by another session makes the statements
    // wait). With the table locked, mallory called execute_query with
    // `select count(*) … where $1::int = $1`, params [1] (postgres.js's
    // own path) and timeout_seconds 1; the lock was released 1.3 s later
    // (the timeout had fired, its cancel request was on its way), so
    // mallory's statement ended and was answered. The table was locked
    // again, bob called execute_query with `select count(*) from authors`
    // (a lean read, the default timeout), and the lock was released 1.5 s
    // later.
    // What happened: bob's call failed, JSON-RPC error -33003 "Request
    // timed out: canceling statement due to user request [SQLSTATE
    // 57014]", well within his own timeout — the cancel request of
    // mallory's 1 s timeout, landing on bob's read.
    // What should happen: bob's call answers its count.
    await using fixture = await openFixture("postgres");
    const proxy = slowCancelProxy(new URL(fixture.url), 1_000);
    const admin = postgres(fixture.url, { max: 1, onnotice: () => {} });
    const table = `"${fixture.schema}".authors`;
    const lock = () => {
      let release = () => {};
      const released = new Promise<void>((resolve) => release = resolve);
      const held = admin.begin(async (tx) => {
        await tx.unsafe(`lock table ${table} in access exclusive mode`);
        await released;
      });
      return { release, held };
    };
    try {
      const db = savedConnection(
        { engine: "postgres", url: proxy.url },
        "o49_late",
      );
      await using server = await serverWith([db]);
      const ask = (client: string, args: Record<string, unknown>) =>
        executeAs(server.url, db.id, client, args);
      const warm = await ask("warm", {
        query: `select count(*) as n from ${table}`,
      });
      assert(warm.includes('"rows":[["2"]]'), warm);
      const first = lock();
      await sleep(100);
      const mallory = ask("mallory", {
        query: `select count(*) as n from ${table} where $1::int = $1`,
        params: [1],
        timeout_seconds: 1,
      });
      // Released once mallory's timeout has sent its cancel request (the
      // proxy holds it 1 s): a fixed 1.3 s let a slow start of the call on a
      // loaded machine (CI) answer within its timeout, sending none.
      await waitUntil(
        "mallory's cancel request at the proxy",
        () => proxy.stats.cancels === 1,
        { timeoutMs: 15_000 },
      );
      first.release();
      await first.held;
      const answered = await mallory;
      assertEquals(proxy.stats.cancels, 1, answered);
      const second = lock();
      await sleep(100);
      const bob = ask("bob", { query: `select count(*) as n from ${table}` });
      await sleep(1_500);
      second.release();
      await second.held;
      const text = await bob;
      assert(text.includes('"rows":[["2"]]'), text);
    } finally {
      await admin.end();
      await proxy.close();
    }
  },
});

Deno.test({
  name:
    "postgres through MCP: a function replaced while a client's vetted read waits for a lock cannot leave a search_path that runs another client's read through an unvetted function",
  ...needs("postgres"),
  async fn(t) {
    // What I did: the search_path attack above through MCP, with no race:
    // the owner of a table and a function (another database user) held an
    // ACCESS EXCLUSIVE lock on the table while alice called execute_query
    // with `select f() as one from <table>`. Its vetting (f: LANGUAGE sql
    // `select 1`) found a read; its lean read then waited for the lock
    // (the FROM clause is locked before f is resolved). Meanwhile the owner
    // replaced f with plpgsql running `set_config('search_path',
    // '<schema>, pg_catalog, public', false)` and released the lock; the
    // schema also holds a plpgsql `lower(text)`. Then bob called
    // execute_query with `select lower('X') as l`.
    // What happened: alice got her row; bob's answer was
    // "EVIL:dbport/bob": his read, vetted against pg_catalog.lower, ran the
    // schema's plpgsql lower on the session alice's read had left.
    // What should happen: bob's answer is "x".
    await using fixture = await openFixture("postgres");
    if (!hasLeanReads(await serverMajor(fixture.admin), t.name)) return;
    const schema = fixture.schema;
    const table = `${schema}.authors`;
    await fixture.admin(
      `create function ${schema}.f() returns int language sql as $$ select 1 $$`,
    );
    await fixture.admin(
      `create function ${schema}.lower(text) returns text language plpgsql as $$
       begin return 'EVIL:' || current_setting('application_name'); end $$`,
    );
    const owner = postgres(fixture.url, { max: 1, onnotice: () => {} });
    try {
      const db = savedConnection(fixture, "o49_path");
      await using server = await serverWith([db]);
      const ask = (client: string, query: string) =>
        executeAs(server.url, db.id, client, { query });
      const warm = await ask("warm", "select 0 as n");
      assert(warm.includes('"rows":[[0]]'), warm);
      let release = () => {};
      const released = new Promise<void>((resolve) => release = resolve);
      const held = owner.begin(async (tx) => {
        await tx.unsafe(`lock table ${table} in access exclusive mode`);
        await released;
        await tx.unsafe(
          `create or replace function ${schema}.f() returns int language plpgsql as $$
           begin perform set_config('search_path', '${schema}, pg_catalog, public', false);
           return 1; end $$`,
        );
      });
      await sleep(100);
      const alice = ask("alice", `select ${schema}.f() as one from ${table}`);
      // Vetted and waiting for the lock.
      await sleep(1_000);
      release();
      await held;
      const answered = await alice;
      assert(answered.includes('"rows":[[1],[1]]'), answered);
      const bob = await ask("bob", "select lower('X') as l");
      assert(bob.includes('"rows":[["x"]]'), bob);
    } finally {
      await owner.end();
    }
  },
});

Deno.test({
  name:
    "postgres lean read: a search_path a swapped function left on a session never reaches the next client's write on it",
  ...needs("postgres"),
  async fn(t) {
    // What I did: the search_path attack above (f vetted a LANGUAGE sql
    // read, replaced after its check with plpgsql that sets the session's
    // search_path to put the schema, with its plpgsql `lower(text)`, ahead
    // of pg_catalog), then another client's write on the same driver:
    // `insert into <schema>.notes (v) values (lower('X')) returning v`.
    // The parked session went back to postgres.js for the write (pg_session.ts
    // reserveSession → giveBackOne), whose DISCARD ALL comes only after it.
    // What happened: the write ran the schema's plpgsql lower and stored
    // "EVIL:dbport/bob" — a write its vetting, preview and approval saw
    // calling the built-in (the same for any unqualified name: a table of
    // the schema named like the target would take the written rows).
    // What should happen: the write stores "x".
    await using fixture = await openFixture("postgres");
    if (!hasLeanReads(await serverMajor(fixture.admin), t.name)) return;
    const { driver } = ownPostgresDriver(fixture.url, "stop49_wr");
    const schema = fixture.schema;
    try {
      await fixture.admin(`create table ${schema}.notes (v text)`);
      await fixture.admin(
        `create function ${schema}.f() returns int language sql as $$ select 1 $$`,
      );
      await fixture.admin(
        `create function ${schema}.lower(text) returns text language plpgsql as $$
         begin return 'EVIL:' || current_setting('application_name'); end $$`,
      );
      assertEquals(await vetted(driver, `select ${schema}.f()`), "read");
      await fixture.admin(
        `create or replace function ${schema}.f() returns int language plpgsql as $$
         begin perform set_config('search_path', '${schema}, pg_catalog, public', false);
         return 1; end $$`,
      );
      assertEquals(
        await outcome(
          read(driver, `select ${schema}.f() as one`, 10_000, "alice"),
        ),
        "answered [[1]]",
      );
      const written = await outcome(
        driver.query(
          `insert into ${schema}.notes (v) values (lower('X')) returning v`,
          {
            ...READ_OPTIONS,
            mode: "write",
            timeoutMs: 10_000,
            signal: new AbortController().signal,
            sign: sign("bob", "w"),
          },
        ),
      );
      assertEquals(written, 'answered [["x"]]');
    } finally {
      await driver.close();
    }
  },
});
