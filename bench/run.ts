// deno-lint-ignore-file no-console
/**
 * `deno task bench`: dbport side by side with the raw drivers, MCP Toolbox
 * for Databases, a minimal SDK v2 server and a bare Hono app, in one run on
 * loopback, reported as ratios (absolute numbers do not travel between
 * machines). `--quick` shortens every phase for a smoke run.
 *
 * @module
 */

import mysql from "mysql2/promise";
import postgres from "postgres";
import { MYSQL_URL, POSTGRES_URL } from "../tests/_db.ts";
import { measureBridge } from "./bridge.ts";
import {
  createWideSchema,
  measureDiscovery,
  WIDE_TABLES,
} from "./discovery.ts";
import type { LoadResult } from "./load.ts";
import { measurePreviews } from "./preview.ts";
import { measureToolsList } from "./tools_list.ts";
import { measureTunnel } from "./tunnel.ts";
import { callOnce, closeConnections, mcpRequest } from "./mcp_request.ts";
import { peakRssMiB, rssMiB } from "./proc.ts";
import { type Contender, createRunner } from "./compare.ts";
import { measureRoundTrips } from "./round_trips.ts";
import {
  delayPercentile,
  type LoopDelaySnapshot,
} from "../lib/server/loop_delay.ts";
import {
  type BenchHome,
  benchHome,
  loopDelayFile,
  startBareDenoServe,
  startBareHono,
  startDbport,
  startSdkV2Peer,
  startToolbox,
  type Target,
} from "./targets.ts";

const quick = Deno.args.includes("--quick");
/**
 * `--only=w1,w2,…`: run only these sections (w1 w2 w4 bridge w3 w5 d1 p1 t1
 * c1 rt); `--w1c=8`: W1 at these concurrencies only (default 1,8,64).
 */
const only = Deno.args.find((a) => a.startsWith("--only="))?.slice(7)
  .split(",");
const runs = (section: string) => only === undefined || only.includes(section);
/**
 * `DBPORT_BENCH_BEFORE=<tree>`: W1, W2 and W4 also measure that checkout's
 * `serve` as "dbport (before)", interleaved with this one in the same run
 * (a before → after that a noisy machine cannot skew by running later).
 */
const BEFORE_ROOT = Deno.env.get("DBPORT_BENCH_BEFORE");
const W1_LEVELS = Deno.args.find((a) => a.startsWith("--w1c="))?.slice(6)
  .split(",").map(Number) ?? [1, 8, 64];
/** Measured seconds per contender and point, split over ROUNDS rounds. */
const SECONDS = quick ? 2 : 9;
const ROUNDS = quick ? 1 : 3;
const WARMUP = quick ? 0.5 : 1;
const ROWS_QUERY =
  "select g as id, 'name ' || g as name, g * 2.5 as price, (g % 2 = 0) as flag, 'x' || md5(g::text) as note from generate_series(1, 10000) g";

const BENCH_USER = { user: "dbport_bench", password: "bench" };

/**
 * W3's answer budget: the peers (and the driver baseline) return all 10,000
 * rows (≈ 1.5 MB of JSON), so dbport gets a budget they fit in, not the
 * default 40,000 characters (issue 36) that would cut them.
 */
const W3_BUDGET = { maxResultBytes: 4_000_000, maxAnswerChars: 4_000_000 };
/**
 * W5's answer budget: five cells cut at the cell cap (20,000 characters
 * each) are ≈ 100,000 characters, past the default 40,000; W5 measures the
 * cell cap while reading, not the answer budget.
 */
const W5_BUDGET = { maxAnswerChars: 200_000 };

const lines: string[] = [];
const checks: { what: string; ok: boolean; detail: string }[] = [];

function out(line = "") {
  console.log(line);
  lines.push(line);
}

/** One table row; `extra` fills the column {@linkcode header} named, if any. */
function row(name: string, r: LoadResult, extra?: string): string {
  const cpu = r.cpuPerRequest === null ? "–" : `${r.cpuPerRequest.toFixed(0)}`;
  return `| ${name} | ${r.rps.toFixed(0)} | ${r.p50.toFixed(2)} | ${
    r.p99.toFixed(2)
  } | ${cpu} | ${r.errors} |${extra === undefined ? "" : ` ${extra} |`}`;
}

