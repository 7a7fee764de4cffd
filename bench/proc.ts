/**
 * What the kernel says about a process: CPU time and peak resident memory,
 * from /proc (Linux; the harness runs with --allow-all, which Deno needs to
 * read /proc).
 *
 * @module
 */

/** Clock ticks per second of /proc/<pid>/stat (USER_HZ, 100 on Linux). */
const TICKS_PER_SECOND = 100;

/** User + system CPU time of `pid` (or its thread `tid`), in microseconds. */
export function cpuMicros(pid: number, tid?: number): number {
  const stat = Deno.readTextFileSync(
    tid === undefined ? `/proc/${pid}/stat` : `/proc/${pid}/task/${tid}/stat`,
  );
  // Fields after the command name, which is in parentheses and may hold spaces.
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  const utime = Number(fields[11]);
  const stime = Number(fields[12]);
  return ((utime + stime) * 1_000_000) / TICKS_PER_SECOND;
}

/** Peak resident set size of `pid` (VmHWM), in MiB. */
export function peakRssMiB(pid: number): number {
  const status = Deno.readTextFileSync(`/proc/${pid}/status`);
  const line = status.split("\n").find((l) => l.startsWith("VmHWM:"));
  if (line === undefined) throw new Error(`no VmHWM in /proc/${pid}/status`);
  return Number(line.replace(/\D+/g, "")) / 1024;
}

/** This process's own CPU time, in microseconds. */
export function ownCpuMicros(): number {
  return cpuMicros(Deno.pid);
}

/** Resident set size of `pid` now (VmRSS), in MiB. */
export function rssMiB(pid: number): number {
  const status = Deno.readTextFileSync(`/proc/${pid}/status`);
  const line = status.split("\n").find((l) => l.startsWith("VmRSS:"));
  if (line === undefined) throw new Error(`no VmRSS in /proc/${pid}/status`);
  return Number(line.replace(/\D+/g, "")) / 1024;
}
