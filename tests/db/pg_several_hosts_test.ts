/**
 * A PostgreSQL URL of several hosts (`h1,h2:5432`, what an HA setup looks
 * like), whose sockets dbport opens itself (pg_hosts.ts). postgres.js 3.4.9,
 * left to rotate the hosts, ignored every connect error while a next host
 * existed: with every host down a call waited out its whole timeout ("the
 * statement timeout of 3 s ran out") and, after the driver closed,
 * postgres.js went on connecting ~117 times a second for ever; a
 * `target_session_attrs` no host matched opened 421 sessions in one 30 s
 * call and ~16 a second after the driver was closed.
 *
 * Two hosts are simulated by 127.0.0.1 and localhost (the same server), by
 * a port nobody listens on, and by TCP listeners of the test's own.
 */

import { assert, assertEquals, assertStringIncludes } from "@std/assert";
import postgres from "postgres";
import { openPostgres } from "../../lib/db/postgres/postgres.ts";
import { needs, POSTGRES_URL, READ_OPTIONS } from "../_db.ts";
import { firstMessage } from "../_tcp_proxy.ts";
import { tlsPgProxy } from "../_tls_pg_proxy.ts";
import { wireWrites } from "../../lib/db/postgres/pg_wire.ts";
import { withVisible } from "../../lib/db/redact.ts";
import { describeTarget } from "../../lib/db/target.ts";
import { savedConnection, serverWith } from "../_connections.ts";
import { callTool, toolErrorText } from "../_tool_call.ts";

/** What a saved connection's messages may keep: the hosts it lists. */
const shown = (url: string) =>
  withVisible([], describeTarget("postgres", url)!.visible);

const call = (timeoutMs: number) => ({
  signal: new AbortController().signal,
  timeoutMs,
});

const server = new URL(POSTGRES_URL);
const PORT = Number(server.port || 5432);

/** A loopback port nobody listens on (for now). */
function freePort(): number {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (listener.addr as Deno.NetAddr).port;
  listener.close();
  return port;
}

/** `POSTGRES_URL` with `hosts` instead of its host, on `database`. */
function urlOf(hosts: string, database = "test", params = ""): string {
  const user = server.username || "postgres";
  return `postgres://${user}@${hosts}/${database}${params}`;
}

/**
 * A listener that accepts connections and closes each at once, counting
 * them: a host that answers the connect and nothing else.
 */
function slammingHost(): {
  port: number;
  readonly accepted: number;
  close(): void;
} {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  let accepted = 0;
  void (async () => {
    for await (const conn of listener) {
      accepted++;
      conn.close();
    }
  })().catch(() => {});
  return {
    port: (listener.addr as Deno.NetAddr).port,
    get accepted() {
      return accepted;
    },
    close: () => listener.close(),
  };
}

/** A database of the test's own, whose sessions are counted. */
async function ownDatabase(): Promise<{
  name: string;
  sessions(): Promise<number>;
  [Symbol.asyncDispose](): Promise<void>;
}> {
  const admin = postgres(POSTGRES_URL, { max: 1, onnotice: () => {} });
  const name = `dbp_hosts_${crypto.randomUUID().slice(0, 8)}`;
  await admin.unsafe(`create database ${name}`);
  return {
    name,
    sessions: async () =>
      Number(
        (await admin`select sessions from pg_stat_database where datname = ${name}`)[
          0
        ]!.sessions,
      ),
    async [Symbol.asyncDispose]() {
      await admin.unsafe(`drop database if exists ${name} with (force)`);
      await admin.end();
    },
  };
}

/** pg_stat_database counts a session as it ends: wait for the last. */
const settle = () => new Promise((resolve) => setTimeout(resolve, 1_000));

Deno.test(
  "several hosts all down: the call fails at once as a connect error naming each host",
  needs("postgres"),
  async () => {
    const a = freePort();
    const b = freePort();
    const driver = openPostgres({
      url: urlOf(`127.0.0.1:${a},localhost:${b}`),
      secrets: [],
    });
    const started = performance.now();
    const failure = await driver.version(call(3000)).then(
      (version) => `answered ${version}`,
      (error: Error) => error.message,
    );
    const elapsed = performance.now() - started;
    await driver.close();
    assertStringIncludes(failure, "no host of the URL accepted a connection");
    assertStringIncludes(failure, `localhost:${b} (`);
    assert(!failure.includes("timeout"), failure);
    assert(elapsed < 2_500, `failed after ${elapsed} ms`);
    // The same through a read (the reads' pool, wired in clear).
    const reader = openPostgres({
      url: urlOf(`127.0.0.1:${a},localhost:${b}`),
      secrets: [],
    });
    const read = await reader.query("select 1", {
      ...READ_OPTIONS,
      ...call(3000),
    }).then(() => "answered", (error: Error) => error.message);
    await reader.close();
    assertStringIncludes(read, "no host of the URL accepted a connection");
  },
);

