// deno-lint-ignore-file no-console
/**
 * `deno task soak [--minutes N]` (issue 33): `main.ts serve` as its own
 * process, clients on PostgreSQL, MariaDB and SQLite for N minutes (default
 * 5) while faults are injected — a SQLite write lock held by another process
 * (python3), a heavy SQLite statement with a 1 s timeout, a PostgreSQL table
 * locked ACCESS EXCLUSIVE, PostgreSQL backends of the server's terminated, a
 * MariaDB session KILLed by an administrator, clients that disconnect
 * mid-request, a 500 MB value — and, half-way, ten concurrent `connections
 * add` and a console policy change. It reports the latency of the requests
 * aimed at no faulted resource (p50/p99), the server's event-loop delay,
 * its RSS (idle, peak, after the settle time) and every request that got no
 * answer. Like the bench, not part of CI; tests/load/soak_test.ts runs 60 s
 * of it in the suite. `--skip WORD` (repeatable) leaves out the faults whose
 * name or query holds WORD, to find which one costs what.
 *
 * @module
 */

import mysql from "mysql2/promise";
import postgres from "postgres";
import { inAppDir } from "../lib/app/paths.ts";
import { CONNECTIONS_FILE } from "../lib/base/identity.ts";
import { delayPercentile } from "../lib/server/loop_delay.ts";
import { saveSettings } from "../lib/serve.ts";
import { saveConnections } from "../lib/app/connections.ts";
import { sleep } from "../lib/base/sleep.ts";
import { savedConnection } from "../tests/_connections.ts";
import { type Fixture, openFixture, POSTGRES_URL } from "../tests/_db.ts";
import { spawnServe } from "../tests/_main.ts";
import { modernHeaders, modernRequest } from "../tests/_server.ts";
import { rssMiB } from "./proc.ts";
import {
  concurrentEdits,
  peakOf,
  python,
  readDelay,
  rssOf,
} from "./soak_parts.ts";

/** How a soak runs. */
export interface SoakOptions {
  seconds: number;
  /** How long RSS may take after the end to get back under 1.3x idle. */
  settleSeconds: number;
  /** Clients aimed at no faulted resource. */
  clients: number;
  /** Faults to leave out: any whose name or query holds one of these. */
  skip?: string[];
}

/** What a soak measured. */
export interface SoakReport {
  seconds: number;
  unaffected: {
    count: number;
    errors: string[];
    p50: number;
    p99: number;
    /** p99 per saved connection, to tell which one is slow. */
    p99By: Record<string, number>;
  };
  faulted: { count: number; errors: number };
  /** Requests that got no answer within their deadline (a failure). */
  lost: string[];
  /** Requests whose client went away on purpose. */
  disconnected: number;
  faults: Record<string, number>;
  loopDelay: { p50: number; p99: number; max: number };
  /** Peak is the kernel's VmHWM; settled is taken once under 1.3x idle. */
  rss: { idle: number; peak: number; settled: number; settleMs: number };
  /** Connections and policy the edits should have left, and what is missing. */
  edits: { expected: number; missing: string[] };
}

/** A request gets its answer within its own timeout and this much more. */
const ANSWER_GRACE_MS = 30_000;

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return 0;
  return sorted[
    Math.min(sorted.length - 1, Math.floor(p / 100 * sorted.length))
  ]!;
}

