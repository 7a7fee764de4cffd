/**
 * Another program holding a SQLite file's write lock (`BEGIN IMMEDIATE` from
 * Python's sqlite3), for tests of what waits for it. Use with `await using`.
 */

import { assertEquals } from "@std/assert";

/** Hold the write lock on `path` for `seconds` (or until disposed). */
export async function holdWriteLock(
  path: string,
  seconds: number,
): Promise<AsyncDisposable> {
  const child = new Deno.Command("python3", {
    args: [
      "-c",
      "import sqlite3, sys, time\n" +
      "c = sqlite3.connect(sys.argv[1], isolation_level=None)\n" +
      "c.execute('BEGIN IMMEDIATE')\n" +
      "print('locked', flush=True)\n" +
      "time.sleep(float(sys.argv[2]))\n" +
      "c.execute('ROLLBACK')\n",
      path,
      String(seconds),
    ],
    stdout: "piped",
    stderr: "inherit",
  }).spawn();
  const reader = child.stdout.getReader();
  const { value } = await reader.read();
  assertEquals(new TextDecoder().decode(value).trim(), "locked");
  reader.releaseLock();
  return {
    async [Symbol.asyncDispose]() {
      try {
        child.kill();
      } catch { /* already ended */ }
      await child.stdout.cancel().catch(() => {});
      await child.status;
    },
  };
}
