/**
 * PostgreSQL under TLS (lib/db/postgres/pg_tls.ts): dbport negotiates TLS in
 * the socket factory it gives postgres.js, so a TLS session is wired (one
 * write per read), watched, and asked again for like a plain one, and its
 * cancel requests go over TLS too. The shared server's TLS is off: a proxy
 * (tests/_tls_pg_proxy.ts) does TLS in front of it with test certificates.
 * Each sslmode keeps the verification postgres.js gave it.
 */

import { assert, assertEquals, assertMatch, assertRejects } from "@std/assert";
import { DbError } from "../../lib/db/errors.ts";
import { DriverPool } from "../../lib/db/pool.ts";
import { openPostgres } from "../../lib/db/postgres/postgres.ts";
import { tlsPlan } from "../../lib/db/postgres/pg_tls_plan.ts";
import { wireWrites } from "../../lib/db/postgres/pg_wire.ts";
import type { Driver } from "../../lib/db/types.ts";
import type { Signature } from "../../lib/db/signature.ts";
import { ownPostgresDriver } from "../_pg_driver.ts";
import { needs, openFixture, READ_OPTIONS, runningCount } from "../_db.ts";
import { outcome } from "../_outsider.ts";
import { waitUntil } from "../_wait.ts";
import { TEST_CA_FILE, tlsPgProxy } from "../_tls_pg_proxy.ts";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Waits for postgres.js's second attempt after a session failed to open:
 * postgres.js 3.4.9 leaves a `reserve()` whose connection failed in its
 * queue and opens one session more for it (index.js `reserve`), a timer of
 * 5-10 ms that would otherwise outlive the driver closed just after.
 */
function secondAttempt(attempts: () => number, before: number) {
  return waitUntil(
    "postgres.js's one more attempt for its failed reserve()",
    () => attempts() - before >= 2,
  );
}

/** `driver`'s answer to `text`, or its failure's kind and message. */
function answer(driver: Driver, text: string): Promise<string> {
  return driver.query(text, READ_OPTIONS).then(
    (result) => `answered ${JSON.stringify(result.rows)}`,
    (error) =>
      error instanceof DbError
        ? `${error.kind}: ${error.message}`
        : `failed: ${error}`,
  );
}

Deno.test("postgres tls: each sslmode's verification is postgres.js's", () => {
  const url = "postgres://u@db.example:5432/d";
  const plan = (query: string, ssl: unknown, host = ["db.example"]) =>
    tlsPlan(`${url}?${query}`, { ssl, host });
  assertEquals(plan("", false), null);
  for (const mode of ["require", "allow"]) {
    assertEquals(plan(`sslmode=${mode}`, mode), {
      mode,
      verify: false,
      fallback: false,
      direct: false,
      host: "db.example",
    });
  }
  assertEquals(plan("sslmode=prefer", "prefer")?.fallback, true);
  assertEquals(plan("sslmode=prefer", "prefer")?.verify, false);
  // verify-ca checks the host name too (postgres.js's tls.connect did).
  for (const mode of ["verify-ca", "verify-full", "true", "no-verify"]) {
    assertEquals(plan(`sslmode=${mode}`, mode)?.verify, true, mode);
    assertEquals(plan(`sslmode=${mode}`, mode)?.fallback, false, mode);
  }
  // A CA named is checked against, whatever the mode; never a fallback.
  const withCa = plan("sslmode=prefer&sslrootcert=/ca.pem", "prefer");
  assertEquals([withCa?.verify, withCa?.fallback, withCa?.caFile], [
    true,
    false,
    "/ca.pem",
  ]);
  assertEquals(
    plan("sslrootcert=system", "verify-full")?.mode,
    "verify-full",
  );
  assertEquals(
    tlsPlan(url, { ssl: "require", sslnegotiation: "direct", host: ["h"] })
      ?.direct,
    true,
  );
  // Several hosts, or an ssl object: postgres.js negotiates (not wired).
  assertEquals(plan("sslmode=require", "require", ["a", "b"]), undefined);
  assertEquals(plan("", { rejectUnauthorized: true }), undefined);
});