/** Run a soak against a fresh `serve`; the fixtures are dropped after. */
export async function runSoak(options: SoakOptions): Promise<SoakReport> {
  const run = crypto.randomUUID().slice(0, 8);
  const appName = (role: string) => `dbport-soak-${role}-${run}`;
  await using stack = new AsyncDisposableStack();
  const use = <T extends AsyncDisposable>(resource: T): T => {
    stack.defer(() =>
      Promise.resolve(resource[Symbol.asyncDispose]()).catch(
        (error: unknown) => console.error(`soak: cleanup: ${error}`),
      )
    );
    return resource;
  };
  const pg = use(await openFixture("postgres"));
  const my = use(await openFixture("mysql"));
  const myVictim = use(await openFixture("mysql"));
  const lite = use(await openFixture("sqlite"));
  const home = await Deno.makeTempDir({ prefix: "dbport-soak-" });
  stack.defer(() => Deno.remove(home, { recursive: true }));
  const faultFile = `${home}/fault.db`;
  await python(
    `import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); c.execute('create table t (id integer primary key, v text)'); c.commit()`,
    faultFile,
  );
  const pgUrl = (role: string) => {
    const url = new URL(pg.url);
    url.searchParams.set("application_name", appName(role));
    return url.toString();
  };
  const lockedTable = `${pg.schema}.soak_locked`;
  await pg.admin(`create table ${lockedTable} (id int)`);
  const silent = { safeMode: "silent" } as const;
  const conn = {
    pgOk: savedConnection(
      { engine: "postgres", url: pgUrl("ok") },
      "pg ok",
      silent,
    ),
    pgLock: savedConnection(
      { engine: "postgres", url: pgUrl("lock") },
      "pg lock",
      silent,
    ),
    pgVictim: savedConnection(
      { engine: "postgres", url: pgUrl("victim") },
      "pg victim",
      silent,
    ),
    myOk: savedConnection(my as Fixture, "my ok", silent),
    myVictim: savedConnection(myVictim as Fixture, "my victim", silent),
    liteOk: savedConnection(lite as Fixture, "lite ok", silent),
    liteFault: savedConnection(
      { engine: "sqlite", url: faultFile },
      "lite fault",
      {
        ...silent,
        externalAccess: "readWrite",
      },
    ),
    policy: savedConnection(
      { engine: "sqlite", url: `${home}/policy.db` },
      "policy target",
    ),
  };
  await saveConnections(inAppDir(home, CONNECTIONS_FILE), Object.values(conn));
  await saveSettings(home, { requireAuth: false });
  const delayFile = `${home}/loop-delay.json`;
  const serve = await spawnServe(home, {
    env: { DBPORT_LOOP_DELAY_FILE: delayFile },
  });
  // Its stderr is kept: a server that dies mid-soak says why.
  let serverErr = "";
  const errDone = (async () => {
    for await (
      const chunk of serve.child.stderr.pipeThrough(new TextDecoderStream())
    ) serverErr = (serverErr + chunk).slice(-4_000);
  })();
  let exited: Deno.CommandStatus | null = null;
  serve.child.status.then((status) => exited = status);
  stack.defer(async () => {
    if (exited === null) serve.child.kill("SIGTERM");
    await serve.readRest();
    await serve.child.status;
    await errDone;
  });
  const url = serve.url!;
  const pid = serve.child.pid;

  const pgAdmin = postgres(POSTGRES_URL, { max: 2, onnotice: () => {} });
  stack.defer(() => pgAdmin.end().catch(() => {}));
  // The fixture's own session sits in the victim's database too: spared.
  const [fixtureSession] = await myVictim.admin(
    "select connection_id() as id",
  ) as { id: number }[];

  const unaffected: number[] = [];
  const byTarget: Record<string, number[]> = {};
  const unaffectedErrors: string[] = [];
  const faulted = { count: 0, errors: 0 };
  const lost: string[] = [];
  const faults: Record<string, number> = {};
  let disconnected = 0;
  const pending = new Set<Promise<unknown>>();

  /** One tools/call; its answer time, or null when it got none in time. */
  const call = async (
    connectionId: string,
    query: string,
    timeoutSeconds: number,
    leaveAfterMs?: number,
  ): Promise<{ ms: number; error: string | null } | null> => {
    const body = modernRequest("tools/call", {
      name: "execute_query",
      arguments: {
        connection_id: connectionId,
        query,
        timeout_seconds: timeoutSeconds,
      },
    }, crypto.randomUUID());
    const abort = new AbortController();
    const deadline = timeoutSeconds * 1000 + ANSWER_GRACE_MS;
    const timer = setTimeout(
      () => abort.abort(),
      leaveAfterMs ?? deadline,
    );
    const started = performance.now();
    try {
      const response = await fetch(url, {
        method: "POST",
        headers: modernHeaders(body),
        body: JSON.stringify(body),
        signal: abort.signal,
      });
      const text = await response.text();
      const ms = performance.now() - started;
      let error: string | null = null;
      try {
        const answer = JSON.parse(text);
        if (answer.error !== undefined || answer.result?.isError === true) {
          error = text.slice(0, 200);
        }
      } catch {
        error = `${response.status} ${text.slice(0, 200)}`;
      }
      return { ms, error };
    } catch (error) {
      if (leaveAfterMs !== undefined && abort.signal.aborted) {
        disconnected++;
        return { ms: 0, error: "left" };
      }
      if (abort.signal.aborted) {
        lost.push(`${query.slice(0, 60)} (no answer in ${deadline} ms)`);
        return null;
      }
      lost.push(`${query.slice(0, 60)}: ${String(error).slice(0, 120)}`);
      return null;
    } finally {
      clearTimeout(timer);
    }
  };
  const track = <T>(promise: Promise<T>): Promise<T> => {
    pending.add(promise);
    promise.finally(() => pending.delete(promise));
    return promise;
  };

  // Warm every pool, then the idle figures.
  for (const c of Object.values(conn)) {
    if (c !== conn.policy) await call(c.id, "select 1 as one", 10);
  }
  await sleep(2_000);
  const idleRss = rssMiB(pid);
  const delayBefore = await readDelay(delayFile);
  let peakRss = idleRss;
  const until = Date.now() + options.seconds * 1000;
  const running = () => Date.now() < until;
  const sampler = (async () => {
    while (running()) {
      peakRss = Math.max(peakRss, rssOf(pid));
      await sleep(100);
    }
  })();

  const UNAFFECTED: [string, string][] = [
    [conn.pgOk.id, "select 1 as one"],
    [conn.pgOk.id, "select g, md5(g::text) from generate_series(1, 200) g"],
    [conn.myOk.id, "select 1 as one"],
    [conn.myOk.id, "select seq, md5(seq) from seq_1_to_200"],
    [conn.liteOk.id, "select * from authors"],
  ];
  const client = async (n: number) => {
    for (let i = n; running(); i++) {
      const [id, query] = UNAFFECTED[i % UNAFFECTED.length]!;
      const answer = await track(call(id, query, 30));
      if (answer === null) continue;
      if (answer.error === null) {
        unaffected.push(answer.ms);
        (byTarget[id] ??= []).push(answer.ms);
      } else unaffectedErrors.push(answer.error);
      await sleep(20);
    }
  };
  /** A fault left out by `--skip` (a word of its name or query). */
  const skipped = (what: string) =>
    (options.skip ?? []).some((word) => what.includes(word));
  const faultedLoop = async (
    id: string,
    query: string,
    timeout: number,
    leaveAfterMs?: number,
  ) => {
    if (skipped(query)) return;
    while (running()) {
      const answer = await track(call(id, query, timeout, leaveAfterMs));
      if (answer !== null && answer.error !== "left") {
        faulted.count++;
        if (answer.error !== null) faulted.errors++;
      }
      await sleep(50);
    }
  };
  const every = async (
    name: string,
    periodMs: number,
    offsetMs: number,
    fault: () => Promise<unknown>,
  ) => {
    if (skipped(name)) return;
    await sleep(offsetMs);
    while (running()) {
      const started = Date.now();
      try {
        await fault();
        faults[name] = (faults[name] ?? 0) + 1;
      } catch (error) {
        console.error(`soak: fault ${name} failed: ${error}`);
      }
      await sleep(Math.max(0, periodMs - (Date.now() - started)));
    }
  };

  let editsDone: Promise<string[]> = Promise.resolve([]);
  const edits = (async () => {
    await sleep(options.seconds * 500);
    editsDone = concurrentEdits(home, conn.policy.id, run);
    await editsDone;
  })();

  await Promise.all([
    sampler,
    edits,
    ...Array.from({ length: options.clients }, (_, n) => client(n)),
    faultedLoop(conn.liteFault.id, "insert into t (v) values ('soak')", 5),
    faultedLoop(
      conn.liteFault.id,
      "with recursive x(n) as (select 1 union all select n + 1 from x where n < 100000000) select count(*) from x",
      1,
    ),
    faultedLoop(conn.pgLock.id, `select count(*) from ${lockedTable}`, 3),
    faultedLoop(conn.pgVictim.id, "select pg_sleep(1) as slept", 10),
    faultedLoop(conn.myVictim.id, "select sleep(1) as slept", 10),
    faultedLoop(conn.pgVictim.id, "select pg_sleep(2) as slept", 10, 150),
    faultedLoop(conn.myVictim.id, "select sleep(2) as slept", 10, 150),
    every("sqlite write lock held 4 s by python3", 10_000, 0, () =>
      python(
        "import sqlite3,sys,time; c=sqlite3.connect(sys.argv[1], isolation_level=None); c.execute('BEGIN IMMEDIATE'); time.sleep(4); c.execute('ROLLBACK')",
        faultFile,
      )),
    every(
      "postgres table locked ACCESS EXCLUSIVE 4 s",
      10_000,
      1_000,
      () =>
        pgAdmin.begin(async (tx) => {
          await tx.unsafe(`lock table ${lockedTable} in access exclusive mode`);
          await sleep(4_000);
        }),
    ),
    every("postgres backend terminated", 10_000, 3_000, () =>
      pgAdmin.unsafe(
        `select pg_terminate_backend(pid) from pg_stat_activity where application_name = '${
          appName("victim")
        }'`,
      )),
    every("mariadb session KILLed", 10_000, 5_000, async () => {
      // An administrator's session of its own each time.
      const myAdmin = await mysql.createConnection({ uri: my.url });
      try {
        const [rows] = await myAdmin.query(
          `select id from information_schema.processlist where db = ? and id <> connection_id() and id <> ?`,
          [myVictim.schema, fixtureSession!.id],
        );
        for (const row of rows as { id: number }[]) {
          await myAdmin.query(`KILL ${Number(row.id)}`).catch(() => {});
        }
      } finally {
        await myAdmin.end().catch(() => {});
      }
    }),
    every(
      "500 MB value requested (SQLite randomblob)",
      60_000,
      20_000,
      async () => {
        const answer = await track(
          call(conn.liteFault.id, "select randomblob(500000000) as huge", 5),
        );
        if (answer !== null) faulted.count++;
      },
    ),
  ]);
  // Every request still out gets its answer (or is counted lost).
  await Promise.all([...pending]);
  const delayAfter = await readDelay(delayFile);
  const missing = await editsDone;
  peakRss = Math.max(peakRss, peakOf(pid));
  const settleStarted = Date.now();
  let settled = rssOf(pid);
  while (
    settled >= 1.3 * idleRss &&
    Date.now() < settleStarted + options.settleSeconds * 1000
  ) {
    await sleep(1_000);
    settled = rssOf(pid);
  }
  const settleMs = Date.now() - settleStarted;
  unaffected.sort((a, b) => a - b);
  if (exited !== null) {
    lost.push(
      `the server exited (code ${(exited as Deno.CommandStatus).code}): ${
        serverErr.slice(-1_500)
      }`,
    );
  }
  return {
    seconds: options.seconds,
    unaffected: {
      count: unaffected.length,
      errors: unaffectedErrors,
      p50: percentile(unaffected, 50),
      p99: percentile(unaffected, 99),
      p99By: Object.fromEntries(
        Object.values(conn).flatMap((c) => {
          const times = byTarget[c.id]?.sort((a, b) => a - b);
          return times === undefined ? [] : [[c.name, percentile(times, 99)]];
        }),
      ),
    },
    faulted,
    lost,
    disconnected,
    faults,
    loopDelay: delayBefore === null || delayAfter === null
      ? { p50: NaN, p99: NaN, max: NaN }
      : {
        p50: delayPercentile(delayBefore, delayAfter, 50),
        p99: delayPercentile(delayBefore, delayAfter, 99),
        max: delayAfter.max,
      },
    rss: { idle: idleRss, peak: peakRss, settled, settleMs },
    edits: { expected: 11, missing },
  };
}

