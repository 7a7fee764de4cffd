/**
 * An outsider's attacks (stop 49b) on today's PostgreSQL changes: lean reads
 * as one batch (`BEGIN READ ONLY`, the statement, `ROLLBACK`, one Sync),
 * cancel requests delivered before a session serves anything else
 * (pg_session.ts `cancelDelivered`, pg_wired.ts `cancelRequest`), the big
 * row reader. Each driver's sessions are named (application_name), and each
 * test's objects live in a fixture schema of its own.
 */

import { assert, assertEquals } from "@std/assert";
import postgres from "postgres";
import type { Driver } from "../../lib/db/types.ts";
import type { Signature } from "../../lib/db/signature.ts";
import { ownPostgresDriver } from "../_pg_driver.ts";
import { needs, openFixture, READ_OPTIONS } from "../_db.ts";
import { outcome } from "../_outsider.ts";
import { slowCancelProxy } from "../_tcp_proxy.ts";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** An ACCESS EXCLUSIVE lock on `table`, held by `admin` until released. */
function lockOn(admin: ReturnType<typeof postgres>, table: string) {
  let release = () => {};
  const released = new Promise<void>((resolve) => release = resolve);
  const held = admin.begin(async (tx) => {
    await tx.unsafe(`lock table ${table} in access exclusive mode`);
    await released;
  });
  return {
    release: async () => {
      release();
      await held;
    },
  };
}

/** describeTable's outcome: the name it described. */
function described(
  driver: Driver,
  table: string,
  schema: string,
  timeoutMs: number,
): Promise<string> {
  return outcome(
    driver.describeTable(table, {
      signal: new AbortController().signal,
      timeoutMs,
      schema,
    }).then((detail) => ({ rows: detail?.name ?? null })),
  );
}

Deno.test({
  name:
    "postgres: a catalog statement's cancel request that arrives after it ended never stops another client's catalog statement",
  ...needs("postgres"),
  async fn() {
    // What I did: a proxy in front of the server held each cancel request
    // back 800 ms (a slow network or tunnel, a busy postmaster), as in
    // stop 49. The owner of a view held an ACCESS EXCLUSIVE lock on it
    // (pg_get_viewdef, which describeTable runs on dbport's own pool,
    // waits for it). Mallory called describeTable on the view with a 200 ms
    // timeout: it fired, and pg_own.ts runOwn sent postgres.js's cancel
    // (`pending.cancel()`, whose delivery nobody waits for — today's fix
    // covered bound reads, writes and exports, pg_session.ts
    // `cancelDelivered`, not dbport's own statements). The lock was
    // released 700 ms in, so mallory's statement ended (and answered, as a
    // late answer is kept). The owner locked the view again and bob called
    // describeTable twice at once (one on each of the own pool's two
    // sessions), with 10 s each; the lock was released 2 s later.
    // What happened: one of bob's calls failed "[timeout] canceling
    // statement due to user request [SQLSTATE 57014]" within his 10 s —
    // mallory's late cancel request, landing on bob's catalog statement
    // (the same for any client's vetting, schema listing or description on
    // that session).
    // What should happen: as for bound reads, writes and exports: a session
    // that was sent a cancel request serves no other statement before the
    // request was delivered; both of bob's calls describe the view.
    await using fixture = await openFixture("postgres");
    const proxy = slowCancelProxy(new URL(fixture.url), 800);
    const { driver } = ownPostgresDriver(proxy.url, "stop49b_own");
    const admin = postgres(fixture.url, { max: 1, onnotice: () => {} });
    const view = "book_titles";
    const qualified = `"${fixture.schema}".${view}`;
    try {
      assertEquals(
        await described(driver, view, fixture.schema, 10_000),
        'answered "book_titles"',
      );
      const first = lockOn(admin, qualified);
      await sleep(100);
      const mallory = described(driver, view, fixture.schema, 200);
      await sleep(700);
      await first.release();
      await mallory;
      assertEquals(proxy.stats.cancels, 1, "mallory's timeout sent a cancel");
      const second = lockOn(admin, qualified);
      await sleep(50);
      const bob = Promise.all([
        described(driver, view, fixture.schema, 10_000),
        described(driver, view, fixture.schema, 10_000),
      ]);
      await sleep(2_000);
      await second.release();
      assertEquals(await bob, [
        'answered "book_titles"',
        'answered "book_titles"',
      ]);
    } finally {
      await driver.close();
      await admin.end();
      await proxy.close();
    }
  },
});

