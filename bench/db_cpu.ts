/**
 * What a client process costs its database server: the CPU time, from /proc,
 * of what serves its connections, found from the process's own sockets to
 * the server's port. PostgreSQL: the backends (`pg_stat_activity.client_port`
 * → pid). MariaDB (one thread per connection): the threads of `mariadbd`
 * (`information_schema.PROCESSLIST.HOST` "ip:port" → `TID`, read in
 * /proc/<mariadbd>/task/<TID>). Only this process's are counted: the servers
 * are shared. SQLite runs inside the client process: its CPU is part of the
 * server CPU already, and there is nothing apart to count.
 *
 * @module
 */

import type postgres from "postgres";
import type { Connection } from "mysql2/promise";
import { cpuMicros } from "./proc.ts";

/** Per backend: CPU µs so far. */
export type DbSnapshot = Map<number, number>;

/** The local ports of `pid`'s TCP connections to `serverPort`. */
function clientPorts(pid: number, serverPort: number): number[] {
  const inodes = new Set<string>();
  for (const entry of Deno.readDirSync(`/proc/${pid}/fd`)) {
    try {
      const link = Deno.readLinkSync(`/proc/${pid}/fd/${entry.name}`);
      const inode = /^socket:\[(\d+)\]$/.exec(link)?.[1];
      if (inode !== undefined) inodes.add(inode);
    } catch {
      // Closed meanwhile.
    }
  }
  const ports: number[] = [];
  for (const table of ["tcp", "tcp6"]) {
    let text = "";
    try {
      text = Deno.readTextFileSync(`/proc/${pid}/net/${table}`);
    } catch {
      continue;
    }
    for (const line of text.split("\n").slice(1)) {
      const fields = line.trim().split(/\s+/);
      if (fields.length < 10 || !inodes.has(fields[9]!)) continue;
      const remote = parseInt(fields[2]!.split(":")[1]!, 16);
      if (remote === serverPort) {
        ports.push(parseInt(fields[1]!.split(":")[1]!, 16));
      }
    }
  }
  return ports;
}

/** The backends serving `pid` now, with their CPU time. */
export async function dbSnapshot(
  sql: ReturnType<typeof postgres>,
  pid: number,
  serverPort = 5432,
): Promise<DbSnapshot> {
  const ports = clientPorts(pid, serverPort);
  const out: DbSnapshot = new Map();
  if (ports.length === 0) return out;
  const rows = await sql`select pid from pg_stat_activity
    where client_port = any(${ports}::int[])`;
  for (const row of rows) {
    const backend = Number(row.pid);
    try {
      out.set(backend, cpuMicros(backend));
    } catch {
      // Ended meanwhile.
    }
  }
  return out;
}

/** The pid of the local `mariadbd` (the bench runs beside its databases). */
function mariadbPid(): number {
  for (const entry of Deno.readDirSync("/proc")) {
    if (!/^\d+$/.test(entry.name)) continue;
    try {
      const comm = Deno.readTextFileSync(`/proc/${entry.name}/comm`).trim();
      if (comm === "mariadbd" || comm === "mysqld") return Number(entry.name);
    } catch {
      // Ended meanwhile.
    }
  }
  throw new Error("no local mariadbd process to read the CPU of");
}

/** The mariadbd threads serving `pid` now, with their CPU time. */
export async function mariaSnapshot(
  conn: Connection,
  pid: number,
  serverPort = 3306,
): Promise<DbSnapshot> {
  const ports = clientPorts(pid, serverPort);
  const out: DbSnapshot = new Map();
  if (ports.length === 0) return out;
  const server = mariadbPid();
  const [rows] = await conn.query(
    "SELECT TID FROM information_schema.PROCESSLIST WHERE HOST IN (?)",
    [ports.map((port) => `127.0.0.1:${port}`)],
  );
  for (const row of rows as { TID: number }[]) {
    try {
      out.set(Number(row.TID), cpuMicros(server, Number(row.TID)));
    } catch {
      // Ended meanwhile.
    }
  }
  return out;
}

/** CPU µs spent between two snapshots (a backend new since: all of it). */
export function dbSpent(before: DbSnapshot, after: DbSnapshot): number {
  let cpu = 0;
  for (const [pid, now] of after) cpu += now - (before.get(pid) ?? 0);
  return cpu;
}
