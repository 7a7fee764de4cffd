/**
 * Load (issue: "Limits under load"): `main.ts serve` as its own process, 64
 * clients running queries on PostgreSQL, MariaDB and SQLite at once, plus
 * slow-loris connections (a header byte a second) and clients that never read
 * their answer, for DBPORT_LOAD_SECONDS (default 60). Every well-formed
 * request that the transport accepted is answered correctly; the only other
 * outcome allowed is the transport refusing a connection past its 64; the
 * server's RSS stays bounded; no database session is left behind.
 *
 * Loopback only, bounded in time and count.
 */

import { assert, assertEquals } from "@std/assert";
import { saveConnections } from "../../lib/app/connections.ts";
import { inAppDir } from "../../lib/app/paths.ts";
import { CONNECTIONS_FILE } from "../../lib/base/identity.ts";
import { saveSettings } from "../../lib/serve.ts";
import { sleep } from "../../lib/base/sleep.ts";
import { savedConnection } from "../_connections.ts";
import { type Fixture, needs, openFixture, POSTGRES_URL } from "../_db.ts";
import { mainArgs, spawnServe } from "../_main.ts";
import { modernHeaders, modernRequest } from "../_server.ts";
import { waitUntil } from "../_wait.ts";

const SECONDS = Number(Deno.env.get("DBPORT_LOAD_SECONDS") ?? "60");
const CLIENTS = 64;
const SLOW_LORIS = 8;
const NON_READERS = 4;
/**
 * The server's peak resident memory (VmHWM) may not pass this (issue 33's
 * target). It was 804 MiB (835 without SQLite at all): every MariaDB read
 * cut at its row cap kept its socket and the rows the server still sent
 * (mysql.ts `discard`); since, 251-296 MiB on the same shared machine (the
 * heap's live data 9 MiB after 200 cut reads, was 51 MiB and growing).
 */
const RSS_LIMIT_MB = 500;

/** A /proc/<pid>/status figure in MiB (VmRSS now, VmHWM its peak). */
function statusMb(pid: number, field: "VmRSS" | "VmHWM"): number {
  try {
    const status = Deno.readTextFileSync(`/proc/${pid}/status`);
    return Number(new RegExp(`${field}:\\s+(\\d+)`).exec(status)?.[1] ?? 0) /
      1024;
  } catch {
    return 0;
  }
}

/** How many threads the process has (each SQLite worker is one). */
function threadCount(pid: number): number {
  try {
    const status = Deno.readTextFileSync(`/proc/${pid}/status`);
    return Number(/Threads:\s+(\d+)/.exec(status)?.[1] ?? 0);
  } catch {
    return 0;
  }
}

/**
 * This run's own application_name: its PostgreSQL URL carries it (the driver
 * passes URL parameters through), so only this run's sessions are counted,
 * never those of the user's `serve` or another engineer's tests.
 */
const APP_NAME = `dbport-load-${crypto.randomUUID().slice(0, 8)}`;

/** The fixture's URL as this run's server opens it. */
function ownUrl(fixture: Fixture): string {
  if (fixture.engine !== "postgres") return fixture.url;
  const url = new URL(fixture.url);
  url.searchParams.set("application_name", APP_NAME);
  return url.toString();
}

/** Sessions this run's server holds on the fixture's server (SQLite: none). */
async function sessions(fixture: Fixture, active: boolean): Promise<number> {
  if (fixture.engine === "postgres") {
    const rows = await fixture.admin(
      `select count(*) as n from pg_stat_activity where application_name = '${APP_NAME}'${
        active ? " and state <> 'idle'" : ""
      }`,
    );
    return Number((rows[0] as { n: unknown }).n);
  }
  if (fixture.engine === "mysql") {
    const rows = await fixture.admin(
      `select count(*) as n from information_schema.processlist where db = '${fixture.schema}' and id <> connection_id()${
        active ? " and command <> 'Sleep'" : ""
      }`,
    );
    return Number((rows[0] as { n: unknown }).n);
  }
  return 0;
}

const QUERIES: Record<
  Fixture["engine"],
  [string, (rows: unknown[][]) => boolean][]
