/**
 * The app's own state files are never a connection's file, by identity:
 * the path itself, a symbolic link to it or a hard link all count.
 */

import { assertEquals } from "@std/assert";
import { isOwnFile } from "../../lib/db/own_files.ts";

Deno.test("isOwnFile knows a state file by its path, a symbolic link and a hard link", async () => {
  const dir = await Deno.makeTempDir({ prefix: "dbport-own-" });
  try {
    const state = `${dir}/state.db`;
    const other = `${dir}/shop.db`;
    await Deno.writeTextFile(state, "state");
    await Deno.writeTextFile(other, "shop");
    await Deno.symlink(state, `${dir}/via-symlink.db`);
    await Deno.link(state, `${dir}/via-hardlink.db`);
    const own = [state];
    assertEquals(await isOwnFile(state, own), true);
    assertEquals(await isOwnFile(`${dir}/./state.db`, own), true);
    assertEquals(await isOwnFile(`${dir}/via-symlink.db`, own), true);
    assertEquals(await isOwnFile(`${dir}/via-hardlink.db`, own), true);
    assertEquals(await isOwnFile(other, own), false);
    assertEquals(await isOwnFile(`${dir}/missing.db`, own), false);
    assertEquals(await isOwnFile(other, [`${dir}/missing-state.db`]), false);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
