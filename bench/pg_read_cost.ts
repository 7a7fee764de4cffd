// deno-lint-ignore-file no-console
/**
 * What one PostgreSQL read costs, the driver alone (no HTTP): the dbport
 * process's CPU and the database server's CPU per read (from /proc of the
 * backends serving it, found by their application_name), at concurrency 1
 * and 8. `--driver <path>` measures another tree's lib/db/postgres/postgres.ts (the
 * before of a change). Loopback, shared machine: compare runs made together.
 *
 *     deno run --config deno.dev.json -A bench/pg_read_cost.ts [--driver p]
 *
 * @module
 */

import postgres from "postgres";
import { POSTGRES_URL } from "../tests/_db.ts";
import { cpuMicros, ownCpuMicros } from "./proc.ts";

const at = Deno.args.indexOf("--driver");
const driverPath = at >= 0
  ? Deno.args[at + 1]!
  : new URL("../lib/db/postgres/postgres.ts", import.meta.url).href;
const { openPostgres } = await import(
  driverPath.startsWith("/") ? `file://${driverPath}` : driverPath
);
const app = `pgcost${Deno.pid}`;
const url = `${POSTGRES_URL}${
  POSTGRES_URL.includes("?") ? "&" : "?"
}application_name=${app}`;
const driver = openPostgres({ url, secrets: [] });
const admin = postgres(POSTGRES_URL, { max: 1, onnotice: () => {} });
const options = {
  mode: "read" as const,
  maxRows: 100,
  maxBytes: 100_000,
  maxCellChars: 1_000,
  timeoutMs: 10_000,
  signal: new AbortController().signal,
};
const statement = Deno.args.includes("--rows")
  ? "select g, md5(g::text) from generate_series(1, 50) g"
  : "select 1";

async function backends(): Promise<number[]> {
  const rows =
    await admin`select pid from pg_stat_activity where application_name = ${app}`;
  return rows.map((row) => Number(row.pid));
}

async function point(concurrency: number, seconds: number) {
  for (let i = 0; i < 50; i++) {
    await Promise.all(
      Array.from(
        { length: concurrency },
        () => driver.query(statement, options),
      ),
    );
  }
  const pids = await backends();
  const dbBefore = pids.reduce((sum, pid) => sum + cpuMicros(pid), 0);
  const ownBefore = ownCpuMicros();
  const started = performance.now();
  let calls = 0;
  const end = started + seconds * 1000;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (performance.now() < end) {
        await driver.query(statement, options);
        calls++;
      }
    }),
  );
  const wall = performance.now() - started;
  const db = pids.reduce((sum, pid) => sum + cpuMicros(pid), 0) - dbBefore;
  const own = ownCpuMicros() - ownBefore;
  console.log(
    `C=${concurrency}: ${(calls / wall * 1000).toFixed(0)} reads/s, ` +
      `dbport CPU ${(own / calls).toFixed(0)} µs/read, ` +
      `database CPU ${
        (db / calls).toFixed(0)
      } µs/read (${pids.length} sessions)`,
  );
}

console.log(`# ${driverPath} — ${statement}`);
await point(1, 4);
await point(8, 4);
await driver.close();
await admin.end();
