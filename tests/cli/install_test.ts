/**
 * `deno task install` puts `dbport` and `dbport-mcp` on the PATH with `deno
 * install -g` (DENO_INSTALL_ROOT honoured): `dbport …` runs the CLI with no
 * task line, with the checkout's config and frozen lock, and `client-config`
 * then names `dbport-mcp` alone.
 */

import { assert, assertEquals, assertStringIncludes } from "@std/assert";
import { ROOT } from "../_main.ts";

async function run(
  command: string,
  args: string[],
  env: Record<string, string>,
) {
  const output = await new Deno.Command(command, {
    args,
    cwd: env.CWD ?? ROOT,
    env: { NO_COLOR: "1", ...env },
    stdin: "null",
  }).output();
  return {
    code: output.code,
    out: new TextDecoder().decode(output.stdout),
    err: new TextDecoder().decode(output.stderr),
  };
}

Deno.test("deno task install puts dbport and dbport-mcp on the PATH; dbport runs the CLI and client-config names dbport-mcp", async () => {
  const root = await Deno.makeTempDir({ prefix: "dbport-install-" });
  const home = await Deno.makeTempDir({ prefix: "dbport-install-home-" });
  try {
    const installed = await run(Deno.execPath(), ["task", "install"], {
      DENO_INSTALL_ROOT: root,
      PATH: Deno.env.get("PATH") ?? "",
    });
    assertEquals(installed.code, 0, installed.out + installed.err);
    assertStringIncludes(installed.out, `Installed dbport in ${root}/bin`);
    assertStringIncludes(installed.out, `${root}/bin is not on your PATH`);
    assert(!installed.err.includes("Ignored build scripts"), installed.err);
    const shim = await Deno.readTextFile(`${root}/bin/dbport`);
    assertStringIncludes(shim, "--frozen");
    assertStringIncludes(shim, "--allow-ffi");
    const bridge = await Deno.readTextFile(`${root}/bin/dbport-mcp`);
    assertStringIncludes(bridge, "--allow-net=127.0.0.1");

    const env = {
      DBPORT_HOME: home,
      PATH: `${root}/bin:${Deno.env.get("PATH") ?? ""}`,
      CWD: home,
    };
    // From any directory, no "Task dbport deno run …" line.
    const help = await run(`${root}/bin/dbport`, ["help"], env);
    assertEquals(help.code, 0, help.err);
    assert(help.out.startsWith("dbport 0.1.0"), help.out);
    assertStringIncludes(help.out, "Usage: dbport <command>");
    assertEquals(help.err, "");
    const db = `${home}/shop.db`;
    await Deno.writeFile(db, new Uint8Array());
    const added = await run(
      `${root}/bin/dbport`,
      ["connections", "add", "--name", "Shop", "--url", db],
      env,
    );
    assertEquals(added.code, 0, added.out + added.err);
    assertStringIncludes(added.out, 'Saved connection "Shop"');
    const config = await run(
      `${root}/bin/dbport`,
      ["client-config", "claude-desktop"],
      env,
    );
    assertEquals(config.code, 0, config.err);
    assertStringIncludes(config.out, '"command": "dbport-mcp"');
    assert(!config.out.includes(ROOT), config.out);
  } finally {
    await Deno.remove(root, { recursive: true });
    await Deno.remove(home, { recursive: true });
  }
});
