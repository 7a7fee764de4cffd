/**
 * Writing a file so that readers see the old content or the new, never half.
 *
 * @module
 */

/**
 * Write `text` to `path` atomically: a hidden temp file beside it (created
 * with `mode`), then a rename over the target. Rename replaces a planted
 * symlink instead of following it.
 */
export async function writeFileAtomic(
  path: string,
  text: string,
  mode = 0o600,
): Promise<void> {
  const slash = Math.max(path.lastIndexOf("/"), path.lastIndexOf("\\"));
  const dir = path.slice(0, slash + 1);
  const name = path.slice(slash + 1);
  const temp = `${dir}.${name}.${crypto.randomUUID()}`;
  try {
    await Deno.writeTextFile(temp, text, { mode, createNew: true });
    if (Deno.build.os !== "windows") await Deno.chmod(temp, mode);
    await Deno.rename(temp, path);
  } catch (error) {
    await Deno.remove(temp).catch(() => {});
    throw error;
  }
}
