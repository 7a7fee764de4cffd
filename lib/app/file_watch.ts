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
  let stamp = "";
  let busy = false;
  const tick = async () => {
    if (busy) return;
    busy = true;
    try {
      let next: FileText;
      try {
        const info = await Deno.stat(path);
        const now = `${info.mtime?.getTime()}:${info.size}:${info.ino}`;
        if (now === stamp) return;
        stamp = now;
        next = await Deno.readTextFile(path);
      } catch (error) {
        if (!(error instanceof Deno.errors.NotFound)) return;
        stamp = "";
        next = null;
      }
      if (next !== last) {
        last = next;
        onChange(next);
      }
    } finally {
      busy = false;
    }
  };
  const timer = setInterval(tick, intervalMs);
  return { stop: () => clearInterval(timer) };
}