/** A table's title and head, with one more column when `extra` names it. */
function header(title: string, extra?: string) {
  out();
  out(`### ${title}`);
  out();
  out(
    `| target | req/s | p50 ms | p99 ms | server CPU µs/req | errors |${
      extra === undefined ? "" : ` ${extra} |`
    }`,
  );
  out(
    `|---|---:|---:|---:|---:|---:|${
      extra === undefined ? "" : "---:|".repeat(extra.split(" | ").length)
    }`,
  );
}

function check(what: string, ok: boolean, detail: string) {
  checks.push({ what, ok, detail });
}

/** The MariaDB user Toolbox connects as (it refuses an empty password). */
async function ensureBenchUser() {
  const conn = await mysql.createConnection(MYSQL_URL);
  try {
    await conn.query(
      `CREATE USER IF NOT EXISTS '${BENCH_USER.user}'@'%' IDENTIFIED BY '${BENCH_USER.password}'`,
    );
    await conn.query(`GRANT SELECT ON *.* TO '${BENCH_USER.user}'@'%'`);
  } finally {
    await conn.end();
  }
}

const dir = await Deno.makeTempDir({ prefix: "dbport-bench-" });
const sql = postgres(POSTGRES_URL, { onnotice: () => {} });
const maria = await mysql.createConnection(MYSQL_URL);
const { load, compare } = createRunner({
  seconds: SECONDS,
  rounds: ROUNDS,
  warmup: WARMUP,
  sql,
  maria,
});
try {
  await ensureBenchUser();
  const home = await benchHome(dir, MYSQL_URL);
  await Deno.writeFile(home.sqlitePath, new Uint8Array());

  out(
    `# dbport benchmark (${new Date().toISOString()}${quick ? ", quick" : ""})`,
  );
  out();
  out(
    `Deno ${Deno.version.deno}; ${navigator.hardwareConcurrency} cores; per point ${SECONDS} s of closed-loop load from the harness process after ${WARMUP} s of warm-up, in ${ROUNDS} interleaved round(s); each figure is the median round.`,
  );

  await using dbport = await startDbport(home);
  // Idle: started, settled, nothing asked yet (no driver loaded).
  await new Promise((resolve) => setTimeout(resolve, 1_500));
  const idleRss = rssMiB(dbport.pid);
  await using toolbox = await startToolbox(dir, home.sqlitePath, BENCH_USER);
  await using sdk = await startSdkV2Peer();
  const beforeHome = BEFORE_ROOT === undefined
    ? null
    : await benchHome(await Deno.makeTempDir({ dir }), MYSQL_URL);
  if (beforeHome !== null) {
    await Deno.writeFile(beforeHome.sqlitePath, new Uint8Array());
  }
  await using before = beforeHome === null
    ? null
    : await startDbport(beforeHome, [], {}, BEFORE_ROOT);
  /** The same request to the before tree's server, when there is one. */
  const alsoBefore = (
    request: (target: Target, ids: BenchHome["ids"]) => () => Promise<boolean>,
  ): Contender[] =>
    before === null || beforeHome === null
      ? []
      : [["dbport (before)", request(before, beforeHome.ids), before.pid]];
  out();
  out(`Idle \`serve\` resident memory after start: ${idleRss.toFixed(1)} MiB.`);
  check("idle serve RSS ≤ 70 MiB", idleRss <= 70, `${idleRss.toFixed(1)} MiB`);

  const queryOn = (target: Target, id: string, query: string, extra = {}) =>
    mcpRequest(target, "tools/call", {
      name: "execute_query",
      arguments: { connection_id: id, query, ...extra },
    });
  const dbportQuery = (id: string, query: string, extra = {}) =>
    queryOn(dbport, id, query, extra);
  const toolboxQuery = (tool: string, query: string) =>
    mcpRequest(toolbox, "tools/call", {
      name: tool,
      arguments: { sql: query },
    });
  const sdkQuery = (query: string) =>
    mcpRequest(sdk, "tools/call", {
      name: "execute_query",
      arguments: { query },
    });
  // Sanity: each target answers right before anything is timed.
  for (
    const [name, request] of [
      ["dbport", dbportQuery(home.ids.postgres, "select 1")],
      ["Toolbox", toolboxQuery("pg_execute_sql", "select 1")],
      ["SDK v2", sdkQuery("select 1")],
    ] as const
  ) {
    if (!await request()) throw new Error(`${name} did not answer SELECT 1`);
  }

  // W1: SELECT 1 on PostgreSQL.
  const w1: Record<number, Record<string, LoadResult>> = {};
  for (const c of runs("w1") ? W1_LEVELS : []) {
    header(
      `W1 execute_query SELECT 1 on PostgreSQL, concurrency ${c}`,
      "vs raw | database CPU µs/req",
    );
    const results = await compare(
      [
        ["postgres.js (raw)", async () => {
          await sql`select 1`;
          return true;
        }, null],
        ["dbport", dbportQuery(home.ids.postgres, "select 1"), dbport.pid],
        ...alsoBefore((t, ids) => queryOn(t, ids.postgres, "select 1")),
        ["Toolbox", toolboxQuery("pg_execute_sql", "select 1"), toolbox.pid],
        ["SDK v2 server", sdkQuery("select 1"), sdk.pid],
      ],
      c,
      "postgres",
    );
    const raw = results["postgres.js (raw)"]!;
    for (const [name, r] of Object.entries(results)) {
      out(
        row(
          name,
          r,
          `${(r.rps / raw.rps).toFixed(2)}× | ${
            r.dbCpuPerRequest?.toFixed(0) ?? "–"
          }`,
        ),
      );
    }
    w1[c] = results;
  }
  if (w1[1] !== undefined && w1[8] !== undefined && w1[64] !== undefined) {
    const w1c8 = w1[8]!;
    const d8 = w1c8["dbport"]!;
    const t8 = w1c8["Toolbox"]!;
    const r8 = w1c8["postgres.js (raw)"]!;
    check(
      "W1 C=8 throughput ≥ 1.1× Toolbox",
      d8.rps >= 1.1 * t8.rps,
      `${(d8.rps / t8.rps).toFixed(2)}×`,
    );
    check(
      "W1 C=8 throughput ≥ 0.30× raw driver",
      d8.rps >= 0.3 * r8.rps,
      `${(d8.rps / r8.rps).toFixed(2)}×`,
    );
    check(
      "W1 C=8 server CPU per call ≤ Toolbox's",
      (d8.cpuPerRequest ?? Infinity) <= (t8.cpuPerRequest ?? 0),
      `${d8.cpuPerRequest?.toFixed(0)} µs vs ${
        t8.cpuPerRequest?.toFixed(0)
      } µs`,
    );
    check(
      "W1 C=8 p99 ≤ 5× the driver's p99",
      d8.p99 <= 5 * r8.p99,
      `${(d8.p99 / r8.p99).toFixed(2)}×`,
    );

    const w1c1 = w1[1]!;
    const w1c64 = w1[64]!;
    check(
      "W1 C=8 server CPU per call ≤ 2× Toolbox's",
      (d8.cpuPerRequest ?? Infinity) <= 2 * (t8.cpuPerRequest ?? 0),
      `${((d8.cpuPerRequest ?? 0) / (t8.cpuPerRequest ?? 1)).toFixed(2)}×`,
    );
    for (const [c, results] of [[8, w1c8], [64, w1c64]] as const) {
      const sdk = results["SDK v2 server"]!;
      check(
        `W1 C=${c} throughput ≥ 1.3× the SDK v2 server`,
        results.dbport!.rps >= 1.3 * sdk.rps,
        `${(results.dbport!.rps / sdk.rps).toFixed(2)}×`,
      );
    }
    check(
      "W1 C=8 database CPU per call ≤ 1.5× Toolbox's",
      (d8.dbCpuPerRequest ?? Infinity) <= 1.5 * (t8.dbCpuPerRequest ?? 0),
      `${d8.dbCpuPerRequest?.toFixed(0)} µs vs ${
        t8.dbCpuPerRequest?.toFixed(0)
      } µs`,
    );
    check(
      "W1 C=8 server CPU per call ≤ 1.5× Toolbox's",
      (d8.cpuPerRequest ?? Infinity) <= 1.5 * (t8.cpuPerRequest ?? 0),
      `${((d8.cpuPerRequest ?? 0) / (t8.cpuPerRequest ?? 1)).toFixed(2)}×`,
    );
    check(
      "W1 C=8 throughput ≥ 1.5× the SDK v2 server",
      d8.rps >= 1.5 * w1c8["SDK v2 server"]!.rps,
      `${(d8.rps / w1c8["SDK v2 server"]!.rps).toFixed(2)}×`,
    );
    check(
      "W1 C=1 p50 ≤ 1.5× Toolbox's",
      w1c1.dbport!.p50 <= 1.5 * w1c1.Toolbox!.p50,
      `${(w1c1.dbport!.p50 / w1c1.Toolbox!.p50).toFixed(2)}×`,
    );
    check(
      "W1 C=8 p99 ≤ 2× Toolbox's",
      d8.p99 <= 2 * t8.p99,
      `${(d8.p99 / t8.p99).toFixed(2)}×`,
    );
  }

  // Event-loop delay inside dbport under W1 C=8, from its own probe: two
  // snapshots around a dbport-only run.
  if (runs("w1")) {
    const delays = async (): Promise<LoopDelaySnapshot> =>
      JSON.parse(await Deno.readTextFile(loopDelayFile(home)));
    await new Promise((resolve) => setTimeout(resolve, 1_100));
    const before = await delays();
    await load(
      dbportQuery(home.ids.postgres, "select 1"),
      8,
      dbport.pid,
      SECONDS / ROUNDS,
      0,
    );
    await new Promise((resolve) => setTimeout(resolve, 1_100));
    const after = await delays();
    out();
    out(
      `Event-loop delay in dbport under W1 C=8: p50 ${
        delayPercentile(before, after, 50).toFixed(1)
      } ms, p99 ${delayPercentile(before, after, 99).toFixed(1)} ms, max ${
        after.max.toFixed(1)
      } ms since start (a 5 ms timer's lateness).`,
    );
  }

  // W2: tools/list at concurrency 64, against a bare Hono app of the same body size.
  if (runs("w2")) {
    const listBytes =
      new TextEncoder().encode(await callOnce(dbport, "tools/list")).length;
    await using hono = await startBareHono(listBytes);
    await using denoServe = await startBareDenoServe(listBytes);
    header(
      `W2 tools/list, concurrency 64 (dbport's answer: ${listBytes} bytes)`,
      "vs bare Hono",
    );
    const w2 = await compare([
      ["bare Hono (fixed body)", mcpRequest(hono, "tools/list"), hono.pid],
      ["dbport", mcpRequest(dbport, "tools/list"), dbport.pid],
      ...alsoBefore((t) => mcpRequest(t, "tools/list")),
      ["Toolbox", mcpRequest(toolbox, "tools/list"), toolbox.pid],
      ["SDK v2 server", mcpRequest(sdk, "tools/list"), sdk.pid],
      [
        "bare Deno.serve (fixed body, not node:http)",
        mcpRequest(denoServe, "tools/list"),
        denoServe.pid,
      ],
    ], 64);
    const floor = w2["bare Hono (fixed body)"]!;
    for (const [name, r] of Object.entries(w2)) {
      out(row(name, r, `${(r.rps / floor.rps).toFixed(2)}×`));
    }
    check(
      "W2 ≥ 1.1× Toolbox",
      w2.dbport!.rps >= 1.1 * w2.Toolbox!.rps,
      `${(w2.dbport!.rps / w2.Toolbox!.rps).toFixed(2)}×`,
    );
    check(
      "W2 ≥ 0.3× bare Hono",
      w2.dbport!.rps >= 0.3 * floor.rps,
      `${(w2.dbport!.rps / floor.rps).toFixed(2)}×`,
    );
  }

  // W4: SELECT 1 on MariaDB and SQLite, concurrency 8.
  // SQLite runs inside each server's process: its CPU is in the server's.
  for (
    const [engine, key, tool, db] of [
      ["MariaDB", "mysql", "mysql_execute_sql", "mysql"],
      ["SQLite", "sqlite", "sqlite_execute_sql", false],
    ] as const
  ) {
    if (!runs("w4")) break;
    header(
      `W4 execute_query SELECT 1 on ${engine}, concurrency 8`,
      "database CPU µs/req",
    );
    const both = await compare(
      [
        ["dbport", dbportQuery(home.ids[key], "select 1"), dbport.pid],
        ...alsoBefore((t, ids) => queryOn(t, ids[key], "select 1")),
        ["Toolbox", toolboxQuery(tool, "select 1"), toolbox.pid],
      ],
      8,
      db,
    );
    const d = both.dbport!;
    const t = both.Toolbox!;
    const dbCpu = (r: LoadResult) =>
      db === false ? "in server CPU" : r.dbCpuPerRequest?.toFixed(0) ?? "–";
    for (const [name, r] of Object.entries(both)) out(row(name, r, dbCpu(r)));
    check(
      `W4 ${engine} ≥ 1.1× Toolbox`,
      d.rps >= 1.1 * t.rps,
      `${(d.rps / t.rps).toFixed(2)}×`,
    );
    check(
      `W4 ${engine} server CPU per call ≤ 2× Toolbox's`,
      (d.cpuPerRequest ?? Infinity) <= 2 * (t.cpuPerRequest ?? 0),
      `${((d.cpuPerRequest ?? 0) / (t.cpuPerRequest ?? 1)).toFixed(2)}×`,
    );
  }

  // Bridge: cold start to first answer, and the cost per request.
  if (runs("bridge")) {
    const bridge = await measureBridge(
      home.home,
      mcpRequest(dbport, "tools/list"),
      quick ? 3 : 10,
      quick ? 100 : 400,
    );
    out();
    out("### Bridge (stdio → HTTP)");
    out();
    out(
      `| spawn → first tools/list answer (median) | via bridge p50 | direct HTTP p50 | overhead p50 |`,
    );
    out("|---:|---:|---:|---:|");
    out(
      `| ${bridge.startMs.toFixed(0)} ms | ${
        bridge.viaBridgeP50.toFixed(3)
      } ms | ${bridge.directP50.toFixed(3)} ms | ${
        bridge.overheadP50.toFixed(3)
      } ms |`,
    );
    check(
      "bridge start to first answer ≤ 250 ms",
      bridge.startMs <= 250,
      `${bridge.startMs.toFixed(0)} ms`,
    );
    check(
      "bridge per-request overhead ≤ 1 ms p50",
      bridge.overheadP50 <= 1,
      `${bridge.overheadP50.toFixed(3)} ms`,
    );
  }
} finally {
  await maria.end();
  await sql.end();
  closeConnections();
}

