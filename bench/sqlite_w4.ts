// deno-lint-ignore-file no-console
/**
 * W4-like on SQLite without the HTTP layer: eight clients of `SELECT 1`
 * through `openSqlite`, reporting calls/s, process CPU a call (every thread)
 * and the event loop's thread's CPU a call (Linux /proc).
 *
 *   deno run --config deno.dev.json -A bench/sqlite_w4.ts [seconds]
 *
 * @module
 */

import process from "node:process";
import { openSqlite } from "../lib/db/sqlite/sqlite.ts";

const seconds = Number(Deno.args[0] ?? 4);
const dir = await Deno.makeTempDir({ prefix: "dbport-w4-" });
const path = `${dir}/w4.db`;
await Deno.writeFile(path, new Uint8Array());
const driver = openSqlite({ path, secrets: [] });
const options = {
  mode: "read" as const,
  signal: new AbortController().signal,
  timeoutMs: 10_000,
  maxRows: 500,
  maxBytes: 1_000_000,
  maxCellChars: 20_000,
};

/** CPU time of the calling thread, in ms (Linux: /proc; 0 elsewhere). */
function threadCpuMs(): number {
  try {
    const stat = Deno.readTextFileSync("/proc/thread-self/stat");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return (Number(fields[11]) + Number(fields[12])) * 10;
  } catch {
    return 0;
  }
}

try {
  for (let i = 0; i < 2_000; i++) await driver.query("select 1", options);
  let calls = 0;
  const end = performance.now() + seconds * 1000;
  const cpu = process.cpuUsage();
  const thread = threadCpuMs();
  const started = performance.now();
  await Promise.all(Array.from({ length: 8 }, async () => {
    while (performance.now() < end) {
      await driver.query("select 1", options);
      calls++;
    }
  }));
  const elapsed = (performance.now() - started) / 1000;
  const used = process.cpuUsage(cpu);
  console.log(JSON.stringify({
    callsPerSecond: Math.round(calls / elapsed),
    processCpuUsPerCall: +((used.user + used.system) / calls).toFixed(1),
    eventLoopCpuUsPerCall: +((threadCpuMs() - thread) * 1000 / calls)
      .toFixed(1),
  }));
} finally {
  await driver.close();
  await Deno.remove(dir, { recursive: true });
}