/** The report as lines for a person. */
export function describeSoak(report: SoakReport): string[] {
  const ms = (n: number) => `${Math.round(n)} ms`;
  return [
    `soak: ${report.seconds} s; unaffected requests ${report.unaffected.count}: p50 ${
      ms(report.unaffected.p50)
    }, p99 ${
      ms(report.unaffected.p99)
    }, errors ${report.unaffected.errors.length}`,
    `soak: unaffected p99 by connection: ${
      Object.entries(report.unaffected.p99By).map(([name, p99]) =>
        `${name} ${ms(p99)}`
      ).join(", ")
    }`,
    `soak: faulted requests ${report.faulted.count} (${report.faulted.errors} errors, as expected of faults), ${report.disconnected} clients left mid-request`,
    `soak: requests without an answer: ${report.lost.length}${
      report.lost.length ? ` (${report.lost.slice(0, 3).join("; ")})` : ""
    }`,
    `soak: event-loop delay p50 ${report.loopDelay.p50.toFixed(1)} ms, p99 ${
      report.loopDelay.p99.toFixed(1)
    } ms, max ${report.loopDelay.max.toFixed(0)} ms`,
    `soak: RSS idle ${Math.round(report.rss.idle)} MiB, peak ${
      Math.round(report.rss.peak)
    } MiB (VmHWM), ${Math.round(report.rss.settled)} MiB (${
      (report.rss.settled / report.rss.idle).toFixed(2)
    }x idle) ${Math.round(report.rss.settleMs / 1000)} s after the end`,
    `soak: faults injected: ${
      Object.entries(report.faults).map(([k, v]) => `${k} x${v}`).join(", ")
    }`,
    `soak: ten concurrent connections add + a console policy change: ${
      report.edits.missing.length === 0
        ? "all 11 kept"
        : `LOST ${report.edits.missing.join("; ")}`
    }`,
    ...report.unaffected.errors.slice(0, 3).map((e) =>
      `soak: unaffected error: ${e}`
    ),
  ];
}

if (import.meta.main) {
  const at = Deno.args.indexOf("--minutes");
  const minutes = at === -1 ? 5 : Number(Deno.args[at + 1]);
  if (!(minutes > 0)) {
    console.error("Usage: deno task soak [--minutes N]");
    Deno.exit(2);
  }
  const skip = Deno.args.flatMap((arg, i) =>
    Deno.args[i - 1] === "--skip" ? [arg] : []
  );
  const report = await runSoak({
    seconds: Math.round(minutes * 60),
    settleSeconds: 60,
    clients: 6,
    skip,
  });
  for (const line of describeSoak(report)) console.log(line);
  const targets = [
    report.unaffected.p99 < 250,
    report.loopDelay.p99 < 50,
    report.lost.length === 0,
    report.rss.peak < 500,
    report.rss.settled < 1.3 * report.rss.idle,
    report.edits.missing.length === 0,
  ];
  console.log(
    `soak: targets (p99 < 250 ms, loop p99 < 50 ms, no lost request, peak RSS < 500 MiB, settled < 1.3x idle, no lost edit): ${
      targets.map((ok) => ok ? "met" : "MISSED").join(", ")
    }`,
  );
}