// W3 last, on a fresh server, so its peak RSS is the 10k-row results' own.
if (runs("w3")) {
  await Deno.mkdir(`${dir}/w3`);
  const home = await benchHome(`${dir}/w3`, MYSQL_URL);
  await Deno.writeFile(home.sqlitePath, new Uint8Array());
  await using dbport = await startDbport(home, [], W3_BUDGET);
  const sql = postgres(POSTGRES_URL, { onnotice: () => {} });
  try {
    const request = mcpRequest(dbport, "tools/call", {
      name: "execute_query",
      arguments: {
        connection_id: home.ids.postgres,
        query: ROWS_QUERY,
        max_rows: 10000,
      },
    });
    const first = await callOnce(dbport, "tools/call", {
      name: "execute_query",
      arguments: {
        connection_id: home.ids.postgres,
        query: ROWS_QUERY,
        max_rows: 10000,
      },
    });
    if (!first.includes('"is_truncated":false')) {
      throw new Error(
        `W3: dbport did not return all 10,000 rows: ${first.slice(0, 300)}`,
      );
    }
    header(
      "W3 execute_query of 10,000 rows × 5 columns, concurrency 8",
      "peak RSS",
    );
    const both = await compare([
      ["driver", async () => {
        const rows = await sql.unsafe(ROWS_QUERY);
        return JSON.stringify(rows).length > 0;
      }, null],
      ["dbport", request, dbport.pid],
    ], 8);
    const driver = both.driver!;
    const d = both.dbport!;
    const rss = peakRssMiB(dbport.pid);
    out(row("postgres.js fetch + JSON.stringify", driver, "–"));
    out(row("dbport", d, `${rss.toFixed(0)} MiB`));
    check(
      "W3 p50 ≤ 1.3× driver fetch-and-encode",
      d.p50 <= 1.3 * driver.p50,
      `${(d.p50 / driver.p50).toFixed(2)}×`,
    );
    check("W3 peak RSS ≤ 150 MiB", rss <= 150, `${rss.toFixed(0)} MiB`);
  } finally {
    await sql.end();
    closeConnections();
  }
}

