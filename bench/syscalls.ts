// deno-lint-ignore-file no-console
/**
 * `deno task bench:syscalls`: the system calls a W1 read costs the server
 * (`SELECT 1` through `execute_query` on PostgreSQL, closed-loop at `--c`),
 * dbport beside MCP Toolbox: `strace -c -f` attached to each server for
 * `--seconds`, each count divided by the requests answered meanwhile. The
 * counts, not strace's times, are the result (strace slows every call it
 * sees). Then, without strace, each server's CPU per read by thread (from
 * /proc/<pid>/task): how much is the JavaScript thread's and how much V8's
 * helper threads' (garbage collection, compilation). Needs `strace` (Debian's
 * package). Flags: `--seconds=N` (default 5), `--c=N` (default 8).
 *
 * @module
 */

import { MYSQL_URL } from "../tests/_db.ts";
import { runLoad } from "./load.ts";
import { cpuMicros } from "./proc.ts";
import { closeConnections, mcpRequest } from "./mcp_request.ts";
import {
  benchHome,
  startDbport,
  startToolbox,
  type Target,
} from "./targets.ts";

const flag = (name: string, fallback: string) =>
  Deno.args.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3) ??
    fallback;
/** The MariaDB user `deno task bench` creates for Toolbox (bench/run.ts). */
const BENCH_USER = { user: "dbport_bench", password: "bench" };
const seconds = Number(flag("seconds", "5"));
const concurrency = Number(flag("c", "8"));

/** strace -c's table: syscall → calls. */
function parseStrace(text: string): Map<string, number> {
  const calls = new Map<string, number>();
  for (const line of text.split("\n")) {
    const cells = line.trim().split(/\s+/);
    // "% time seconds usecs/call calls [errors] syscall"
    if (cells.length < 5 || !/^\d/.test(cells[0]!)) continue;
    const name = cells.at(-1)!;
    if (name === "total") continue;
    calls.set(name, Number(cells[3]));
  }
  return calls;
}

/** Each thread's name and CPU time (µs) of `pid`. */
function threadCpu(pid: number): Map<string, number> {
  const byName = new Map<string, number>();
  for (const entry of Deno.readDirSync(`/proc/${pid}/task`)) {
    const tid = Number(entry.name);
    let name: string;
    let cpu: number;
    try {
      name = Deno.readTextFileSync(`/proc/${pid}/task/${tid}/comm`).trim();
      cpu = cpuMicros(pid, tid);
    } catch {
      continue; // the thread ended meanwhile
    }
    const key = tid === pid ? "main (JavaScript)" : name;
    byName.set(key, (byName.get(key) ?? 0) + cpu);
  }
  return byName;
}

/** CPU per request of each of `target`'s threads (named by `comm`). */
async function threadsPerRequest(
  target: Target,
  request: () => Promise<boolean>,
): Promise<Map<string, number>> {
  let requests = 0;
  const counted = async () => {
    const ok = await request();
    requests++;
    return ok;
  };
  await runLoad({ concurrency, seconds: 1, warmupSeconds: 0, request });
  const before = threadCpu(target.pid);
  await runLoad({ concurrency, seconds, warmupSeconds: 0, request: counted });
  const after = threadCpu(target.pid);
  closeConnections();
  const perRequest = new Map<string, number>();
  for (const [name, cpu] of after) {
    perRequest.set(name, (cpu - (before.get(name) ?? 0)) / requests);
  }
  return perRequest;
}

async function measure(
  target: Target,
  request: () => Promise<boolean>,
): Promise<{ perRequest: Map<string, number>; requests: number }> {
  if (!await request()) throw new Error(`${target.name} did not answer right`);
  // Warm up before strace attaches.
  await runLoad({ concurrency, seconds: 1, warmupSeconds: 0, request });
  const out = await Deno.makeTempFile({ prefix: "dbport-strace-" });
  const strace = new Deno.Command("strace", {
    args: ["-c", "-f", "-o", out, "-p", String(target.pid)],
    stdout: "null",
    stderr: "null",
  }).spawn();
  await new Promise((resolve) => setTimeout(resolve, 500));
  let requests = 0;
  const counted = async () => {
    const ok = await request();
    requests++;
    return ok;
  };
  await runLoad({ concurrency, seconds, warmupSeconds: 0, request: counted });
  strace.kill("SIGINT");
  await strace.status;
  closeConnections();
  const calls = parseStrace(await Deno.readTextFile(out));
  await Deno.remove(out);
  const perRequest = new Map<string, number>();
  for (const [name, n] of calls) perRequest.set(name, n / requests);
  return { perRequest, requests };
}

const dir = await Deno.makeTempDir({ prefix: "dbport-syscalls-" });
const home = await benchHome(dir, MYSQL_URL);
await Deno.writeFile(home.sqlitePath, new Uint8Array());
const results: [string, Map<string, number>][] = [];
const threads: [string, Map<string, number>][] = [];
{
  await using dbport = await startDbport(home, [
    "--v8-flags=--max-semi-space-size=4",
  ]);
  const request = mcpRequest(dbport, "tools/call", {
    name: "execute_query",
    arguments: { connection_id: home.ids.postgres, query: "select 1" },
  });
  const r = await measure(dbport, request);
  results.push([`dbport (${r.requests} req)`, r.perRequest]);
  threads.push(["dbport", await threadsPerRequest(dbport, request)]);
}
{
  await using toolbox = await startToolbox(dir, home.sqlitePath, BENCH_USER);
  const request = mcpRequest(toolbox, "tools/call", {
    name: "pg_execute_sql",
    arguments: { sql: "select 1" },
  });
  const r = await measure(toolbox, request);
  results.push([`Toolbox (${r.requests} req)`, r.perRequest]);
  threads.push(["Toolbox", await threadsPerRequest(toolbox, request)]);
}
await Deno.remove(dir, { recursive: true });

const names = [
  ...new Set(results.flatMap(([, m]) => [...m.keys()])),
].sort((a, b) =>
  Math.max(...results.map(([, m]) => m.get(b) ?? 0)) -
  Math.max(...results.map(([, m]) => m.get(a) ?? 0))
);
console.log(
  `system calls per W1 read at C=${concurrency} (strace -c -f, ${seconds} s)`,
);
console.log(
  ["syscall".padEnd(20), ...results.map(([n]) => n.padStart(22))].join(""),
);
for (const name of names) {
  const cells = results.map(([, m]) => (m.get(name) ?? 0).toFixed(2));
  if (cells.every((c) => c === "0.00")) continue;
  console.log([name.padEnd(20), ...cells.map((c) => c.padStart(22))].join(""));
}
const totals = results.map(([, m]) =>
  [...m.values()].reduce((a, b) => a + b, 0).toFixed(2)
);
console.log(
  ["total".padEnd(20), ...totals.map((c) => c.padStart(22))].join(""),
);

for (const [name, perThread] of threads) {
  const total = [...perThread.values()].reduce((a, b) => a + b, 0);
  console.log(
    `\n${name}: CPU per read by thread (${total.toFixed(0)} µs in all)`,
  );
  for (const [thread, us] of [...perThread].sort((a, b) => b[1] - a[1])) {
    if (us >= 0.5) {
      console.log(`  ${thread.padEnd(24)}${us.toFixed(1).padStart(8)} µs`);
    }
  }
}
