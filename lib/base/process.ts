/**
 * Whether a process runs: the server (a stale handshake) and the stdio
 * bridge (a handshake to trust) ask the same question.
 *
 * @module
 */

/** Whether a process id names a live process (`kill(pid, 0)`). */
export function isProcessAlive(pid: number): boolean {
  try {
    Deno.kill(pid, 0 as unknown as Deno.Signal);
    return true;
  } catch (error) {
    // EPERM: alive but another user's.
    return error instanceof Deno.errors.PermissionDenied;
  }
}
