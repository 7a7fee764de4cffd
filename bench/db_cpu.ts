/**
 * What a client process costs its PostgreSQL server: the CPU time, from
 * /proc, of the backends serving its connections (found from the process's
 * own sockets to the server's port, then `pg_stat_activity.client_port`).
 * Only this process's backends are counted: the server is shared.
 *
 * @module
 */

import type postgres from "postgres";
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

/** CPU µs spent between two snapshots (a backend new since: all of it). */
export function dbSpent(before: DbSnapshot, after: DbSnapshot): number {
  let cpu = 0;
  for (const [pid, now] of after) cpu += now - (before.get(pid) ?? 0);
  return cpu;
}
