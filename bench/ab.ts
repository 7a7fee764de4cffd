// deno-lint-ignore-file no-console
/**
 * `deno task bench:ab <tree>`: this tree's `serve` against another
 * checkout's, W1 (`SELECT 1` on PostgreSQL through `execute_query`) at one
 * concurrency, in alternating rounds — the quick way to see whether a change
 * to the hot path moved its CPU per call, on a machine too noisy for two
 * separate runs to compare. Flags: `--c=N` (default 8), `--rounds=N`
 * (default 6), `--seconds=N` per round (default 5), `--engine=postgres|mysql|sqlite`,
 * `--method=tools/list` (W2's request instead), `--w3` (W3's 10,000-row
 * read instead), `--together` (both sides
 * loaded at once each round, each at `--c`: the machine's bursts fall on
 * both alike; the ratio is then of two servers sharing the cores),
 * `--v8-this=…` / `--v8-other=…`: V8 flags for one side (the other checkout
 * may be this one, `.`, to compare flags alone).
 *
 * @module
 */

import { MYSQL_URL } from "../tests/_db.ts";
import { runLoad } from "./load.ts";
import { closeConnections, mcpRequest } from "./mcp_request.ts";
import { cpuMicros } from "./proc.ts";
import { benchHome, startDbport, type Target } from "./targets.ts";

const flag = (name: string, fallback: string) =>
  Deno.args.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3) ??
    fallback;
const other = Deno.args.find((a) => !a.startsWith("--"));
if (other === undefined) {
  console.error(
    "usage: deno task bench:ab <other checkout> [--c=8] [--rounds=6]",
  );
  Deno.exit(2);
}
const concurrency = Number(flag("c", "8"));
const rounds = Number(flag("rounds", "6"));
const seconds = Number(flag("seconds", "5"));
const engine = flag("engine", "postgres") as "postgres" | "mysql" | "sqlite";
/** `--together`: both sides loaded at the same time in each round. */
const together = Deno.args.includes("--together");
/**
 * `--w3`: W3's read (10,000 rows × 5 columns) under W3's answer budget
 * instead of W1's `SELECT 1`.
 */
const w3 = Deno.args.includes("--w3");
/** `--method=tools/list`: that request instead of W1's. */
const method = flag("method", "tools/call");

/** W3's statement and answer budget, as bench/run.ts has them. */
const ROWS_QUERY =
  "select g as id, 'name ' || g as name, g * 2.5 as price, (g % 2 = 0) as flag, 'x' || md5(g::text) as note from generate_series(1, 10000) g";
const W3_BUDGET = { maxResultBytes: 4_000_000, maxAnswerChars: 4_000_000 };

const dir = await Deno.makeTempDir({ prefix: "dbport-ab-" });
/** One side: its server and its request. */
async function side(name: string, root?: string) {
  await Deno.mkdir(`${dir}/${name}`);
  const home = await benchHome(`${dir}/${name}`, MYSQL_URL);
  await Deno.writeFile(home.sqlitePath, new Uint8Array());
  const v8 = flag(`v8-${name}`, "");
  const target: Target = await startDbport(
    home,
    v8 === "" ? [] : [`--v8-flags=${v8}`],
    w3 ? W3_BUDGET : {},
    root,
  );
  const request = method === "tools/call"
    ? mcpRequest(target, "tools/call", {
      name: "execute_query",
      arguments: {
        connection_id: home.ids[engine],
        query: w3 ? ROWS_QUERY : "select 1",
      },
    })
    : mcpRequest(target, method);
  if (!await request()) throw new Error(`${name} did not answer right`);
  return { name, target, request, cpu: [] as number[], rps: [] as number[] };
}
const sides = [await side("this"), await side("other", other)];
try {
  const load = (s: typeof sides[number]) =>
    runLoad({
      concurrency,
      seconds,
      warmupSeconds: 1,
      request: s.request,
      cpu: () => cpuMicros(s.target.pid),
    }).then((result) => {
      s.cpu.push(result.cpuPerRequest ?? NaN);
      s.rps.push(result.rps);
    });
  for (let round = 0; round < rounds; round++) {
    if (together) {
      // Both at once: a burst of the shared machine's other work falls on
      // both sides alike, not on one side's round.
      await Promise.all(sides.map(load));
      closeConnections();
      continue;
    }
    for (const s of round % 2 === 0 ? sides : [...sides].reverse()) {
      await load(s);
      closeConnections();
    }
  }
  const median = (xs: number[]) =>
    [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
  for (const s of sides) {
    console.log(
      `${s.name.padEnd(6)} CPU µs/call median ${median(s.cpu).toFixed(0)} ` +
        `[${s.cpu.map((x) => x.toFixed(0)).join(" ")}], req/s median ${
          median(s.rps).toFixed(0)
        }`,
    );
  }
  // Each round's two sides ran back to back: their ratio cancels most of
  // a shared machine's drift between rounds.
  const paired = sides[0]!.cpu.map((x, i) => x / sides[1]!.cpu[i]!);
  console.log(
    `this / other: CPU ${
      (median(sides[0]!.cpu) / median(sides[1]!.cpu)).toFixed(3)
    }×, req/s ${
      (median(sides[0]!.rps) / median(sides[1]!.rps)).toFixed(3)
    }×; CPU paired by round: median ${median(paired).toFixed(3)}× [${
      paired.map((x) => x.toFixed(2)).join(" ")
    }]`,
  );
} finally {
  for (const s of sides) await s.target[Symbol.asyncDispose]();
  await Deno.remove(dir, { recursive: true });
}