> = {
  postgres: [
    ["select 1 as one", (rows) => rows.length === 1 && rows[0]![0] === 1],
    [
      "select g, md5(g::text) from generate_series(1, 2000) g",
      (rows) => rows.length === 500,
    ],
    // pg_sleep is off the read allowlist: a short read that takes a while.
    [
      "with recursive c(x) as (select 1 union all select x + 1 from c where x < 50000) select count(*) as slept from c",
      (rows) => rows.length === 1,
    ],
  ],
  mysql: [
    ["select 1 as one", (rows) => rows.length === 1 && rows[0]![0] === 1],
    [
      "select seq, md5(seq) from seq_1_to_2000",
      (rows) => rows.length === 500,
    ],
    ["select sleep(0.05) as slept", (rows) => rows[0]![0] === 0],
  ],
  sqlite: [
    ["select 1 as one", (rows) => rows.length === 1 && rows[0]![0] === 1],
    [
      "with recursive g(n) as (select 1 union all select n + 1 from g where n < 2000) select n, hex(n) from g",
      (rows) => rows.length === 500,
    ],
  ],
};

/** A connection, or null after a pause when the server refused one (past 64). */
async function connectOrWait(port: number): Promise<Deno.Conn | null> {
  try {
    return await Deno.connect({ hostname: "127.0.0.1", port });
  } catch {
    // The load's back-off: a refused client tries again after 500 ms.
    await sleep(500);
    return null;
  }
}

/** Slow-loris connections the server closed, and the longest one's life. */
let lorisCut = 0;
let lorisLongestMs = 0;

/** Send a header byte a second until the server closes the connection. */
async function slowLoris(port: number, until: number): Promise<void> {
  while (Date.now() < until) {
    const conn = await connectOrWait(port);
    if (conn === null) continue;
    const opened = Date.now();
    const text = `POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nX-Slow: ${
      "a".repeat(200)
    }`;
    try {
      for (const byte of new TextEncoder().encode(text)) {
        if (Date.now() >= until) break;
        await conn.write(new Uint8Array([byte]));
        // The slow loris's pace: a byte a second.
        await sleep(1_000);
      }
    } catch {
      // The server closed it (headers timeout, or past 64): open another.
      lorisCut++;
      lorisLongestMs = Math.max(lorisLongestMs, Date.now() - opened);
    } finally {
      try {
        conn.close();
      } catch { /* closed */ }
    }
  }
}

/** Send a whole request for many rows and never read the answer. */
async function nonReader(
  port: number,
  connectionId: string,
  until: number,
): Promise<void> {
  while (Date.now() < until) {
    const conn = await connectOrWait(port);
    if (conn === null) continue;
    const body = JSON.stringify(modernRequest("tools/call", {
      name: "execute_query",
      arguments: {
        connection_id: connectionId,
        query: "select g, repeat('x', 200) from generate_series(1, 100000) g",
        max_rows: 10_000,
      },
    }, crypto.randomUUID()));
    const headers = Object.entries(
      modernHeaders(JSON.parse(body)),
    ).map(([k, v]) => `${k}: ${v}\r\n`).join("");
    try {
      await conn.write(
        new TextEncoder().encode(
          `POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\n${headers}content-length: ${
            new TextEncoder().encode(body).length
          }\r\n\r\n${body}`,
        ),
      );
      // Never read; hold the connection until the server's 30 s idle
      // timer (lib/server/listener.ts) gives up on it.
      await sleep(Math.min(35_000, Math.max(0, until - Date.now())));
    } catch {
      // closed by the server
    } finally {
      try {
        conn.close();
      } catch { /* closed */ }
    }
  }
}