Deno.test(
  "several hosts that drop every connection: nothing connects after close",
  needs("postgres"),
  async () => {
    const one = slammingHost();
    const two = slammingHost();
    try {
      const driver = openPostgres({
        url: urlOf(`127.0.0.1:${one.port},127.0.0.1:${two.port}`),
        secrets: [],
      });
      const started = performance.now();
      const failure = await driver.version(call(3000)).then(
        () => "answered",
        (error: Error) => error.message,
      );
      const elapsed = performance.now() - started;
      await driver.close();
      const atClose = one.accepted + two.accepted;
      await new Promise((resolve) => setTimeout(resolve, 1_500));
      const after = one.accepted + two.accepted - atClose;
      assert(failure !== "answered");
      // Nothing connects once the driver closed. (While the call runs, a
      // host that drops every connection is reconnected at postgres.js's
      // backoff until the call's timeout — as a one-host URL to such a host
      // is: the session fails before it started, and the waiting call asks
      // again. `elapsed` is the call's timeout then.)
      // On main: postgres.js connected ~117 times a second, for ever.
      assertEquals(after, 0, `${after} connections after close`);
      assert(elapsed < 8_000, `failed after ${elapsed} ms: ${failure}`);
      // The first host is the one tried: the URL's order.
      assert(one.accepted > 0, "the first host was tried");
    } finally {
      one.close();
      two.close();
    }
  },
);

Deno.test(
  "several hosts, the first down: reads, catalog calls and a cancel reach the second",
  needs("postgres"),
  async () => {
    const down = freePort();
    await using db = await ownDatabase();
    const driver = openPostgres({
      url: urlOf(`127.0.0.1:${down},localhost:${PORT}`, db.name),
      secrets: [],
    });
    // A listener on the first host's port once the sessions are open on the
    // second: a cancel request must still go to the second (the backend's).
    let listener: Deno.Listener | null = null;
    let strayed = 0;
    try {
      assert((await driver.version(call(5000))).startsWith("PostgreSQL"));
      const rows = await driver.query("select 41 + 1 as x", {
        ...READ_OPTIONS,
        ...call(5000),
      });
      assertEquals(rows.rows, [[42]]);
      listener = Deno.listen({ hostname: "127.0.0.1", port: down });
      void (async () => {
        for await (const conn of listener!) {
          // A session's own connect may come here now (the URL's order); a
          // cancel request must not.
          const first = await firstMessage(conn).catch(() => null);
          if (first?.cancel) strayed++;
          try {
            conn.close();
          } catch {
            // Closed already.
          }
        }
      })().catch(() => {});
      const started = performance.now();
      const stopped = await driver.query("select pg_sleep(20)", {
        ...READ_OPTIONS,
        ...call(1000),
      }).then(() => "answered", (error: Error) => error.message);
      const elapsed = performance.now() - started;
      assertStringIncludes(stopped, "timeout");
      assert(elapsed < 5_000, `stopped after ${elapsed} ms`);
      // Stopped on the server: nothing of it still runs.
      const admin = postgres(POSTGRES_URL, { max: 1, onnotice: () => {} });
      try {
        const running = await admin`select count(*)::int as n
        from pg_stat_activity
       where datname = ${db.name} and query = 'select pg_sleep(20)'
         and state = 'active'`;
        assertEquals(running[0]!.n, 0);
      } finally {
        await admin.end();
      }
      assertEquals(strayed, 0, "a cancel request went to the other host");
      // Still answering after the stop.
      const again = await driver.query("select 2 as x", {
        ...READ_OPTIONS,
        ...call(5000),
      });
      assertEquals(again.rows, [[2]]);
    } finally {
      await driver.close();
      listener?.close();
    }
  },
);

