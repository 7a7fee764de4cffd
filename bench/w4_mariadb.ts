// deno-lint-ignore-file no-console
/**
 * `deno task bench`'s W4 on MariaDB alone: `execute_query` `SELECT 1` at
 * concurrency 8 against a `serve` process and MCP Toolbox, in interleaved
 * rounds (each figure the median round), with each server's CPU a call and
 * the whole `mariadbd`'s CPU a call during each contender's rounds (the
 * server is shared: an upper bound, read it loosely).
 *
 *   deno run --config deno.dev.json -A bench/w4_mariadb.ts [seconds] [--profile]
 *
 * `--profile` also samples dbport's server (V8's profiler through its
 * inspector) for one more round and prints where its CPU went, by file and
 * by function.
 *
 * @module
 */

import mysql from "mysql2/promise";
import { MYSQL_URL } from "../tests/_db.ts";
import { runLoad } from "./load.ts";
import { closeConnections, mcpRequest } from "./mcp_request.ts";
import { cpuMicros } from "./proc.ts";
import { benchHome, startDbport, startToolbox } from "./targets.ts";

const seconds = Number(Deno.args.find((arg) => /^\d/.test(arg)) ?? 9);
const profiling = Deno.args.includes("--profile");
const ROUNDS = 3;
const BENCH_USER = { user: "dbport_bench", password: "bench" };
const INSPECT_PORT = 9_000 + Math.floor(Math.random() * 900);

/** mariadbd's process id on this machine, if it runs here (Linux /proc). */
function mariadbPid(): number | null {
  for (const entry of Deno.readDirSync("/proc")) {
    if (!/^\d+$/.test(entry.name)) continue;
    try {
      const comm = Deno.readTextFileSync(`/proc/${entry.name}/comm`).trim();
      if (comm === "mariadbd" || comm === "mysqld") return Number(entry.name);
    } catch { /* ended meanwhile */ }
  }
  return null;
}