// W5 on a fresh server too: five 3 MB cells, cut at the cell cap while read.
if (runs("w5")) {
  await Deno.mkdir(`${dir}/w5`);
  const home = await benchHome(`${dir}/w5`, MYSQL_URL);
  await Deno.writeFile(home.sqlitePath, new Uint8Array());
  await using dbport = await startDbport(home, [], W5_BUDGET);
  try {
    const params = {
      name: "execute_query",
      arguments: {
        connection_id: home.ids.postgres,
        query:
          "SELECT repeat('x', 3000000) AS big, g FROM generate_series(1, 5) g",
      },
    };
    const fresh = rssMiB(dbport.pid);
    const first = await callOnce(dbport, "tools/call", params);
    if (!first.includes("…[cut: 2,980,000 more characters]")) {
      throw new Error(`W5: cells were not cut: ${first.slice(0, 300)}`);
    }
    // The server as one call of the same shape left it: the first
    // PostgreSQL call loads the parser (about 35 MiB) and opens the pool,
    // whatever its values; the issue's growth is what the values add.
    await callOnce(dbport, "tools/call", params);
    await new Promise((resolve) => setTimeout(resolve, 500));
    const warm = rssMiB(dbport.pid);
    header("W5 execute_query of five 3 MB cells, concurrency 8", "peak RSS");
    const both = await compare([
      ["dbport", mcpRequest(dbport, "tools/call", params), dbport.pid],
    ], 8);
    const rss = peakRssMiB(dbport.pid);
    out(row("dbport", both.dbport!, `${rss.toFixed(0)} MiB`));
    out();
    out(
      `Answer: ${
        new TextEncoder().encode(first).length.toLocaleString("en-US")
      } bytes (15 MB of cells without the cap).`,
    );
    out(
      `RSS: ${fresh.toFixed(0)} MiB at start, ${
        warm.toFixed(0)
      } MiB after two calls of this shape, peak ${rss.toFixed(0)} MiB.`,
    );
    check("W5 peak RSS ≤ 150 MiB", rss <= 150, `${rss.toFixed(0)} MiB`);
    check(
      "W5 peak RSS growth over the warmed server < 64 MiB (issue 38)",
      rss - warm < 64,
      `${(rss - warm).toFixed(0)} MiB (${
        (rss - fresh).toFixed(0)
      } MiB over the fresh server)`,
    );
  } finally {
    closeConnections();
  }
}

