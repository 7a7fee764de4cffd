/**
 * Editing a small file that several processes change (`connections.json`,
 * `settings.json`): under an exclusive lock file beside it, re-read, changed
 * as a function of the fresh content, replaced atomically. A concurrent editor
 * waits for the lock; it never overwrites what another one saved.
 *
 * The lock is `<file>.lock`, created with O_CREAT|O_EXCL (`createNew`) and
 * holding its owner's PID, the owner's process start time and a nonce. A lock
 * whose owner is gone (no such PID, or the PID now names a process started at
 * another time) is stale and taken over; a lock held by a live process is
 * waited for, up to a bound, then refused with a message naming the lock file
 * and the PID holding it.
 *
 * @module
 */

import { dirname } from "node:path";
import { messageOf } from "../base/message_of.ts";
import { writeFileAtomic } from "./atomic_file.ts";
import { ensureAppDataDir } from "./paths.ts";

/** Who holds a lock, as written in the lock file. */
export interface LockOwner {
  pid: number;
  /** The owner's process start (an opaque, platform-specific stamp), or null. */
  started: string | null;
  /** When the lock was taken (ms since the epoch). */
  at: number;
  nonce: string;
}

/** How long a writer waits for a held lock before it gives up. */
export const LOCK_WAIT_MS = 10_000;
/**
 * A lock file without a readable owner (a writer that died between creating
 * and filling it, or garbage) is stale once it is this old.
 */
export const UNREADABLE_LOCK_STALE_MS = 2_000;

/** A lock held by another live process past the wait. */
export class FileLockBusy extends Error {
  constructor(readonly lockPath: string, readonly owner: LockOwner | null) {
    super(
      `Cannot edit ${lockPath.slice(0, -".lock".length)}: ${
        owner === null
          ? "another process"
          : `another dbport process (PID ${owner.pid})`
      } holds its lock file ${lockPath} and did not release it; ${
        owner === null
          ? "if no dbport command is running, remove that file"
          : `if PID ${owner.pid} is not a dbport command, remove that file`
      } and try again`,
    );
    this.name = "FileLockBusy";
  }
}

/** Options of {@linkcode withFileLock} and {@linkcode editFile}. */
export interface LockOptions {
  /** How long to wait for a held lock (ms); default {@linkcode LOCK_WAIT_MS}. */
  waitMs?: number;
  /**
   * Told the text written, still under the lock: a reader in this process
   * that takes it in here can never take it in after a later writer's.
   */
  saved?: (text: string) => void;
}

/** The lock file that guards `path`. */
export function lockPathOf(path: string): string {
  return `${path}.lock`;
}

/** Run `work` while holding the exclusive lock on `path`. */
export async function withFileLock<T>(
  path: string,
  work: () => Promise<T>,
  options: LockOptions = {},
): Promise<T> {
  const lockPath = lockPathOf(path);
  const owner = await acquire(lockPath, options.waitMs ?? LOCK_WAIT_MS);
  try {
    return await work();
  } finally {
    await release(lockPath, owner);
  }
}

/**
 * Edit `path` under its lock: `change` gets the file's fresh text (null when
 * it does not exist) and returns the new text, or null to leave the file as it
 * is. It may throw to refuse the edit (nothing is written). The new text
 * replaces the file atomically with `mode`. Returns what `change` returned.
 */
export async function editFile(
  path: string,
  change: (text: string | null) => string | null | Promise<string | null>,
  options: LockOptions & { mode?: number } = {},
): Promise<string | null> {
  await ensureAppDataDir(dirname(path));
  return await withFileLock(path, async () => {
    let text: string | null;
    try {
      text = await Deno.readTextFile(path);
    } catch (error) {
      if (!(error instanceof Deno.errors.NotFound)) throw error;
      text = null;
    }
    const next = await change(text);
    if (next !== null) {
      await writeFileAtomic(path, next, options.mode ?? 0o600);
      options.saved?.(next);
    }
    return next;
  }, options);
}

async function acquire(lockPath: string, waitMs: number): Promise<LockOwner> {
  const started = await processStart(Deno.pid);
  const me: LockOwner = {
    pid: Deno.pid,
    started: started === "gone" ? null : started,
    at: Date.now(),
    nonce: crypto.randomUUID(),
  };
  const deadline = Date.now() + waitMs;
  let pause = 5;
  let seen: LockOwner | null = null;
  for (;;) {
    if (await tryCreate(lockPath, me)) return me;
    const held = await readLock(lockPath);
    if (held === "gone") continue;
    seen = held.owner;
    if (await isStale(held)) {
      await breakStale(lockPath, held.text);
      continue;
    }
    if (Date.now() >= deadline) throw new FileLockBusy(lockPath, seen);
    await new Promise((resolve) => setTimeout(resolve, pause));
    pause = Math.min(pause * 2, 100);
  }
}