Deno.test({
  name:
    `load: ${CLIENTS} clients, ${SLOW_LORIS} slow-loris and ${NON_READERS} non-reading connections for ${SECONDS} s`,
  // The serve process's pipes are drained to their end before the test ends.
  sanitizeResources: true,
  async fn() {
    const fixtures: Fixture[] = [];
    // A server that is not reachable here is left out of the load (never
    // under CI); SQLite always takes part.
    for (const engine of ["postgres", "mysql", "sqlite"] as const) {
      if (!needs(engine).ignore) fixtures.push(await openFixture(engine));
    }
    const home = await Deno.makeTempDir({ prefix: "dbport-load-" });
    const saved = fixtures.map((fixture) =>
      savedConnection(
        { ...fixture, url: ownUrl(fixture) },
        `Load ${fixture.engine}`,
        { safeMode: "silent" },
      )
    );
    // Another dbport beside it (the user's `serve`) with sessions open on
    // the same PostgreSQL server, busy and idle, all along.
    const bystander = fixtures.some((f) => f.engine === "postgres")
      ? await startBystander()
      : null;
    await saveConnections(inAppDir(home, CONNECTIONS_FILE), saved);
    await saveSettings(home, { requireAuth: false });
    const child = new Deno.Command(Deno.execPath(), {
      args: mainArgs("serve"),
      env: { DBPORT_HOME: home, NO_COLOR: "1" },
      stdout: "piped",
      stderr: "piped",
    }).spawn();
    let out = "";
    let err = "";
    const stdout = (async () => {
      for await (
        const chunk of child.stdout.pipeThrough(new TextDecoderStream())
      ) out += chunk;
    })();
    const stderr = (async () => {
      for await (
        const chunk of child.stderr.pipeThrough(new TextDecoderStream())
      ) err += chunk;
    })();
    try {
      await waitUntil("the server to print its endpoint", () => {
        assert(!out.includes("error"), out + err);
        return out.includes("Ctrl+C");
      }, { timeoutMs: 60_000, intervalMs: 50 });
      const url = /MCP endpoint:\s+(\S+)/.exec(out)![1]!;
      const port = Number(new URL(url).port);
      const until = Date.now() + SECONDS * 1000;

      const counts = { ok: 0, refused: 0, wrong: [] as string[] };
      let peakRss = 0;
      let threads = 0;
      const sampler = (async () => {
        while (Date.now() < until) {
          peakRss = Math.max(peakRss, statusMb(child.pid, "VmHWM"));
          threads = Math.max(threads, threadCount(child.pid));
          // The sampling pace, not a wait: every 500 ms.
          await sleep(500);
        }
      })();

      const client = async (n: number) => {
        const saved_ = saved[n % saved.length]!;
        const fixture = fixtures[n % fixtures.length]!;
        const queries = QUERIES[fixture.engine];
        let i = n;
        while (Date.now() < until) {
          const [query, check] = queries[i++ % queries.length]!;
          const body = modernRequest("tools/call", {
            name: "execute_query",
            arguments: { connection_id: saved_.id, query },
          }, `${n}-${i}`);
          let response: Response;
          try {
            response = await fetch(url, {
              method: "POST",
              headers: modernHeaders(body),
              body: JSON.stringify(body),
            });
          } catch {
            // The transport refused a connection past its 64: intended. The
            // client's back-off before it asks again.
            counts.refused++;
            await sleep(100);
            continue;
          }
          const text = await response.text();
          if (
            response.status === 503 && text.includes("too_many_connections")
          ) {
            // Past 64 connections: told to retry in a second. Intended. The
            // client's back-off before it asks again.
            counts.refused++;
            await sleep(100);
            continue;
          }
          let rows: unknown[][] | undefined;
          try {
            rows = JSON.parse(text).result?.structuredContent?.rows;
          } catch { /* not JSON */ }
          if (response.status === 200 && rows !== undefined && check(rows)) {
            counts.ok++;
          } else if (counts.wrong.length < 5) {
            counts.wrong.push(`${response.status} ${text.slice(0, 300)}`);
          } else counts.wrong.push("");
        }
      };

      // The slow ones connect first, so they hold their slots.
      const slow = [
        ...Array.from({ length: SLOW_LORIS }, () => slowLoris(port, until)),
        ...Array.from(
          { length: NON_READERS },
          () => nonReader(port, saved[0]!.id, until),
        ),
      ];
      // A second for the slow ones to take their slots before the clients
      // come (the load's shape, not a wait for something).
      await sleep(1_000);
      await Promise.all([
        ...Array.from({ length: CLIENTS }, (_, n) => client(n)),
        ...slow,
        sampler,
      ]);
      peakRss = Math.max(peakRss, statusMb(child.pid, "VmHWM"));

      // deno-lint-ignore no-console
      console.log(
        `load: ${counts.ok} answered in ${SECONDS} s (${
          Math.round(counts.ok / SECONDS)
        }/s), ${counts.refused} connections refused by the transport, ${lorisCut} slow-loris connections cut (longest ${
          Math.round(lorisLongestMs / 1000)
        } s), peak RSS ${
          Math.round(peakRss)
        } MiB (VmHWM), ${threads} threads at most`,
      );
      assertEquals(
        counts.wrong.slice(0, 5),
        [],
        `${counts.wrong.length} wrong`,
      );
      assert(counts.ok > CLIENTS * SECONDS / 10, `only ${counts.ok} answered`);
      assert(peakRss < RSS_LIMIT_MB, `peak RSS ${Math.round(peakRss)} MB`);
      // A byte a second never outlasts the 30 s headers timeout.
      if (SECONDS >= 40) {
        assert(lorisCut >= SLOW_LORIS, `${lorisCut} cut`);
        assert(
          lorisLongestMs >= 25_000 && lorisLongestMs < 40_000,
          `the longest slow-loris connection lived ${lorisLongestMs} ms`,
        );
      }
      // Nothing runs any more, and a fresh request is served at once.
      for (const fixture of fixtures) {
        await waitUntil(
          `${fixture.engine}'s sessions to end`,
          async () => await sessions(fixture, true) === 0,
          { intervalMs: 100 },
        );
        assertEquals(await sessions(fixture, true), 0, fixture.engine);
      }
      assert(
        bystander === null || bystander.answered() > 0,
        "the dbport beside it never had a PostgreSQL session",
      );
    } finally {
      child.kill("SIGTERM");
      await child.status;
      await stdout;
      await stderr;
      // Stopped: no session of dbport's is left on any server.
      for (const fixture of fixtures) {
        assertEquals(await sessions(fixture, false), 0, fixture.engine);
        await fixture[Symbol.asyncDispose]();
      }
      await Deno.remove(home, { recursive: true });
      await bystander?.[Symbol.asyncDispose]();
    }
  },
});

