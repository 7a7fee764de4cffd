// deno-lint-ignore-file no-console
/**
 * W4-like on MariaDB without the HTTP layer: eight clients of `SELECT 1`
 * through `openMysql`, each call what `execute_query` asks of the driver (the
 * statement's check, then the read), reporting calls/s and this process's
 * CPU a call (and the whole `mariadbd`'s, shared: an upper bound), then
 * the commands (round trips) one read sends, counted on the wire: every
 * client packet with sequence number 0 starts a command (its first payload
 * byte names it: 0x03 COM_QUERY, 0x1f COM_RESET_CONNECTION, ...).
 *
 *   deno run --config deno.dev.json -A bench/mysql_w4.ts [seconds] [sql]
 *
 * @module
 */

import process from "node:process";
import net from "node:net";
import type { Duplex } from "node:stream";
import { openMysql } from "../lib/db/mysql/mysql.ts";
import { checkStatement } from "../lib/db/sql/statement_check.ts";
import type { Driver } from "../lib/db/types.ts";
import { MYSQL_URL } from "../tests/_db.ts";

const seconds = Number(Deno.args[0] ?? 4);
const sql = Deno.args[1] ?? "select 1";
const options = {
  mode: "read" as const,
  signal: new AbortController().signal,
  timeoutMs: 10_000,
  maxRows: 500,
  maxBytes: 1_000_000,
  maxCellChars: 20_000,
};

const COMMANDS: Record<number, string> = {
  0x03: "COM_QUERY",
  0x0e: "COM_PING",
  0x16: "COM_STMT_PREPARE",
  0x17: "COM_STMT_EXECUTE",
  0x19: "COM_STMT_CLOSE",
  0x1f: "COM_RESET_CONNECTION",
};

/** Commands by name, counted from the client's packets on every socket. */
const counted = new Map<string, number>();

/** A TCP socket to MariaDB whose outgoing commands are counted. */
function countingStream(): Duplex {
  const { hostname, port } = new URL(MYSQL_URL);
  const socket = net.connect(Number(port || 3306), hostname);
  const write = socket.write.bind(socket) as (...args: unknown[]) => boolean;
  (socket as unknown as { write: unknown }).write = (
    chunk: Uint8Array,
    ...rest: unknown[]
  ) => {
    // mysql2 writes whole packets; several may share one write.
    for (let at = 0; at + 4 < chunk.length;) {
      const length = chunk[at]! | chunk[at + 1]! << 8 | chunk[at + 2]! << 16;
      if (chunk[at + 3] === 0) {
        const name = COMMANDS[chunk[at + 4]!] ?? `0x${chunk[at + 4]!}`;
        counted.set(name, (counted.get(name) ?? 0) + 1);
      }
      at += 4 + length;
    }
    return write(chunk, ...rest);
  };
  return socket;
}

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

/** A process's CPU time so far, in µs (user + system, from /proc). */
function processCpuMicros(pid: number | null): number {
  if (pid === null) return 0;
  const stat = Deno.readTextFileSync(`/proc/${pid}/stat`);
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return (Number(fields[11]) + Number(fields[12])) * 10_000;
}

/** One `execute_query` call's driver work: the check, then the read. */
async function call(driver: Driver): Promise<void> {
  const checked = await checkStatement(sql, driver, options);
  if (!checked.ok || checked.tier !== "read") {
    throw new Error(`${sql} is not a read: ${JSON.stringify(checked)}`);
  }
  await driver.query(sql, options);
}

async function measure(): Promise<void> {
  const driver = openMysql({ url: MYSQL_URL, secrets: [] });
  try {
    for (let i = 0; i < 2_000; i++) await call(driver);
    let calls = 0;
    const end = performance.now() + seconds * 1000;
    const cpu = process.cpuUsage();
    const server = mariadbPid();
    const serverBefore = processCpuMicros(server);
    const started = performance.now();
    await Promise.all(Array.from({ length: 8 }, async () => {
      while (performance.now() < end) {
        await call(driver);
        calls++;
      }
    }));
    const elapsed = (performance.now() - started) / 1000;
    const used = process.cpuUsage(cpu);
    console.log(JSON.stringify({
      sql,
      callsPerSecond: Math.round(calls / elapsed),
      processCpuUsPerCall: +((used.user + used.system) / calls).toFixed(1),
      // The whole server, shared with every other client: an upper bound.
      mariadbCpuUsPerCall: server === null ? null : +(
        (processCpuMicros(server) - serverBefore) / calls
      ).toFixed(1),
    }));
  } finally {
    await driver.close();
  }
}

async function count(): Promise<void> {
  const driver = openMysql({
    url: MYSQL_URL,
    secrets: [],
    stream: countingStream,
  });
  try {
    // Sessions opened and set up first, then only reads are counted.
    await Promise.all(
      Array.from({ length: 4 }, () => call(driver)),
    );
    counted.clear();
    const reads = 200;
    for (let i = 0; i < reads; i++) await call(driver);
    const perRead = Object.fromEntries(
      [...counted].map(([name, n]) => [name, n / reads]),
    );
    console.log(JSON.stringify({ sql, commandsPerCall: perRead }));
  } finally {
    await driver.close();
  }
}

await measure();
await count();