function sign(client: string): Signature {
  return { client, token: "t", call: crypto.randomUUID().slice(0, 8) };
}

function read(driver: Driver, text: string, by: string, timeoutMs = 10_000) {
  return driver.query(text, {
    ...READ_OPTIONS,
    timeoutMs,
    signal: new AbortController().signal,
    sign: sign(by),
  });
}

/** The tier the driver's check (its catalog vetting) gives `text`. */
async function vetted(driver: Driver, text: string): Promise<string> {
  const checked = await driver.check(text, "read", {
    timeoutMs: 10_000,
    signal: new AbortController().signal,
  });
  return checked.ok ? String(checked.tier) : `refused: ${checked.message}`;
}

/**
 * Carol's read, asked while mallory's session (its statement stopped by her
 * timeout, its cancel request held back 3 s by the proxy) is ended by an
 * administrator before the request lands; the connection's other three
 * sessions busy for 2 s. Mallory's read is lean, or a bound read
 * (postgres.js's own path) when `bound`.
 */
async function carolAfterEndedSession(
  fixtureUrl: string,
  admin: (sql: string) => Promise<unknown[]>,
  bound: boolean,
): Promise<string> {
  const proxy = slowCancelProxy(new URL(fixtureUrl), 3_000);
  const { driver } = ownPostgresDriver(proxy.url, "stop49b_wait");
  try {
    await Promise.all(
      [1, 2, 3, 4].map((i) => read(driver, `select ${i}`, "warm")),
    );
    const long = [1, 2, 3].map((i) =>
      outcome(
        read(driver, `select pg_sleep(2)::text as s, ${i} as n`, `long${i}`),
      )
    );
    await sleep(200);
    const mallory = outcome(
      bound
        ? driver.query("select pg_sleep(0.4)::text as s where $1::int = 1", {
          ...READ_OPTIONS,
          params: [1],
          timeoutMs: 100,
          signal: new AbortController().signal,
          sign: sign("mallory"),
        })
        : read(driver, "select pg_sleep(0.4)::text as s", "mallory", 100),
    );
    await sleep(800);
    const carol = outcome(read(driver, "select 'carol' as who", "carol"));
    await sleep(300);
    const ended = await admin(
      `select pg_terminate_backend(pid) as ended from pg_stat_activity
        where application_name = 'dbport/mallory'`,
    );
    // Since outsider stop 50 dbport closes mallory's session itself as soon
    // as her statement ends (her cancel request, held, could land later):
    // no session of hers is left to end then. Either way a session of the
    // pool closed while carol waited for one.
    assert(
      ended.length === 0 ||
        JSON.stringify(ended) === JSON.stringify([{ ended: true }]),
      `mallory's session was ended: ${JSON.stringify(ended)}`,
    );
    assertEquals(proxy.stats.cancels, 1, "mallory's timeout sent a cancel");
    await Promise.all([...long, mallory]);
    return await carol;
  } finally {
    await driver.close();
    await proxy.close();
  }
}