Deno.test(
  "several hosts: target_session_attrs=read-write with the first host down answers on the second",
  needs("postgres"),
  async () => {
    const down = freePort();
    await using db = await ownDatabase();
    const before = await db.sessions();
    const driver = openPostgres({
      url: urlOf(
        `127.0.0.1:${down},localhost:${PORT}`,
        db.name,
        "?target_session_attrs=read-write",
      ),
      secrets: [],
    });
    try {
      assert((await driver.version(call(5000))).startsWith("PostgreSQL"));
      const rows = await driver.query("select 1 as x", {
        ...READ_OPTIONS,
        ...call(5000),
      });
      assertEquals(rows.rows, [[1]]);
    } finally {
      await driver.close();
    }
    await settle();
    const opened = (await db.sessions()) - before;
    assert(opened <= 3, `${opened} sessions for two calls`);
  },
);

Deno.test(
  "several hosts: target_session_attrs=standby on two primaries fails at once, a bounded number of sessions",
  needs("postgres"),
  async () => {
    await using db = await ownDatabase();
    const before = await db.sessions();
    const driver = openPostgres({
      url: urlOf(
        `127.0.0.1:${PORT},localhost:${PORT}`,
        db.name,
        "?target_session_attrs=standby",
      ),
      secrets: [],
    });
    const failures: string[] = [];
    const started = performance.now();
    try {
      for (const attempt of [0, 1]) {
        failures.push(
          await driver.version(call(30_000)).then(
            () => `answered ${attempt}`,
            (error: Error) => error.message,
          ),
          await driver.query("select 1", { ...READ_OPTIONS, ...call(30_000) })
            .then(() => `answered ${attempt}`, (error: Error) => error.message),
        );
      }
    } finally {
      await driver.close();
    }
    const elapsed = performance.now() - started;
    for (const failure of failures) {
      assertStringIncludes(
        failure,
        "no host of the URL is a standby (target_session_attrs=standby/read-only)",
      );
    }
    // On main: 421 sessions in one 30 s call.
    assert(elapsed < 10_000, `four calls took ${elapsed} ms`);
    await settle();
    const opened = (await db.sessions()) - before;
    // At most two per host per call (four calls, two hosts).
    assert(opened <= 16, `${opened} sessions for four calls`);
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    assertEquals(
      (await db.sessions()) - before,
      opened,
      "sessions opened after close",
    );
  },
);

Deno.test(
  "several hosts: target_session_attrs=prefer-standby on two primaries answers (libpq's fallback)",
  needs("postgres"),
  async () => {
    await using db = await ownDatabase();
    const before = await db.sessions();
    const driver = openPostgres({
      url: urlOf(
        `127.0.0.1:${PORT},localhost:${PORT}`,
        db.name,
        "?target_session_attrs=prefer-standby",
      ),
      secrets: [],
    });
    try {
      assert((await driver.version(call(10_000))).startsWith("PostgreSQL"));
      for (const x of [1, 2, 3]) {
        const rows = await driver.query(`select ${x} as x`, {
          ...READ_OPTIONS,
          ...call(10_000),
        });
        assertEquals(rows.rows, [[x]]);
      }
    } finally {
      await driver.close();
    }
    await settle();
    const opened = (await db.sessions()) - before;
    assert(opened <= 8, `${opened} sessions for four calls`);
  },
);

Deno.test(
  "several hosts in clear: reads take the wired path, one write each",
  needs("postgres"),
  async () => {
    const driver = openPostgres({
      url: urlOf(`127.0.0.1:${PORT},localhost:${PORT}`),
      secrets: [],
    });
    try {
      await driver.query("select 1", READ_OPTIONS);
      const before = { ...wireWrites };
      for (let i = 0; i < 10; i++) {
        const result = await driver.query(`select ${i} as i`, READ_OPTIONS);
        assertEquals(result.rows, [[i]]);
      }
      // One write each, nothing from postgres.js: the wired reader's path
      // (on main, several hosts took postgres.js's own path).
      assertEquals(wireWrites.reads - before.reads, 10);
      assertEquals(wireWrites.postgresJs - before.postgresJs, 0);
    } finally {
      await driver.close();
    }
  },
);

