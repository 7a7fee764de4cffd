// deno-lint-ignore-file no-console
/**
 * What one PostgreSQL read over TLS costs, the driver alone: `SELECT 1`
 * through a TLS-terminating proxy in front of the test server
 * (tests/_tls_pg_proxy.ts, run in a process of its own so that its TLS work
 * is not counted as dbport's), `sslmode=require`. Per read: the statements,
 * protocol messages and writes the proxy saw inside TLS, dbport's CPU and
 * wall time, at concurrency 1 and 8. `--driver <path>` measures another
 * tree's lib/db/postgres/postgres.ts (the before of a change); `--unwired`
 * turns the wired reader off (postgres.js's path on dbport's TLS socket).
 *
 *     deno run --config deno.dev.json -A bench/pg_tls_read_cost.ts [--driver p] [--unwired]
 *
 * @module
 */

import { POSTGRES_URL } from "../tests/_db.ts";
import postgres from "postgres";
import { cpuMicros, ownCpuMicros } from "./proc.ts";

const at = Deno.args.indexOf("--driver");
const driverPath = at >= 0
  ? Deno.args[at + 1]!
  : new URL("../lib/db/postgres/postgres.ts", import.meta.url).href;
const { openPostgres } = await import(
  driverPath.startsWith("/") ? `file://${driverPath}` : driverPath
);

// `--url <postgres url>`: a server with TLS of its own instead of the proxy
// (no message counts then; the database's CPU per read instead).
const urlAt = Deno.args.indexOf("--url");
const direct = urlAt >= 0 ? new URL(Deno.args[urlAt + 1]!) : null;

// The proxy, in a process of its own: it prints its URL, then its counts
// each time it reads a line.
const proxy = direct !== null ? null : new Deno.Command(Deno.execPath(), {
  args: [
    "run",
    "--config",
    new URL("../deno.dev.json", import.meta.url).pathname,
    "-A",
    new URL("./tls_proxy_serve.ts", import.meta.url).pathname,
    POSTGRES_URL,
  ],
  stdin: "piped",
  stdout: "piped",
}).spawn();
const lines = proxy?.stdout.pipeThrough(new TextDecoderStream()).getReader();
let buffered = "";
async function line(): Promise<string> {
  for (;;) {
    const end = buffered.indexOf("\n");
    if (end >= 0) {
      const text = buffered.slice(0, end);
      buffered = buffered.slice(end + 1);
      return text;
    }
    const { done, value } = await lines!.read();
    if (done) throw new Error("the proxy ended");
    buffered += value;
  }
}
const stdin = proxy?.stdin.getWriter();
async function counts(): Promise<
  { statements: number; writes: number; messages: Record<string, number> }
> {
  if (stdin === undefined) return { statements: 0, writes: 0, messages: {} };
  await stdin.write(new TextEncoder().encode("\n"));
  return JSON.parse(await line());
}

const proxyUrl = direct ?? new URL(await line());
proxyUrl.searchParams.set("sslmode", "require");
const app = `pgtls${Deno.pid}`;
proxyUrl.searchParams.set("application_name", app);
const admin = postgres(proxyUrl.toString(), { max: 1, onnotice: () => {} });
async function databaseCpu(): Promise<number> {
  const rows =
    await admin`select pid from pg_stat_activity where application_name = ${app}`;
  return rows.reduce((sum, row) => sum + cpuMicros(Number(row.pid)), 0);
}
// `--unwired`: postgres.js's path for every read (the wired reader off).
const unwired = Deno.args.includes("--unwired");
const driver = openPostgres({
  url: proxyUrl.toString(),
  secrets: [],
  ...(unwired ? { wiredReads: false } : {}),
});
const options = {
  mode: "read" as const,
  maxRows: 100,
  maxBytes: 100_000,
  maxCellChars: 1_000,
  timeoutMs: 10_000,
  signal: new AbortController().signal,
};

async function point(concurrency: number, seconds: number) {
  for (let i = 0; i < 50; i++) {
    await Promise.all(
      Array.from(
        { length: concurrency },
        () => driver.query("select 1", options),
      ),
    );
  }
  const before = await counts();
  const dbBefore = direct === null ? 0 : await databaseCpu();
  const ownBefore = ownCpuMicros();
  const started = performance.now();
  let calls = 0;
  const end = started + seconds * 1000;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (performance.now() < end) {
        await driver.query("select 1", options);
        calls++;
      }
    }),
  );
  const wall = performance.now() - started;
  const own = ownCpuMicros() - ownBefore;
  const db = direct === null ? 0 : await databaseCpu() - dbBefore;
  const after = await counts();
  const per = (a: number, b: number) => ((a - b) / calls).toFixed(2);
  const messages = Object.keys(after.messages).sort().map((type) =>
    `${type} ${per(after.messages[type]!, before.messages[type] ?? 0)}`
  ).join(", ");
  console.log(
    `C=${concurrency}: ${(calls / wall * 1000).toFixed(0)} reads/s, ` +
      `${(wall * 1000 / calls * concurrency).toFixed(0)} µs wall/read, ` +
      `dbport CPU ${(own / calls).toFixed(0)} µs/read` +
      (direct === null
        ? "; per read: "
        : `, database CPU ${(db / calls).toFixed(0)} µs/read\n`) +
      `${per(after.statements, before.statements)} statements, ` +
      `${per(after.writes, before.writes)} writes, messages ${messages}`,
  );
}

console.log(
  `# ${driverPath}${
    unwired ? " (unwired)" : ""
  } — select 1 over TLS (sslmode=require)`,
);
await point(1, 4);
await point(8, 4);
await driver.close();
await admin.end();
await stdin?.close();
await proxy?.status;
