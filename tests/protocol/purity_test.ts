/**
 * `lib/protocol/` is pure and shared with the stdio bridge, which may import
 * only it and web/Deno APIs: no npm, no node:, nothing outside the folder.
 */
import { assertEquals } from "@std/assert";

Deno.test("lib/protocol/ imports nothing but its own files", async () => {
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
      if (!/^\.\/[a-z0-9_]+\.ts$/.test(specifier)) {
        offenders.push(`${entry.name}: ${specifier}`);
      }
    }
  }
  assertEquals(offenders, []);
});
