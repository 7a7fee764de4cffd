import { assertEquals } from "@std/assert";
import { writeFileAtomic } from "../../lib/app/atomic_file.ts";

Deno.test("writeFileAtomic() replaces the file with the given mode and leaves no temp file", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const path = `${dir}/f.json`;
    await Deno.writeTextFile(path, "old", { mode: 0o644 });
    await writeFileAtomic(path, "new", 0o600);
    assertEquals(await Deno.readTextFile(path), "new");
    assertEquals((await Deno.stat(path)).mode! & 0o777, 0o600);
    assertEquals([...Deno.readDirSync(dir)].map((e) => e.name), ["f.json"]);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("writeFileAtomic() replaces a planted symlink instead of following it", async () => {
  const dir = await Deno.makeTempDir();
  try {
    await Deno.writeTextFile(`${dir}/victim`, "keep");
    await Deno.symlink(`${dir}/victim`, `${dir}/f.json`);
    await writeFileAtomic(`${dir}/f.json`, "new");
    assertEquals(await Deno.readTextFile(`${dir}/victim`), "keep");
    assertEquals((await Deno.lstat(`${dir}/f.json`)).isSymlink, false);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