Deno.test({
  name:
    "postgres tls: reads over TLS are wired (one write each), answer what the plain path answers, and postgres.js sends none of its own",
  ...needs("postgres"),
  async fn() {
    await using fixture = await openFixture("postgres");
    const proxy = await tlsPgProxy(new URL(fixture.url));
    const tls = ownPostgresDriver(proxy.url, "tls_wired", {
      sslmode: "verify-full",
      sslrootcert: TEST_CA_FILE,
    }).driver;
    const plain = ownPostgresDriver(fixture.url, "tls_plain").driver;
    const postgresJs = openPostgres({
      url: fixture.url,
      secrets: [],
      wiredReads: false,
    });
    const typed =
      `select 1::int2 as a, 2::int4 as b, 9007199254740993::int8 as c,
        1.50::numeric(4,2) as d, 'é✓ "q"'::text as e, '\\x00ff'::bytea as f,
        true as g, '{"k":[1,null]}'::jsonb as h, '{"k":1}'::json as i,
        '2024-02-29 12:34:56.789+00'::timestamptz as j, '2024-02-29'::date as k,
        array[1,null,3]::int[] as l, array['a','b c']::text[] as m,
        null::text as n, 'f47ac10b-58cc-4372-a567-0e02b2c3d479'::uuid as o,
        '1 day 02:03'::interval as p, 'NaN'::float8 as q, 1e-7::float4 as r,
        repeat('x', 300000) as s, '(1,2)'::point as t`;
    const many = `select i, md5(i::text) as h from generate_series(1, 2000) i`;
    try {
      for (const driver of [tls, plain, postgresJs]) {
        await driver.query("select 1", READ_OPTIONS);
      }
      const before = { ...wireWrites };
      const results = [];
      for (const driver of [tls, plain, postgresJs]) {
        results.push([
          await answer(driver, typed),
          await answer(driver, many),
        ]);
      }
      assert(results[0]![0]!.startsWith("answered"), results[0]![0]);
      assertEquals(results[0], results[1], "TLS against plain, wired");
      assertEquals(results[0], results[2], "TLS against postgres.js's path");
      // Four wired reads (two over TLS, two plain); postgres.js wrote
      // nothing on a wired socket for them.
      assertEquals(wireWrites.reads - before.reads, 4);
      assertEquals(wireWrites.postgresJs - before.postgresJs, 0);
      assert(proxy.stats.tls >= 1, "the session was under TLS");
      assertEquals(proxy.stats.clear, 0);
    } finally {
      await Promise.all([tls.close(), plain.close(), postgresJs.close()]);
      await proxy.close();
    }
  },
});

Deno.test({
  name:
    "postgres tls: verify-full and verify-ca refuse an untrusted certificate and a wrong host name; require encrypts without checking",
  ...needs("postgres"),
  async fn() {
    await using fixture = await openFixture("postgres");
    const good = await tlsPgProxy(new URL(fixture.url));
    const other = await tlsPgProxy(new URL(fixture.url), { cert: "other" });
    const seen: Record<string, string> = {};
    const cases: [string, string, Record<string, string>][] = [
      ["trusted CA, right host", good.url, {
        sslmode: "verify-full",
        sslrootcert: TEST_CA_FILE,
      }],
      ["no CA given (untrusted)", good.url, { sslmode: "verify-full" }],
      ["trusted CA, other.example's certificate", other.url, {
        sslmode: "verify-full",
        sslrootcert: TEST_CA_FILE,
      }],
      ["verify-ca, other.example's certificate", other.url, {
        sslmode: "verify-ca",
        sslrootcert: TEST_CA_FILE,
      }],
      ["require, other.example's certificate", other.url, {
        sslmode: "require",
      }],
    ];
    try {
      for (const [name, url, extra] of cases) {
        const { driver } = ownPostgresDriver(url, "tls_verify", extra);
        const proxy = url === good.url ? good : other;
        const before = proxy.stats.tls;
        try {
          const said = await answer(driver, "select 1 as one");
          if (!said.startsWith("answered")) {
            await secondAttempt(() => proxy.stats.tls, before);
          }
          seen[name] = said
            .replace(
              /: [^]*/,
              (rest) =>
                /altnames|certificate/.test(rest)
                  ? /altnames/.test(rest) ? ": host name" : ": certificate"
                  : rest,
            );
        } finally {
          await driver.close();
        }
      }
      assertEquals(seen, {
        "trusted CA, right host": "answered [[1]]",
        "no CA given (untrusted)": "connect: certificate",
        "trusted CA, other.example's certificate": "connect: host name",
        "verify-ca, other.example's certificate": "connect: host name",
        "require, other.example's certificate": "answered [[1]]",
      });
    } finally {
      await good.close();
      await other.close();
    }
  },
});