async function tryCreate(lockPath: string, me: LockOwner): Promise<boolean> {
  let file: Deno.FsFile;
  try {
    file = await Deno.open(lockPath, {
      write: true,
      createNew: true,
      mode: 0o600,
    });
  } catch (error) {
    if (error instanceof Deno.errors.AlreadyExists) return false;
    throw new Error(
      `Cannot lock ${
        lockPath.slice(0, -".lock".length)
      } for editing: cannot create ${lockPath}: ${messageOf(error)}`,
    );
  }
  try {
    const bytes = new TextEncoder().encode(JSON.stringify(me) + "\n");
    let written = 0;
    while (written < bytes.length) {
      written += await file.write(bytes.subarray(written));
    }
  } catch (error) {
    file.close();
    await Deno.remove(lockPath).catch(() => {});
    throw error;
  }
  file.close();
  return true;
}

type HeldLock = { text: string; owner: LockOwner | null; mtime: number };

async function readLock(lockPath: string): Promise<HeldLock | "gone"> {
  try {
    const [text, info] = await Promise.all([
      Deno.readTextFile(lockPath),
      Deno.stat(lockPath),
    ]);
    return {
      text,
      owner: parseOwner(text),
      mtime: info.mtime?.getTime() ?? 0,
    };
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return "gone";
    throw error;
  }
}

function parseOwner(text: string): LockOwner | null {
  try {
    const value = JSON.parse(text);
    if (
      typeof value === "object" && value !== null &&
      Number.isSafeInteger(value.pid) && value.pid > 0 &&
      (value.started === null || typeof value.started === "string") &&
      typeof value.at === "number" && typeof value.nonce === "string"
    ) return value as LockOwner;
  } catch {
    // Garbage, or a lock file its writer has not filled yet.
  }
  return null;
}

async function isStale(held: HeldLock): Promise<boolean> {
  if (held.owner === null) {
    return Date.now() - held.mtime > UNREADABLE_LOCK_STALE_MS;
  }
  const started = await processStart(held.owner.pid);
  if (started === "gone") return true;
  // The same PID, started at another time: the owner is gone and its PID
  // was given to another process.
  return started !== null && held.owner.started !== null &&
    started !== held.owner.started;
}

/**
 * Remove a stale lock, but only the one judged stale: under a second lock
 * (`<lock>.break`), the file is read again and removed only when it still
 * holds the same text, so two writers that both judged it stale never remove
 * the fresh lock one of them has just taken.
 */
async function breakStale(lockPath: string, staleText: string): Promise<void> {
  const breaker = `${lockPath}.break`;
  let file: Deno.FsFile;
  try {
    file = await Deno.open(breaker, { write: true, createNew: true });
  } catch (error) {
    if (!(error instanceof Deno.errors.AlreadyExists)) throw error;
    // Another writer is breaking it; a breaker left by a writer killed in
    // these few lines is cleared once it is old.
    const info = await Deno.stat(breaker).catch(() => null);
    const age = info === null ? 0 : Date.now() - (info.mtime?.getTime() ?? 0);
    if (age > UNREADABLE_LOCK_STALE_MS) {
      await Deno.remove(breaker).catch(() => {});
    }
    await new Promise((resolve) => setTimeout(resolve, 5));
    return;
  }
  file.close();
  try {
    const now = await Deno.readTextFile(lockPath).catch(() => null);
    if (now === staleText) await Deno.remove(lockPath).catch(() => {});
  } finally {
    await Deno.remove(breaker).catch(() => {});
  }
}

async function release(lockPath: string, me: LockOwner): Promise<void> {
  // Only our own lock is removed (one taken over as stale is another's now).
  const held = await readLock(lockPath).catch(() => "gone" as const);
  if (held !== "gone" && held.owner?.nonce === me.nonce) {
    await Deno.remove(lockPath).catch(() => {});
  }
}

/**
 * A stamp of when process `pid` started, "gone" when there is no such
 * process, or null when it is alive but its start cannot be read (then a
 * lock is judged by its PID alone).
 */
export async function processStart(
  pid: number,
): Promise<string | "gone" | null> {
  if (pid !== Deno.pid && !isAlive(pid)) return "gone";
  if (Deno.build.os !== "linux") return null;
  try {
    // Deno lets only --allow-all read another process's /proc files.
    const proc = pid === Deno.pid ? "/proc/self" : `/proc/${pid}`;
    const stat = await Deno.readTextFile(`${proc}/stat`);
    // Field 22 (starttime), counted after the parenthesised command name,
    // which may itself hold spaces and parentheses.
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return `linux:${fields[19]}`;
  } catch (error) {
    return error instanceof Deno.errors.NotFound ? "gone" : null;
  }
}

/** Whether a process `pid` exists (signal 0 is sent to nothing). */
function isAlive(pid: number): boolean {
  try {
    Deno.kill(pid, 0 as unknown as Deno.Signal);
    return true;
  } catch (error) {
    // ESRCH; EPERM (another user's process) or no --allow-run say alive.
    return !(error instanceof Deno.errors.NotFound);
  }
}