/**
 * A second `serve` in its own home, with a saved PostgreSQL connection under
 * dbport's own application_name, kept busy (a read that takes a while) until disposed.
 */
async function startBystander(): Promise<
  AsyncDisposable & { answered(): number }
> {
  const home = await Deno.makeTempDir({ prefix: "dbport-bystander-" });
  const saved = savedConnection(
    { engine: "postgres", url: POSTGRES_URL },
    "Bystander",
  );
  await saveConnections(inAppDir(home, CONNECTIONS_FILE), [saved]);
  await saveSettings(home, { requireAuth: false });
  const serve = await spawnServe(home);
  const stop = new AbortController();
  let answered = 0;
  const busy = (async () => {
    while (!stop.signal.aborted) {
      const body = modernRequest("tools/call", {
        name: "execute_query",
        arguments: {
          connection_id: saved.id,
          query:
            "with recursive c(x) as (select 1 union all select x + 1 from c where x < 200000) select count(*) as slept from c",
        },
      }, crypto.randomUUID());
      try {
        const response = await fetch(serve.url!, {
          method: "POST",
          headers: modernHeaders(body),
          body: JSON.stringify(body),
        });
        await response.text();
        if (response.ok) answered++;
      } catch {
        // The load's back-off after a refused request.
        await sleep(100);
      }
    }
  })();
  return {
    answered: () => answered,
    async [Symbol.asyncDispose]() {
      stop.abort();
      await busy;
      serve.child.kill("SIGTERM");
      await serve.readRest();
      await serve.child.status;
      await serve.child.stderr.cancel().catch(() => {});
      await Deno.remove(home, { recursive: true });
    },
  };
}
