import { assert, assertEquals } from "@std/assert";

Deno.test("deno task compile builds dist/dbport-mcp, or prints one SKIP line naming why", async () => {
  const script = new URL("../../scripts/compile.ts", import.meta.url).pathname;
  const output = await new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "--allow-read",
      "--allow-write",
      "--allow-run",
      "--allow-env",
      script,
    ],
    stdout: "piped",
    stderr: "piped",
  }).output();
  const lines = new TextDecoder().decode(output.stdout).trim().split("\n");
  assertEquals(output.code, 0, new TextDecoder().decode(output.stderr));
  assertEquals(lines.length, 1, lines.join("\n"));
  const [line] = lines;
  if (line!.startsWith("SKIP: ")) {
    // Never a fake binary.
    assert(/denort/.test(line!), line);
    const dist = new URL("../../dist/dbport-mcp", import.meta.url).pathname;
    assertEquals(await Deno.stat(dist).then(() => true, () => false), false);
  } else {
    assert(line!.startsWith("built "), line);
  }
});
