/**
 * A new SQLite database for `connections add`: a local path that does not
 * exist yet, in a directory that does, is created there as an empty
 * database file (0600) by the user's own command, before the connection's
 * test.
 *
 * Why at `add` and not at the first write: the driver keeps refusing a
 * missing file (lib/db/sqlite/sqlite.ts), so a database that was moved or deleted
 * is reported, never silently replaced by an empty one; and no AI request,
 * read or approved write, ever creates a file. A connection under Safe Mode
 * `readOnly` could never be written, so no empty file is made for it.
 *
 * @module
 */

import { dirname, isAbsolute, resolve } from "node:path";
import { sqlitePath } from "../db/target.ts";
import { messageOf } from "../base/message_of.ts";

/** What `add` found about a SQLite URL's file. */
export type NewSqliteFile =
  /** Nothing to do: not a local path, the file exists, or its directory does not (the test says so). */
  | { kind: "none" }
  /** Made now, empty: `path` is absolute; remove it with `undo` if nothing is saved. */
  | { kind: "created"; path: string; undo(): Promise<void> }
  /** Not made, and why (the connection is not saved). */
  | { kind: "refused"; message: string };

/** Create the SQLite file `url` names when it is new and may be made. */
export async function createNewSqliteFile(
  url: string,
  safeMode: string,
  options: { absoluteOnly?: boolean } = {},
): Promise<NewSqliteFile> {
  const path = sqlitePath(url);
  // A remote libSQL URL, or a file: URL that opens read-only: not ours to make.
  if (path === null || path === "" || /[?&]mode=ro\b/i.test(url)) {
    return { kind: "none" };
  }
  // The console's form: a relative path would be relative to wherever the
  // server happens to run, not to anything the user sees.
  if (options.absoluteOnly === true && !isAbsolute(path)) {
    return { kind: "none" };
  }
  const absolute = resolve(path);
  if (await exists(absolute)) return { kind: "none" };
  if (!(await isDirectory(dirname(absolute)))) return { kind: "none" };
  if (safeMode === "readOnly") {
    return {
      kind: "refused",
      message:
        `the SQLite file ${absolute} does not exist, and under Safe Mode readOnly it could never be written: create the database first, or add it with another --safe-mode. Nothing was saved.`,
    };
  }
  try {
    // createNew: never truncates a file that appeared in the meantime.
    await Deno.writeFile(absolute, new Uint8Array(), {
      createNew: true,
      mode: 0o600,
    });
  } catch (error) {
    return {
      kind: "refused",
      message: `cannot create the SQLite file ${absolute}: ${
        messageOf(error)
      }. Nothing was saved.`,
    };
  }
  return {
    kind: "created",
    path: absolute,
    async undo() {
      // Only the empty file made here: never one that has data by now.
      const info = await Deno.stat(absolute).catch(() => null);
      if (info?.isFile && info.size === 0) {
        await Deno.remove(absolute).catch(() => {});
      }
    },
  };
}

async function exists(path: string): Promise<boolean> {
  try {
    await Deno.lstat(path);
    return true;
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return false;
    // Unreadable or otherwise odd: leave it to the connection's test.
    return true;
  }
}

async function isDirectory(path: string): Promise<boolean> {
  try {
    return (await Deno.stat(path)).isDirectory;
  } catch {
    return false;
  }
}