// D1: discovery answer sizes on 3,000 tables, beside Toolbox's list_tables.
if (runs("d1")) {
  await Deno.mkdir(`${dir}/d1`);
  const home = await benchHome(`${dir}/d1`, MYSQL_URL);
  await Deno.writeFile(home.sqlitePath, new Uint8Array());
  const dropWide = await createWideSchema();
  try {
    await using dbport = await startDbport(home);
    await using toolbox = await startToolbox(
      `${dir}/d1`,
      home.sqlitePath,
      BENCH_USER,
    );
    out();
    out(`### D1 discovery answers on a schema of ${WIDE_TABLES} tables`);
    out();
    const sizes = await measureDiscovery(dbport, toolbox, home.ids.postgres);
    for (const line of sizes.lines) lines.push(line);
    check(
      "D1 every dbport discovery answer ≤ 64 KB",
      sizes.largestDbport <= 64 * 1024,
      `${sizes.largestDbport.toLocaleString("en-US")} bytes`,
    );
  } finally {
    await dropWide();
  }
}

// P1: what a write preview costs before the user is asked.
if (runs("p1")) {
  await Deno.mkdir(`${dir}/p1`);
  const costs = await measurePreviews(`${dir}/p1`, quick ? 3 : 7);
  out();
  out(
    "### P1 write preview: request to the approval being asked (PostgreSQL, median)",
  );
  out();
  out(
    "| statement | with the dry run | writePreview off | the preview's cost |",
  );
  out("|---|---:|---:|---:|");
  for (const cost of costs) {
    out(
      `| \`${cost.statement}\` | ${cost.withDryRun.toFixed(1)} ms | ${
        cost.withoutPreview.toFixed(1)
      } ms | ${(cost.withDryRun - cost.withoutPreview).toFixed(1)} ms |`,
    );
  }
}

