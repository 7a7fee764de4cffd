import { assertEquals } from "@std/assert";
import { watchFile } from "../../lib/app/file_watch.ts";
import { writeFileAtomic } from "../../lib/app/atomic_file.ts";
import { waitUntil } from "../_wait.ts";
import { inAppDir } from "../../lib/app/paths.ts";
import { CONNECTIONS_FILE } from "../../lib/base/identity.ts";
import { savedConnection, serverWith } from "../_connections.ts";

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
    // rewrite of the same text before it never was. Five of the watch's
    // 20 ms polls look at the rewrite first.
    await new Promise((resolve) => setTimeout(resolve, 100));
    await Deno.writeTextFile(path, "other");
    await waitUntil("the changed text to be seen", () => seen.length > 0);
    assertEquals(seen, ["other"]);
  } finally {
    watch.stop();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("watchFile() under rapid atomic replacements reports only whole texts, never an older one after a newer", async () => {
  const dir = await Deno.makeTempDir();
  const path = `${dir}/c.json`;
  const seen: number[] = [];
  const watch = watchFile(path, null, (text) => {
    // A torn read would not parse.
    seen.push(JSON.parse(text!).n);
  }, 5);
  try {
    const padding = "x".repeat(200_000);
    for (let n = 1; n <= 60; n++) {
      await writeFileAtomic(path, JSON.stringify({ n, padding }));
      // The writer's own uneven pace (0-6 ms) against the watch's 5 ms poll.
      await new Promise((resolve) => setTimeout(resolve, n % 7));
    }
    await waitUntil("the last text to be seen", () => seen.at(-1) === 60);
    for (let i = 1; i < seen.length; i++) {
      if (seen[i]! <= seen[i - 1]!) {
        throw new Error(`${seen[i]} reported after ${seen[i - 1]}`);
      }
    }
  } finally {
    watch.stop();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("a running server follows connections.json edited by hand and never writes it back", async () => {
  const sqlite = { engine: "sqlite" as const, url: "/tmp/dbport-hand.db" };
  await using t = await serverWith([savedConnection(sqlite, "First")]);
  const path = inAppDir(t.home, CONNECTIONS_FILE);
  for (const names of [["A"], ["A", "B"], ["B"], ["C", "D", "E"]]) {
    const text = JSON.stringify({
      connections: names.map((name) => savedConnection(sqlite, name)),
    });
    // By hand: in place, as an editor that truncates and writes does.
    await Deno.writeTextFile(path, text);
    await waitUntil(
      `the server to take in ${names.join(", ")}`,
      () =>
        t.server.connections.all().map((c) => c.name).join() === names.join(),
    );
    const before = await Deno.stat(path);
    // Nothing to wait on for a write that must never come: the server's
    // 250 ms watch (file_watch.ts) polls twice more meanwhile.
    await new Promise((resolve) => setTimeout(resolve, 700));
    const after = await Deno.stat(path);
    assertEquals(await Deno.readTextFile(path), text);
    assertEquals(
      [after.ino, after.mtime?.getTime()],
      [before.ino, before.mtime?.getTime()],
    );
  }
  // A malformed hand edit is kept in the file and ignored by the server.
  await Deno.writeTextFile(path, '{"connections": [');
  // Three of the server's 250 ms watch polls (file_watch.ts) read it.
  await new Promise((resolve) => setTimeout(resolve, 800));
  assertEquals(await Deno.readTextFile(path), '{"connections": [');
  assertEquals(t.server.connections.all().map((c) => c.name), ["C", "D", "E"]);
});
