import { assertEquals } from "@std/assert";
import { watchFile } from "../../lib/app/file_watch.ts";
import { writeFileAtomic } from "../../lib/app/atomic_file.ts";
import { sleep } from "../_catalog.ts";

Deno.test("watchFile() reports changes, atomic replacements and deletion", async () => {
  const dir = await Deno.makeTempDir();
  const path = `${dir}/settings.json`;
  const seen: (string | null)[] = [];
  const watch = watchFile(path, null, (text) => seen.push(text), 20);
  try {
    await Deno.writeTextFile(path, "a");
    await sleep(120);
    await writeFileAtomic(path, "b");
    await sleep(120);
    await Deno.remove(path);
    await sleep(120);
    assertEquals(seen, ["a", "b", null]);
  } finally {
    watch.stop();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("watchFile() stays quiet when the text is unchanged", async () => {
  const dir = await Deno.makeTempDir();
  const path = `${dir}/s.json`;
  await Deno.writeTextFile(path, "same");
  const seen: (string | null)[] = [];
  const watch = watchFile(path, "same", (text) => seen.push(text), 20);
  try {
    await sleep(60);
    await Deno.writeTextFile(path, "same");
    await sleep(100);
    assertEquals(seen, []);
  } finally {
    watch.stop();
    await Deno.remove(dir, { recursive: true });
  }
});