// T1: W1's SELECT 1 through a one-hop SSH tunnel beside the direct connection.
if (runs("t1")) {
  await Deno.mkdir(`${dir}/t1`);
  const cost = await measureTunnel(
    `${dir}/t1`,
    SECONDS / ROUNDS,
    ROUNDS,
    WARMUP,
  );
  header("T1 execute_query SELECT 1 on PostgreSQL through SSH, concurrency 8");
  out(row("direct", cost.direct));
  out(row("one SSH hop", cost.tunnel));
  out();
  out(
    `Through the tunnel: ${
      (cost.tunnel.rps / cost.direct.rps).toFixed(2)
    }× the direct req/s, p50 ${
      (cost.tunnel.p50 / cost.direct.p50).toFixed(2)
    }×, server CPU per call ${
      ((cost.tunnel.cpuPerRequest ?? 0) / (cost.direct.cpuPerRequest ?? 1))
        .toFixed(2)
    }× (dbport's own process, the SSH encryption included).`,
  );
}

// C1: what each server's tool surface costs a model's context.
if (runs("c1")) {
  await Deno.mkdir(`${dir}/c1`);
  out();
  out("### C1 tools/list size (the tools array, characters and ≈ tokens)");
  out();
  const table = await measureToolsList(`${dir}/c1`);
  for (const line of table) out(line);
  for (const [who, ceiling] of [["readOnly", 5_600], ["fullAccess", 7_000]]) {
    const cells = table.find((l) => l.includes(`dbport (${who})`))?.split("|");
    const chars = Number(cells?.[3]?.replaceAll(",", "").trim());
    checks.push({
      what: `tools/list for a ${who} token ≤ ${ceiling} characters`,
      ok: chars <= Number(ceiling),
      detail: `${chars}`,
    });
  }
}

// RT: round trips and statements per read, counted on the wire.
if (runs("rt")) {
  await Deno.mkdir(`${dir}/rt`);
  out();
  out(
    "### RT round trips and statements per `execute_query SELECT 1` (counted on the wire by a proxy, sequential reads)",
  );
  out();
  for (const line of await measureRoundTrips(`${dir}/rt`, BENCH_USER, 200)) {
    out(line);
  }
}

await Deno.remove(dir, { recursive: true }).catch(() => {});

out();
out("### Targets");
out();
out("| target | measured | met |");
out("|---|---:|:---:|");
for (const c of checks) {
  out(`| ${c.what} | ${c.detail} | ${c.ok ? "yes" : "**no**"} |`);
}
const report = new URL("./last-run.md", import.meta.url).pathname;
await Deno.writeTextFile(report, lines.join("\n") + "\n");
console.log(
  `\nwritten to ${report}; ${
    checks.filter((c) => c.ok).length
  }/${checks.length} targets met`,
);
