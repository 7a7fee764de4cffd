/**
 * Noticing that a small file changed, within a bounded delay.
 *
 * Polling `stat` is used rather than `Deno.watchFs`: it sees atomic renames,
 * deletions and re-creations alike on every platform, and costs one syscall a
 * tick for a file of a few hundred bytes.
 *
 * @module
 */

/** A running watch; stop it to release its timer. */
export interface FileWatch {
  stop(): void;
}

/** What a file looks like: its text, or null when it does not exist. */
export type FileText = string | null;

/**
 * Call `onChange` with the file's new text (null when it is gone) each time it
 * differs from what was last seen. `initial` is the text the caller already has.
 */
export function watchFile(
  path: string,
  initial: FileText,
  onChange: (text: FileText) => void,
  intervalMs = 250,
): FileWatch {
  let last = initial;
  // What stat said at the last read, and at the last tick. A change is read
  // only once stat has said the same thing twice in a row: an editor that
  // writes in place truncates first, and a read between the truncation and
  // the write would report an empty file (seen in CI).
  let read = "";
  let previous = "";
  let busy = false;
  const stampOf = async (): Promise<string> => {
    try {
      const info = await Deno.stat(path);
      return `${info.mtime?.getTime()}:${info.size}:${info.ino}`;
    } catch (error) {
      if (error instanceof Deno.errors.NotFound) return "gone";
      throw error;
    }
  };
  const tick = async () => {
    if (busy) return;
    busy = true;
    try {
      const now = await stampOf();
      const settled = now === previous;
      previous = now;
      if (!settled || now === read) return;
      let next: FileText;
      try {
        next = now === "gone" ? null : await Deno.readTextFile(path);
      } catch (error) {
        if (!(error instanceof Deno.errors.NotFound)) return;
        next = null;
      }
      // The text is taken only when the file did not change while it was
      // read: a copy older than the file is never applied.
      if (await stampOf() !== now) return;
      read = now;
      if (next !== last) {
        last = next;
        onChange(next);
      }
    } catch {
      // A stat that fails for another reason (permissions) is tried again at
      // the next tick; the last good text stays in force.
    } finally {
      busy = false;
    }
  };
  const timer = setInterval(tick, intervalMs);
  return { stop: () => clearInterval(timer) };
}
