/**
 * Where the app keeps its files (resolved in `lib/base/app_dir.ts`, which
 * the stdio bridge shares).
 *
 * @module
 */

export { appDataDir, type EnvLookup, inAppDir } from "../base/app_dir.ts";

/** Create the app data directory (0700, re-applied because of the umask). */
export async function ensureAppDataDir(dir: string): Promise<void> {
  await Deno.mkdir(dir, { recursive: true, mode: 0o700 });
  if (Deno.build.os !== "windows") await Deno.chmod(dir, 0o700);
}