Deno.test({
  name:
    "postgres tls: a server without TLS is refused under require (redacted), prefer goes on in clear and is wired",
  ...needs("postgres"),
  async fn() {
    await using fixture = await openFixture("postgres");
    // A server whose TLS is off answers the SSLRequest with 'N' (the proxy,
    // counting them, as the shared server does).
    const proxy = await tlsPgProxy(new URL(fixture.url), { refuseTls: true });
    const secret = "s3cret-pw";
    const url = new URL(proxy.url);
    url.password = secret;
    url.searchParams.set("sslmode", "require");
    const required = openPostgres({
      url: url.toString(),
      secrets: [secret],
      wiredReads: true,
    });
    try {
      const error = await assertRejects(
        () => required.query("select 1", READ_OPTIONS),
        DbError,
      );
      assertEquals(error.kind, "connect");
      assertMatch(
        error.message,
        /^the server does not support SSL\/TLS, which the URL's sslmode requires \(dbport never falls back to plain text\)/,
      );
      assert(!error.message.includes(secret), error.message);
      await secondAttempt(() => proxy.stats.refused, 0);
    } finally {
      await required.close();
    }
    const { driver } = ownPostgresDriver(proxy.url, "tls_prefer", {
      sslmode: "prefer",
    });
    try {
      await driver.query("select 1", READ_OPTIONS);
      const before = wireWrites.reads;
      assertEquals(await answer(driver, "select 2 as two"), "answered [[2]]");
      assertEquals(wireWrites.reads - before, 1);
      assertEquals(proxy.stats.tls, 0);
    } finally {
      await driver.close();
      await proxy.close();
    }
  },
});

Deno.test({
  name:
    "postgres tls: bytes in clear after the server's 'S' are refused, never read as the server's (CVE-2021-23222)",
  async fn() {
    // A man in the middle answers the SSLRequest with 'S' and, in the same
    // write, bytes of its own: a client that kept them would read them as
    // the server's first answer inside TLS.
    const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
    let attempts = 0;
    const served = (async () => {
      for await (const conn of listener) {
        attempts++;
        const head = new Uint8Array(8);
        await conn.read(head);
        await conn.write(
          new TextEncoder().encode("SE\0\0\0\x0bSFATAL\0\0"),
        );
        await conn.read(new Uint8Array(64)).catch(() => null);
        conn.close();
      }
    })().catch(() => {});
    const port = (listener.addr as Deno.NetAddr).port;
    const driver = openPostgres({
      url: `postgres://u@127.0.0.1:${port}/d?sslmode=require`,
      secrets: [],
    });
    try {
      const error = await assertRejects(
        () => driver.query("select 1", { ...READ_OPTIONS, timeoutMs: 5_000 }),
        DbError,
      );
      assertEquals(error.kind, "connect");
      assertMatch(error.message, /unencrypted data after its 'S'/);
      await secondAttempt(() => attempts, 0);
    } finally {
      await driver.close();
      listener.close();
      await served;
    }
  },
});

