/**
 * `lib/protocol/` is pure and shared with the stdio bridge, which may import
 * only it, `lib/base/` and web/Deno APIs: no npm, no node:, nothing else.
 */
import { assert, assertEquals } from "@std/assert";

Deno.test("lib/protocol/ imports nothing but its own files and lib/base/, and calls no Deno API", async () => {
  const dir = new URL("../../lib/protocol/", import.meta.url);
  const offenders: string[] = [];
  for await (const entry of Deno.readDir(dir)) {
    if (!entry.name.endsWith(".ts")) continue;
    const text = await Deno.readTextFile(new URL(entry.name, dir));
    for (
      const match of text.matchAll(
        /(?:import|export)[^"']*from\s+["']([^"']+)["']/g,
      )
    ) {
      const specifier = match[1]!;
      if (!/^(\.|\.\.\/base)\/[a-z0-9_]+\.ts$/.test(specifier)) {
        offenders.push(`${entry.name}: ${specifier}`);
      }
    }
    // The process, the environment and the file system belong to lib/base/.
    const code = text.replace(/\/\*[\s\S]*?\*\/|\/\/.*$/gm, "");
    if (/\bDeno\./.test(code)) offenders.push(`${entry.name}: Deno API`);
  }
  assertEquals(offenders, []);
});

Deno.test("bridge.ts reaches only lib/protocol/, lib/base/ and lib/bridge/: no npm, no node:, no server code", async () => {
  const root = new URL("../../", import.meta.url);
  const seen = new Set<string>();
  const offenders: string[] = [];
  const visit = async (url: URL) => {
    if (seen.has(url.href)) return;
    seen.add(url.href);
    const path = url.href.slice(root.href.length);
    if (
      path !== "bridge.ts" &&
      !/^lib\/(protocol|base|bridge)\/[a-z0-9_]+\.ts$/.test(path)
    ) {
      offenders.push(path);
      return;
    }
    const text = await Deno.readTextFile(url);
    for (
      const match of text.matchAll(
        /(?:import|export)[^"';]*from\s+["']([^"']+)["']/g,
      )
    ) {
      const specifier = match[1]!;
      if (!specifier.startsWith(".")) {
        offenders.push(`${path}: ${specifier}`);
        continue;
      }
      await visit(new URL(specifier, url));
    }
  };
  await visit(new URL("bridge.ts", root));
  assertEquals(offenders, []);
  // lib/bridge/ itself never reaches back into the server or the app.
  assert([...seen].some((href) => href.includes("/lib/bridge/")));
});
