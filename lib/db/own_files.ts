/**
 * Files that are the app's own state and never a connection: the state
 * database holds the token hashes, the activity log and every client's query
 * history, so a SQLite connection naming it (by its path, a symbolic link or
 * a hard link) would hand them to an AI client. Compared by identity (device
 * and inode, after links), not by name.
 *
 * @module
 */

/** Whether `path` is one of `own` (a file that does not exist is none). */
export async function isOwnFile(
  path: string,
  own: readonly string[],
): Promise<boolean> {
  const target = await identity(path);
  if (target === null) return false;
  for (const file of own) {
    if ((await identity(file)) === target) return true;
  }
  return false;
}

async function identity(path: string): Promise<string | null> {
  try {
    const info = await Deno.stat(path);
    return info.ino === null ? null : `${info.dev}:${info.ino}`;
  } catch {
    return null;
  }
}