Deno.test(
  "several hosts under TLS (postgres.js negotiates it over dbport's socket): the first host down, the second answers encrypted",
  needs("postgres"),
  async () => {
    const proxy = await tlsPgProxy(new URL(POSTGRES_URL));
    const down = freePort();
    const port = new URL(proxy.url).port;
    const driver = openPostgres({
      url: urlOf(
        `127.0.0.1:${down},localhost:${port}`,
        "test",
        "?sslmode=require",
      ),
      secrets: [],
    });
    try {
      assert((await driver.version(call(5000))).startsWith("PostgreSQL"));
      const rows = await driver.query("select 7 as x", {
        ...READ_OPTIONS,
        ...call(5000),
      });
      assertEquals(rows.rows, [[7]]);
      assert(proxy.stats.tls > 0, "no session negotiated TLS");
      assertEquals(proxy.stats.clear, 0);
    } finally {
      await driver.close();
      await proxy.close();
    }
  },
);

Deno.test(
  "several hosts: a first host that takes the connection and never answers is given up after its own deadline; the next answers in the same call, and one silent host before a refused one fails naming both",
  needs("postgres"),
  async () => {
    const conns: Deno.Conn[] = [];
    const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
    const silent = (listener.addr as Deno.NetAddr).port;
    void (async () => {
      for await (const conn of listener) conns.push(conn);
    })().catch(() => {});
    try {
      const driver = openPostgres({
        url: urlOf(`127.0.0.1:${silent},localhost:${PORT}`),
        secrets: [],
      });
      try {
        const started = performance.now();
        const rows = await driver.query("select 1 as x", {
          ...READ_OPTIONS,
          ...call(9000),
        });
        const elapsed = performance.now() - started;
        assertEquals(rows.rows, [[1]]);
        // HOST_READY_MS (4 s), not the 10 s connect timeout.
        assert(elapsed < 6_000, `answered after ${elapsed} ms`);
        // The silent host is remembered: the next call does not wait on it.
        const again = performance.now();
        await driver.query("select 2 as x", { ...READ_OPTIONS, ...call(9000) });
        assert(performance.now() - again < 1_000);
        assertEquals(conns.length, 1);
      } finally {
        await driver.close();
      }
      const dead = freePort();
      const failingUrl = urlOf(`127.0.0.1:${silent},localhost:${dead}`);
      const failing = openPostgres({
        url: failingUrl,
        secrets: shown(failingUrl),
      });
      try {
        const started = performance.now();
        const failure = await failing.query("select 1", {
          ...READ_OPTIONS,
          ...call(15_000),
        }).then(() => "answered", (error: Error) => error.message);
        const elapsed = performance.now() - started;
        assertStringIncludes(
          failure,
          `127.0.0.1:${silent} (no answer within 4 s)`,
        );
        assertStringIncludes(failure, `localhost:${dead} (`);
        assert(elapsed < 6_000, `failed after ${elapsed} ms: ${failure}`);
      } finally {
        await failing.close();
      }
    } finally {
      for (const conn of conns) {
        try {
          conn.close();
        } catch { /* closed */ }
      }
      listener.close();
    }
  },
);

Deno.test(
  "several hosts: every host silent fails naming each host and why, within the hosts' deadlines; a bounded number of connections, none after the failure",
  needs("postgres"),
  async () => {
    const conns: Deno.Conn[] = [];
    const listeners = [0, 1].map(() =>
      Deno.listen({ hostname: "127.0.0.1", port: 0 })
    );
    for (const listener of listeners) {
      void (async () => {
        for await (const conn of listener) conns.push(conn);
      })().catch(() => {});
    }
    const [a, b] = listeners.map((l) => (l.addr as Deno.NetAddr).port);
    const url = urlOf(`127.0.0.1:${a},127.0.0.1:${b}`);
    const driver = openPostgres({ url, secrets: shown(url) });
    try {
      const started = performance.now();
      const failure = await driver.query("select 1", {
        ...READ_OPTIONS,
        ...call(20_000),
      }).then(() => "answered", (error: Error) => error.message);
      const elapsed = performance.now() - started;
      assertStringIncludes(
        failure,
        `no host of the URL answered: 127.0.0.1:${a} (no answer within 4 s), 127.0.0.1:${b} (no answer within 10 s)`,
      );
      // 4 s for the first, the connect timeout (10 s) for the last.
      assert(elapsed < 16_000, `failed after ${elapsed} ms`);
      // One to the first; the second gets the call's session and the
      // session postgres.js reopens for it (measured: 1 + 2), and nothing
      // after the failure (a new round would take 14 s more of both).
      await new Promise((resolve) => setTimeout(resolve, 1_500));
      assert(conns.length <= 3, `${conns.length} connections`);
    } finally {
      await driver.close();
      for (const conn of conns) {
        try {
          conn.close();
        } catch { /* closed */ }
      }
      for (const listener of listeners) listener.close();
    }
  },
);