Deno.test({
  name:
    "postgres tls: a read's timeout and its caller's cancel stop the statement on the server, by a cancel request over TLS",
  ...needs("postgres"),
  async fn() {
    await using fixture = await openFixture("postgres");
    const proxy = await tlsPgProxy(new URL(fixture.url));
    const { driver } = ownPostgresDriver(proxy.url, "tls_cancel", {
      sslmode: "require",
    });
    try {
      await driver.query("select 1", READ_OPTIONS);
      const timedOut = await assertRejects(
        () =>
          driver.query("select pg_sleep(30) /* tls-timeout-marker */", {
            ...READ_OPTIONS,
            timeoutMs: 300,
          }),
        DbError,
      );
      assertEquals(timedOut.kind, "timeout", timedOut.message);
      const controller = new AbortController();
      const cancelled = driver.query(
        "select pg_sleep(30) /* tls-cancel-marker */",
        { ...READ_OPTIONS, signal: controller.signal },
      );
      await sleep(300);
      controller.abort();
      const error = await assertRejects(() => cancelled, DbError);
      assertEquals(error.kind, "cancelled", error.message);
      // Both were stopped by a cancel request that went through the proxy
      // inside TLS (nothing in clear), and neither runs on. (On a loaded
      // machine the 300 ms timeout may run out before the first statement
      // was sent — "it was not started" — and that one needs no request:
      // seen once in CI's company.)
      assert(
        proxy.stats.cancels >= 1 && proxy.stats.cancels <= 2 * 7,
        `${proxy.stats.cancels} cancel requests`,
      );
      assertEquals(proxy.stats.clear, 0);
      assertEquals(await runningCount(fixture, "tls-timeout-marker"), 0);
      assertEquals(await runningCount(fixture, "tls-cancel-marker"), 0);
      // The session serves the next read.
      assertEquals(await answer(driver, "select 3 as n"), "answered [[3]]");
    } finally {
      await driver.close();
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

/**
 * Carol's read, asked while mallory's session (its statement stopped by her
 * timeout, its cancel request held back 3 s by the proxy) is ended by an
 * administrator before the request lands, over TLS; the connection's other
 * three sessions busy for 2 s. Mallory's read is lean, or a bound read
 * (postgres.js's path) when `bound`.
 */
async function carolOverTls(
  fixture: { url: string; admin: (sql: string) => Promise<unknown[]> },
  bound: boolean,
): Promise<string> {
  const proxy = await tlsPgProxy(new URL(fixture.url), {
    cancelDelayMs: 3_000,
  });
  const { driver } = ownPostgresDriver(proxy.url, "tls_49b", {
    sslmode: "require",
  });
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
    // A name of this run's own: other runs use the same server.
    const who = `mallory-${crypto.randomUUID().slice(0, 8)}`;
    const mallory = outcome(
      bound
        ? driver.query("select pg_sleep(0.4)::text as s where $1::int = 1", {
          ...READ_OPTIONS,
          params: [1],
          timeoutMs: 100,
          signal: new AbortController().signal,
          sign: sign(who),
        })
        : read(driver, "select pg_sleep(0.4)::text as s", who, 100),
    );
    await sleep(800);
    const carol = outcome(read(driver, "select 'carol' as who", "carol"));
    await sleep(300);
    const ended = await fixture.admin(
      `select pg_terminate_backend(pid) as ended from pg_stat_activity
        where application_name = 'dbport/${who}'`,
    );
    // Since outsider stop 50 dbport closes mallory's session itself as soon
    // as her statement ends (her cancel request, held, could land later):
    // no session of hers may be left to end. Either way a session of the
    // pool closed while the other read waited for one.
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
    "postgres tls: a session ended while its read waits for its cancel request's delivery never leaves another read waiting (outsider stop 49b, over TLS)",
  ...needs("postgres"),
  async fn() {
    // As tests/db/outsider_stop49b_test.ts, over TLS: the proxy holds each
    // cancel request back 3 s; three long reads hold three of the four
    // sessions; mallory's read times out at 100 ms and its session is held
    // for its cancel's delivery; carol's read waits for a session; an
    // administrator ends mallory's session. The pool's requeue hook
    // (pg_pool_sockets.ts `untilEnded`) sees the TLS session close now.
    await using fixture = await openFixture("postgres");
    const lean = await carolOverTls(fixture, false);
    const bound = await carolOverTls(fixture, true);
    assertEquals({ lean, bound }, {
      lean: 'answered [["carol"]]',
      bound: 'answered [["carol"]]',
    });
  },
});

Deno.test({
  name:
    "postgres tls: dbport's own statements sent as the server ends every idle TLS session (57P01) are sent again, not failed (outsider stop 48, over TLS)",
  ...needs("postgres"),
  async fn() {
    // As tests/db/outsider_stop48_test.ts's 57P01 case, over TLS: the own
    // pool's sockets are watched (pg_pools.ts `#watch`) under TLS now. The
    // server ends the connection's sessions while this process's event loop
    // is held, so the calls are written before the close is read; three
    // rounds (each holds the loop 0.9 s). That case's lean read is not here:
    // against a server it meets a reset (it was never run, and is asked
    // again: so it answered against a PostgreSQL with TLS of its own), but
    // this proxy takes its bytes and closes cleanly, which is what a session
    // ended under a running statement looks like ("closed mid-read").
    await using fixture = await openFixture("postgres");
    const proxy = await tlsPgProxy(new URL(fixture.url));
    const app = `tls_s48_${crypto.randomUUID().slice(0, 8)}`;
    const url = new URL(proxy.url);
    url.searchParams.set("application_name", app);
    url.searchParams.set("sslmode", "require");
    const pool = new DriverPool();
    const spec = {
      id: crypto.randomUUID(),
      engine: "postgres" as const,
      url: url.toString(),
    };
    const options = { signal: new AbortController().signal, timeoutMs: 5_000 };
    const failed: string[] = [];
    const note = async (what: string, work: Promise<unknown>) => {
      const said = await outcome(work);
      if (!said.startsWith("answered")) failed.push(`${what}: ${said}`);
    };
    try {
      for (let round = 0; round < 3; round++) {
        await note(
          `round ${round}, version()`,
          pool.get(spec).version(options),
        );
        await note(
          `round ${round}, first read`,
          pool.get(spec).query("select 1 as a", READ_OPTIONS),
        );
        const kill = fixture.admin(
          `select pg_sleep(0.3), pg_terminate_backend(pid) from pg_stat_activity
            where application_name = '${app}'`,
        );
        await sleep(50);
        const end = Date.now() + 900;
        while (Date.now() < end) { /* held */ }
        const answers = [
          note(`round ${round}, version()`, pool.get(spec).version(options)),
          note(
            `round ${round}, listSchemas()`,
            pool.get(spec).listSchemas(options),
          ),
        ];
        await kill;
        await Promise.all(answers);
      }
      assertEquals(failed, []);
      assert(proxy.stats.tls >= 2, "sessions were opened again under TLS");
      assertEquals(proxy.stats.clear, 0);
    } finally {
      await pool.closeAll();
      await proxy.close();
    }
  },
});
