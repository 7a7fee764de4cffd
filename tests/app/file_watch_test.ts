import { assertEquals } from "@std/assert";
import { watchFile } from "../../lib/app/file_watch.ts";
import { writeFileAtomic } from "../../lib/app/atomic_file.ts";
import { waitUntil } from "../_wait.ts";

Deno.test("watchFile() reports changes, atomic replacements and deletion", async () => {
  const dir = await Deno.makeTempDir();
  const path = `${dir}/settings.json`;
  const seen: (string | null)[] = [];
  const watch = watchFile(path, null, (text) => seen.push(text), 20);
  try {
    await Deno.writeTextFile(path, "a");
    await waitUntil("the write to be seen", () => seen.length === 1);
    await writeFileAtomic(path, "b");
    await waitUntil(
      "the atomic replacement to be seen",
      () => seen.length === 2,
    );
    await Deno.remove(path);
    await waitUntil("the deletion to be seen", () => seen.length === 3);
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
    await Deno.writeTextFile(path, "same");
    // A later change is reported; that it is the first report shows the
    // rewrite of the same text before it never was.
    await new Promise((resolve) => setTimeout(resolve, 100));
    await Deno.writeTextFile(path, "other");
    await waitUntil("the changed text to be seen", () => seen.length > 0);
    assertEquals(seen, ["other"]);
  } finally {
    watch.stop();
    await Deno.remove(dir, { recursive: true });
  }
});
