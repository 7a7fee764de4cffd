// deno-lint-ignore-file no-console
/**
 * `deno task bench:profile`: where dbport's CPU goes under W1 (`SELECT 1`
 * through `execute_query` on PostgreSQL) — `serve` run with `--cpu-prof`
 * under closed-loop load, then the profile summed by function (self time)
 * and by module. Flags: `--seconds=N` (default 10), `--c=N` (concurrency,
 * default 8), `--engine=postgres|mysql|sqlite`, `--method=tools/list`,
 * `--top=N` rows (default 40), `--keep` keeps the `.cpuprofile` (its path
 * is printed) for Chrome's DevTools. `--perf`: sample on-CPU time with
 * Linux `perf` instead (V8's perf map names the JavaScript frames): the
 * V8 profile samples wall time, so a call that was descheduled (a loopback
 * write waking the database on a busy 2-core machine) looks costly there;
 * `perf` counts only CPU, kernel time included.
 *
 * @module
 */

import { MYSQL_URL } from "../tests/_db.ts";
import { runLoad } from "./load.ts";
import { closeConnections, mcpRequest } from "./mcp_request.ts";
import { cpuMicros } from "./proc.ts";
import { benchHome, startDbport } from "./targets.ts";

const flag = (name: string, fallback: string) =>
  Deno.args.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3) ??
    fallback;
const seconds = Number(flag("seconds", "10"));
const concurrency = Number(flag("c", "8"));
const engine = flag("engine", "postgres") as "postgres" | "mysql" | "sqlite";
const method = flag("method", "tools/call");
const top = Number(flag("top", "40"));
const keep = Deno.args.includes("--keep");
const perf = Deno.args.includes("--perf");
/** `--v8=--flag,--flag`: V8 flags for `serve` (default: as users run it). */
const v8 = flag("v8", "--max-semi-space-size=4");

/** A node of a V8 `.cpuprofile`. */
interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}

/** A V8 `.cpuprofile`. */
interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

const dir = await Deno.makeTempDir({ prefix: "dbport-profile-" });
const profiles = `${dir}/profiles`;
const home = await benchHome(dir, MYSQL_URL);
await Deno.writeFile(home.sqlitePath, new Uint8Array());
{
  await using dbport = await startDbport(
    home,
    perf
      ? [`--v8-flags=${v8},--perf-basic-prof`]
      : [`--v8-flags=${v8}`, "--cpu-prof", `--cpu-prof-dir=${profiles}`],
  );
  const request = method === "tools/call"
    ? mcpRequest(dbport, "tools/call", {
      name: "execute_query",
      arguments: { connection_id: home.ids[engine], query: "select 1" },
    })
    : mcpRequest(dbport, method);
  if (!await request()) throw new Error("dbport did not answer right");
  const recorder = perf
    ? new Deno.Command("perf", {
      args: [
        "record",
        "-e",
        "cpu-clock",
        "-F",
        "1999",
        "-g",
        "-p",
        String(dbport.pid),
        "-o",
        `${dir}/perf.data`,
        "--",
        "sleep",
        String(seconds + 1),
      ],
      stdout: "null",
      stderr: "null",
    }).spawn()
    : null;
  const result = await runLoad({
    concurrency,
    seconds,
    warmupSeconds: 1,
    request,
    cpu: () => cpuMicros(dbport.pid),
  });
  await recorder?.status;
  closeConnections();
  console.log(
    `${method} ${engine} C=${concurrency}: ${result.rps.toFixed(0)} req/s, ` +
      `p50 ${result.p50.toFixed(2)} ms, server CPU ${
        result.cpuPerRequest?.toFixed(0)
      } µs/req, ${result.errors} errors`,
  );
}

if (perf) {
  await perfReport(`${dir}/perf.data`);
  if (keep) console.log(`\nperf data: ${dir}/perf.data`);
  else await Deno.remove(dir, { recursive: true });
  Deno.exit(0);
}

const [file] = [...Deno.readDirSync(profiles)].map((e) => e.name);
if (file === undefined) throw new Error(`no profile written in ${profiles}`);
const path = `${profiles}/${file}`;
const profile = JSON.parse(await Deno.readTextFile(path)) as CpuProfile;
summarize(profile);
if (keep) console.log(`\nprofile: ${path}`);
else await Deno.remove(dir, { recursive: true });

/** Print self time by function and by module, as shares of all samples. */
function summarize(profile: CpuProfile): void {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const self = new Map<number, number>();
  let total = 0;
  profile.samples.forEach((id, i) => {
    const dt = profile.timeDeltas[i] ?? 0;
    self.set(id, (self.get(id) ?? 0) + dt);
    total += dt;
  });
  const byFunction = new Map<string, number>();
  const byModule = new Map<string, number>();
  for (const [id, time] of self) {
    const { functionName, url, lineNumber } = byId.get(id)!.callFrame;
    const module = shortUrl(url);
    const key = `${functionName || "(anonymous)"} ${module}:${lineNumber + 1}`;
    byFunction.set(key, (byFunction.get(key) ?? 0) + time);
    byModule.set(module, (byModule.get(module) ?? 0) + time);
  }
  const print = (title: string, map: Map<string, number>) => {
    console.log(
      `\n## ${title} (self time, % of ${(total / 1e6).toFixed(1)} s)`,
    );
    for (
      const [key, time] of [...map].sort((a, b) => b[1] - a[1]).slice(0, top)
    ) {
      console.log(`${(100 * time / total).toFixed(1).padStart(5)}%  ${key}`);
    }
  };
  print("by module", byModule);
  print("by function", byFunction);
}

/** A module's URL without the cache or checkout prefix. */
function shortUrl(url: string): string {
  if (url === "") return "(native)";
  const npm = url.indexOf("/registry.npmjs.org/");
  if (npm >= 0) return `npm:${url.slice(npm + 20)}`;
  const lib = url.indexOf("/lib/");
  if (lib >= 0) return url.slice(lib + 1);
  return url.replace(/^.*\/(ext|node|runtime)\//, "$1/");
}

/** `perf report` by shared object, then by symbol (self, on-CPU). */
async function perfReport(data: string): Promise<void> {
  for (const sort of ["dso", "sym"]) {
    const { stdout } = await new Deno.Command("perf", {
      args: [
        "report",
        "-i",
        data,
        "--no-children",
        "--sort",
        sort,
        "--stdio",
        "--percent-limit",
        "0.4",
        "-g",
        "none",
      ],
      stdout: "piped",
      stderr: "null",
    }).output();
    const lines = new TextDecoder().decode(stdout).split("\n")
      .filter((line) => line.trim() !== "" && !line.startsWith("#"));
    console.log(`\n## perf, by ${sort} (on-CPU self time)`);
    console.log(lines.slice(0, top).join("\n"));
  }
}
