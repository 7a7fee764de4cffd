/**
 * The handshake file's life on disk: written after the port is bound, replaced
 * when stale, removed at shutdown only by the process that wrote it.
 *
 * @module
 */

import { type Handshake, parseHandshake } from "../protocol/handshake.ts";
import { isProcessAlive } from "../base/process.ts";
import { writeFileAtomic } from "./atomic_file.ts";

export { isProcessAlive };

/** What was found at the handshake path before this server wrote its own. */
export type PreviousHandshake =
  | { kind: "none" }
  | { kind: "stale"; pid: number }
  | { kind: "unreadable"; problem: string }
  | { kind: "live"; pid: number };

/** Inspect an existing handshake file (for the start-up message). */
export async function inspectHandshake(
  path: string,
): Promise<PreviousHandshake> {
  let text: string;
  try {
    text = await Deno.readTextFile(path);
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return { kind: "none" };
    return { kind: "unreadable", problem: String(error) };
  }
  const parsed = parseHandshake(text);
  if (!parsed.ok) return { kind: "unreadable", problem: parsed.problem };
  const { pid } = parsed.handshake;
  if (pid !== Deno.pid && isProcessAlive(pid)) return { kind: "live", pid };
  return { kind: "stale", pid };
}

/** Write the handshake atomically, file 0600. */
export async function writeHandshake(
  path: string,
  handshake: Handshake,
): Promise<void> {
  await writeFileAtomic(path, JSON.stringify(handshake, null, 2) + "\n", 0o600);
}

/**
 * Remove the handshake only if it still names this pid and instance: another
 * server may have started since and written its own.
 */
export async function removeHandshakeIfOurs(
  path: string,
  instanceId: string,
): Promise<boolean> {
  let text: string;
  try {
    text = await Deno.readTextFile(path);
  } catch {
    return false;
  }
  const parsed = parseHandshake(text);
  if (
    !parsed.ok || parsed.handshake.pid !== Deno.pid ||
    parsed.handshake.instanceId !== instanceId
  ) return false;
  await Deno.remove(path).catch(() => {});
  return true;
}
