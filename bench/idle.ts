// deno-lint-ignore-file no-console
/**
 * `deno task bench:idle`: `serve`'s resident memory at idle, as bench/run.ts
 * measures it (the bench's home with PostgreSQL, MariaDB and SQLite
 * connections, `SERVE_PERMISSIONS`, 1.5 s after the port answers, nothing
 * asked yet), read from /proc/PID/status (VmRSS, RssAnon, RssFile) over
 * several fresh servers and reported as medians. Flags: `--runs=N` (default
 * 7), `--wait=MS` after start (default 1500), `--other=<tree>` (another
 * checkout's `serve` measured in alternating runs, the "before"; it runs
 * with this tree's `SERVE_PERMISSIONS`, so a change of flags shows on both
 * sides), `--v8=…` (V8 flags for this tree's side), `--flags=a,b` (other
 * `deno run` flags for this tree's side, e.g. `--no-code-cache`), `--first`
 * (after the reading, each engine's first `execute_query` and the time it
 * took, checked to answer).
 *
 * @module
 */

import { MYSQL_URL } from "../tests/_db.ts";
import { closeConnections, mcpRequest } from "./mcp_request.ts";
import { benchHome, startDbport } from "./targets.ts";

const flag = (name: string, fallback: string) =>
  Deno.args.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3) ??
    fallback;
const runs = Number(flag("runs", "7"));
const waitMs = Number(flag("wait", "1500"));
const other = Deno.args.find((a) => a.startsWith("--other="))?.slice(8);
const v8 = flag("v8", "");
/** `--flags=a,b`: other `deno run` flags for this tree's side. */
const extraFlags = flag("flags", "").split(",").filter((f) => f !== "");
const first = Deno.args.includes("--first");

/** The kB fields of /proc/PID/status this reports, in MiB. */
const FIELDS = ["VmRSS", "RssAnon", "RssFile"] as const;
type Reading = Record<(typeof FIELDS)[number], number>;

function reading(pid: number): Reading {
  const status = Deno.readTextFileSync(`/proc/${pid}/status`);
  const value = (field: string) => {
    const line = status.split("\n").find((l) => l.startsWith(`${field}:`));
    if (line === undefined) throw new Error(`no ${field} in /proc/${pid}`);
    return Number(line.replace(/\D+/g, "")) / 1024;
  };
  return {
    VmRSS: value("VmRSS"),
    RssAnon: value("RssAnon"),
    RssFile: value("RssFile"),
  };
}

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1
    ? sorted[mid]!
    : (sorted[mid - 1]! + sorted[mid]!) / 2;
};

const dir = await Deno.makeTempDir({ prefix: "dbport-idle-" });
const sides: { name: string; root?: string; flags: string[] }[] = [
  {
    name: "this",
    flags: [...(v8 === "" ? [] : [`--v8-flags=${v8}`]), ...extraFlags],
  },
  ...(other === undefined ? [] : [{ name: "other", root: other, flags: [] }]),
];
const results = new Map<string, Reading[]>();
const firstCalls = new Map<string, number[]>();
for (const side of sides) {
  await Deno.mkdir(`${dir}/${side.name}`);
  results.set(side.name, []);
}
const homes = new Map(
  await Promise.all(sides.map(async (side) => {
    const home = await benchHome(`${dir}/${side.name}`, MYSQL_URL);
    await Deno.writeFile(home.sqlitePath, new Uint8Array());
    return [side.name, home] as const;
  })),
);
for (let run = 0; run < runs; run++) {
  for (const side of run % 2 === 0 ? sides : [...sides].reverse()) {
    const home = homes.get(side.name)!;
    await using server = await startDbport(
      home,
      side.flags,
      {},
      ...(side.root === undefined ? [] : [side.root]),
    );
    await new Promise((resolve) => setTimeout(resolve, waitMs));
    const r = reading(server.pid);
    results.get(side.name)!.push(r);
    console.log(
      `${side.name} run ${run + 1}: ${
        FIELDS.map((f) => `${f} ${r[f].toFixed(1)}`).join(", ")
      } MiB`,
    );
    if (!first) continue;
    for (const engine of ["postgres", "mysql", "sqlite"] as const) {
      const ask = mcpRequest(server, "tools/call", {
        name: "execute_query",
        arguments: { connection_id: home.ids[engine], query: "select 1" },
      });
      const start = performance.now();
      const ok = await ask();
      const ms = performance.now() - start;
      if (!ok) throw new Error(`${side.name}: ${engine}'s first call failed`);
      const key = `${side.name} ${engine}`;
      firstCalls.set(key, [...firstCalls.get(key) ?? [], ms]);
    }
    closeConnections();
    console.log(
      `${side.name} run ${run + 1} after the first calls: VmRSS ${
        reading(server.pid).VmRSS.toFixed(1)
      } MiB`,
    );
  }
}
console.log();
for (const side of sides) {
  const rs = results.get(side.name)!;
  console.log(
    `${side.name} median of ${rs.length}: ${
      FIELDS.map((f) => `${f} ${median(rs.map((r) => r[f])).toFixed(1)}`)
        .join(", ")
    } MiB`,
  );
}
for (const [key, ms] of firstCalls) {
  console.log(`first execute_query ${key}: median ${median(ms).toFixed(0)} ms`);
}
await Deno.remove(dir, { recursive: true });