Deno.test(
  "a saved URL of several hosts with a port each (libpq's h1:5432,h2:5433) serves through the server; a saved URL that cannot be used fails alone, named, never stopping the server nor quoting its password",
  needs("postgres"),
  async () => {
    const dead = freePort();
    const password = "hostfix-Secret-9";
    const user = server.username || "postgres";
    const perHost = savedConnection({
      engine: "postgres",
      url:
        `postgres://${user}:${password}@127.0.0.1:${dead},localhost:${PORT}/test`,
    }, "PerHost");
    const broken = savedConnection({
      engine: "postgres",
      url: `postgres://${user}:${password}@127.0.0.1:x5432,localhost/test`,
    }, "Broken");
    const good = savedConnection(
      { engine: "postgres", url: POSTGRES_URL },
      "Good",
    );
    await using app = await serverWith([good, perHost, broken]);
    const token = (await app.mint("readOnly")).plaintext;
    const run = (id: string) =>
      callTool(app, "execute_query", {
        connection_id: id,
        query: "select 1 as one",
      }, { authorization: `Bearer ${token}` });
    const ok = await run(perHost.id);
    assertEquals(ok.json.result?.isError, undefined, ok.text);
    assertEquals(ok.json.result.structuredContent.rows, [[1]]);
    assertEquals((await run(good.id)).json.result.structuredContent.rows, [[
      1,
    ]]);
    const failed = toolErrorText(await run(broken.id));
    assertStringIncludes(failed, "saved URL is not a valid URL");
    assert(!failed.includes(password), failed);
    const listed = await callTool(app, "list_connections", {}, {
      authorization: `Bearer ${token}`,
    });
    const rows = listed.json.result.structuredContent.connections as {
      name: string;
      host: string | null;
      port: number | null;
    }[];
    const row = rows.find((one) => one.name === "PerHost")!;
    assertEquals(row.host, `127.0.0.1:${dead},localhost:${PORT}`);
    assertEquals(row.port, null);
    assertEquals(rows.find((one) => one.name === "Broken")?.host, null);
  },
);

Deno.test(
  "several hosts: with two silent hosts before the answering one, each call — a read, an export — ends within its 3 s timeout (+1 s), though the hosts' walk takes 4 s a host (a call asked again kept waiting its whole timeout anew: 4.0 s)",
  { ...needs("postgres"), sanitizeOps: false, sanitizeResources: false },
  async () => {
    const conns: Deno.Conn[] = [];
    const listeners = [0, 1].map(() =>
      Deno.listen({ hostname: "127.0.0.1", port: 0 })
    );
    for (const listener of listeners) {
      void (async () => {
        for await (const conn of listener) conns.push(conn);
      })().catch(() => {});
    }
    const [a, b] = listeners.map((l) => (l.addr as Deno.NetAddr).port);
    const url = urlOf(`127.0.0.1:${a},127.0.0.1:${b},localhost:${PORT}`);
    const driver = openPostgres({ url, secrets: shown(url), wiredReads: true });
    const took: { what: string; ms: number; said: string }[] = [];
    try {
      for (const what of ["read", "read", "export", "read"]) {
        const started = performance.now();
        const said = await (what === "read"
          ? driver.query("select 1 as one", { ...READ_OPTIONS, ...call(3000) })
          : driver.streamRead!(
            "select 1 as one",
            { ...READ_OPTIONS, ...call(3000) },
            () =>
              Promise.resolve(),
          )).then(() =>
            "answered", (error: Error) =>
            error.message);
        took.push({ what, ms: Math.round(performance.now() - started), said });
      }
    } finally {
      await driver.close();
      for (const conn of conns) {
        try {
          conn.close();
        } catch { /* closed */ }
      }
      for (const listener of listeners) listener.close();
    }
    const late = took.filter((one) => one.ms > 4000);
    assertEquals(late, [], JSON.stringify(took));
    // Each failed as the timeout it is, or answered once the walk was done.
    for (const one of took) {
      assert(
        one.said === "answered" ||
          one.said.includes("the statement timeout of 3 s ran out"),
        JSON.stringify(one),
      );
    }
    assertEquals(took.at(-1)!.said, "answered", JSON.stringify(took));
  },
);