Deno.test({
  name:
    "postgres: a session ended while its read waits for its cancel request to be delivered never leaves another client's read waiting for a session that other sessions could serve",
  ...needs("postgres"),
  async fn() {
    // What I did: the proxy held each cancel request back 3 s. The
    // connection's four read sessions were busy: three clients' lean reads
    // of `pg_sleep(2)` (10 s each), and mallory's lean read of
    // `pg_sleep(0.4)` with a 100 ms timeout. Mallory's timeout fired, the
    // read's own cancel request went out (pg_read.ts `stop`), her statement
    // ended, and the session was held for the request's delivery before it
    // is given back (pg_wired.ts handBack: `within(settled, HAND_BACK_MS)`,
    // then `reserved.release()`). Carol's lean read (10 s) then waited for a
    // session (postgres.js's `reserve()`). An administrator (or
    // idle_session_timeout) ended mallory's idle session meanwhile
    // (pg_terminate_backend). The three long reads ended 2 s in.
    // What happened: postgres.js reopened the closed session for carol's
    // waiting `reserve()` and forgot it (the flaw pg_session.ts
    // `requeueWaiters` works around for sessions dbport closes itself);
    // handBack never looked at the session again once its cancel request
    // landed, so nothing asked again for carol. Carol's read failed after
    // her full 10 s, "[timeout] the statement timeout of 10 s ran out while
    // the query waited for a database session: it was not started" — with
    // three of the connection's sessions idle from 2 s on.
    // The same with mallory's read a bound read (postgres.js's own path,
    // pg_session.ts giveBack waits for `cancelDelivered`, then sends its
    // clean-up to the closed session): carol's read failed the same way.
    // What should happen: carol's read gets one of the free sessions and
    // answers.
    await using fixture = await openFixture("postgres");
    const lean = await carolAfterEndedSession(
      fixture.url,
      fixture.admin,
      false,
    );
    const bound = await carolAfterEndedSession(
      fixture.url,
      fixture.admin,
      true,
    );
    assertEquals({ lean, bound }, {
      lean: 'answered [["carol"]]',
      bound: 'answered [["carol"]]',
    });
  },
});

Deno.test({
  name:
    "postgres lean read: a function swapped after its vetting cannot write through the batch, whatever it tries to leave read-only mode with",
  ...needs("postgres"),
  async fn() {
    // What I did: `f()` vetted a LANGUAGE sql read, then replaced (after
    // the check) with plpgsql that first tries to leave the batch's
    // `BEGIN READ ONLY` — `set_config('transaction_read_only', 'off',
    // true)`, `execute 'set transaction read write'`, `execute 'commit'`,
    // or `set_config('default_transaction_read_only', 'off', false)` for the
    // reads after — then inserts a row; each read by alice, then a read of
    // the session's read-only state by bob. What happened: each insert was
    // refused (the transaction had run a query; EXECUTE of a transaction
    // command is not implemented; the session default is rolled back with
    // the batch) and bob's read ran read-only. This pins it.
    await using fixture = await openFixture("postgres");
    const { driver } = ownPostgresDriver(fixture.url, "stop49b_ro");
    const f = `${fixture.schema}.f`;
    const notes = `${fixture.schema}.notes`;
    try {
      await fixture.admin(`create table ${notes} (v text)`);
      await fixture.admin(
        `create function ${f}() returns int language sql as $$ select 1 $$`,
      );
      assertEquals(await vetted(driver, `select ${f}()`), "read");
      const escapes = [
        "perform set_config('transaction_read_only', 'off', true)",
        "execute 'set transaction read write'",
        "execute 'commit'",
        "perform set_config('default_transaction_read_only', 'off', false)",
      ];
      const seen: string[] = [];
      for (const escape of escapes) {
        await fixture.admin(
          `create or replace function ${f}() returns int language plpgsql as $$
           begin ${escape}; insert into ${notes} values ('written'); return 1; end $$`,
        );
        const alice = await outcome(
          read(driver, `select ${f}() as one`, "alice"),
        );
        const bob = await outcome(
          read(
            driver,
            "select current_setting('transaction_read_only') as ro",
            "bob",
          ),
        );
        seen.push(`${alice.startsWith("failed") ? "refused" : alice} / ${bob}`);
      }
      assertEquals(seen, escapes.map(() => 'refused / answered [["on"]]'));
      assertEquals(await fixture.admin(`select * from ${notes}`), []);
    } finally {
      await driver.close();
    }
  },
});