function median(values: number[]): number {
  return [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
}

/** Sample `pid`'s V8 for `ms` through its inspector; the profile's nodes. */
async function profile(ms: number, during: () => Promise<unknown>) {
  const list = await (await fetch(`http://127.0.0.1:${INSPECT_PORT}/json`))
    .json() as { webSocketDebuggerUrl: string }[];
  const socket = new WebSocket(list[0]!.webSocketDebuggerUrl);
  await new Promise((resolve) => socket.onopen = resolve);
  let id = 0;
  const waiting = new Map<number, (result: unknown) => void>();
  socket.onmessage = (event) => {
    const message = JSON.parse(event.data);
    waiting.get(message.id)?.(message.result);
  };
  const post = (method: string, params = {}) =>
    new Promise<unknown>((resolve) => {
      waiting.set(++id, resolve);
      socket.send(JSON.stringify({ id, method, params }));
    });
  await post("Profiler.enable");
  await post("Profiler.setSamplingInterval", { interval: 100 });
  await post("Profiler.start");
  await Promise.all([during(), new Promise((r) => setTimeout(r, ms))]);
  const { profile } = await post("Profiler.stop") as {
    profile: {
      nodes: {
        id: number;
        callFrame: { functionName: string; url: string; lineNumber: number };
      }[];
      samples: number[];
    };
  };
  socket.close();
  const hits = new Map<number, number>();
  for (const node of profile.samples) hits.set(node, (hits.get(node) ?? 0) + 1);
  const byFile = new Map<string, number>();
  const byFunction = new Map<string, number>();
  let busy = 0;
  for (const node of profile.nodes) {
    const n = hits.get(node.id) ?? 0;
    const frame = node.callFrame;
    if (n === 0 || frame.functionName === "(idle)") continue;
    busy += n;
    const file = frame.url.replace(
      /^.*\/(npm\/registry\.npmjs\.org|work\/wt\/[^/]+)\//,
      "",
    )
      .replace(/^file:\/\//, "") || "(native)";
    // dbport's own files one by one; a package or an extension as a whole.
    const pkg = file.startsWith("lib/")
      ? file
      : file.split("/").slice(0, 2).join("/");
    byFile.set(pkg, (byFile.get(pkg) ?? 0) + n);
    const name = `${frame.functionName || "(anonymous)"} ${file}:${
      frame.lineNumber + 1
    }`;
    byFunction.set(name, (byFunction.get(name) ?? 0) + n);
  }
  const top = (map: Map<string, number>, k: number) =>
    [...map].sort((a, b) => b[1] - a[1]).slice(0, k).map(([name, n]) =>
      `  ${(100 * n / busy).toFixed(1).padStart(5)}% ${name}`
    ).join("\n");
  console.log(`dbport's busy samples by file (top 30):\n${top(byFile, 30)}`);
  console.log(`by function (top 40):\n${top(byFunction, 40)}`);
}

const dir = await Deno.makeTempDir({ prefix: "dbport-w4-" });
try {
  const admin = await mysql.createConnection(MYSQL_URL);
  await admin.query(
    `CREATE USER IF NOT EXISTS '${BENCH_USER.user}'@'%' IDENTIFIED BY '${BENCH_USER.password}'`,
  );
  await admin.query(`GRANT SELECT ON *.* TO '${BENCH_USER.user}'@'%'`);
  await admin.end();
  const home = await benchHome(dir, MYSQL_URL);
  await Deno.writeFile(home.sqlitePath, new Uint8Array());
  await using dbport = await startDbport(
    home,
    profiling ? [`--inspect=127.0.0.1:${INSPECT_PORT}`] : [],
  );
  await using toolbox = await startToolbox(dir, home.sqlitePath, BENCH_USER);
  const contenders = [
    [
      "dbport",
      mcpRequest(dbport, "tools/call", {
        name: "execute_query",
        arguments: { connection_id: home.ids.mysql, query: "select 1" },
      }),
      dbport.pid,
    ],
    [
      "Toolbox",
      mcpRequest(toolbox, "tools/call", {
        name: "mysql_execute_sql",
        arguments: { sql: "select 1" },
      }),
      toolbox.pid,
    ],
  ] as const;
  const server = mariadbPid();
  const serverCpu = () => server === null ? 0 : cpuMicros(server);
  const rounds: Record<string, { rps: number; cpu: number; db: number }[]> = {};
  for (let round = 0; round < ROUNDS; round++) {
    for (let i = 0; i < contenders.length; i++) {
      const [name, request, pid] = contenders[(i + round) % 2]!;
      const result = await runLoad({
        concurrency: 8,
        seconds: seconds / ROUNDS,
        warmupSeconds: round === 0 ? 1 : 0.2,
        request,
        cpu: () => cpuMicros(pid),
        db: {
          snapshot: () => Promise.resolve(serverCpu()),
          spent: (a, b) => (b as number) - (a as number),
        },
      });
      closeConnections();
      (rounds[name] ??= []).push({
        rps: result.rps,
        cpu: result.cpuPerRequest ?? NaN,
        db: result.dbCpuPerRequest ?? NaN,
      });
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  }
  console.log(
    `W4 MariaDB SELECT 1, C=8, ${ROUNDS} rounds of ${
      seconds / ROUNDS
    } s, medians (load ${Deno.loadavg().map((l) => l.toFixed(1)).join(" ")}):`,
  );
  for (const [name, results] of Object.entries(rounds)) {
    console.log(
      `  ${name}: ${
        median(results.map((r) => r.rps)).toFixed(0)
      } req/s, server CPU ${
        median(results.map((r) => r.cpu)).toFixed(0)
      } µs/call, mariadbd CPU ${
        median(results.map((r) => r.db)).toFixed(0)
      } µs/call`,
    );
  }
  const d = median(rounds.dbport!.map((r) => r.cpu));
  const t = median(rounds.Toolbox!.map((r) => r.cpu));
  console.log(`  dbport / Toolbox server CPU per call: ${(d / t).toFixed(2)}×`);
  if (profiling) {
    const [, request] = contenders[0];
    await profile(seconds * 1000 / ROUNDS, () =>
      runLoad({
        concurrency: 8,
        seconds: seconds / ROUNDS,
        warmupSeconds: 0,
        request,
      }));
    closeConnections();
  }
} finally {
  await Deno.remove(dir, { recursive: true });
}
