// deno-lint-ignore-file no-console
/**
 * `deno task install`: put `dbport` (the server and its CLI, main.ts) and
 * `dbport-mcp` (the stdio bridge) on the PATH with `deno install -g`, each
 * with the permissions its `deno task` has, this checkout's deno.json and
 * its lock file (frozen: what runs is what the lock names). Deno installs
 * into `$DENO_INSTALL_ROOT/bin` (default `~/.deno/bin`); where that is not
 * on the PATH, this says how to add it. Run it again after updating the
 * checkout (the shims keep a copy of deno.json and deno.lock).
 */

import {
  BRIDGE_PERMISSIONS,
  SERVE_PERMISSIONS,
} from "../lib/cli/integration.ts";
import { BRIDGE_EXECUTABLE, SERVICE_NAME } from "../lib/base/identity.ts";

const root = new URL("../", import.meta.url).pathname;

/** The `deno install -g` arguments of one executable. */
export function installArgs(
  name: string,
  permissions: readonly string[],
  entry: string,
): string[] {
  return [
    "install",
    "--global",
    "--force",
    "--name",
    name,
    "--config",
    `${root}deno.json`,
    "--lock",
    `${root}deno.lock`,
    "--frozen",
    ...permissions,
    `${root}${entry}`,
  ];
}

/** Where `deno install -g` puts executables. */
function binDir(): string {
  const home = Deno.env.get("HOME") ?? Deno.env.get("USERPROFILE") ?? "";
  const installRoot = Deno.env.get("DENO_INSTALL_ROOT") ?? `${home}/.deno`;
  return `${installRoot.replace(/[\\/]+$/, "")}/bin`;
}

if (import.meta.main) {
  let status = 0;
  for (
    const [name, permissions, entry] of [
      [SERVICE_NAME, SERVE_PERMISSIONS, "main.ts"],
      [BRIDGE_EXECUTABLE, BRIDGE_PERMISSIONS, "bridge.ts"],
    ] as const
  ) {
    const result = await new Deno.Command(Deno.execPath(), {
      args: installArgs(name, permissions, entry),
      stdout: "piped",
      stderr: "piped",
      env: { NO_COLOR: "1" },
    }).output();
    if (!result.success) {
      console.error(
        `Cannot install ${name}: ${new TextDecoder().decode(result.stderr)}`,
      );
      status = 1;
      continue;
    }
    // deno install -g copies deno.json beside the shim (bin/.NAME/), but not
    // the lock it names: copied here, so --frozen checks the checkout's lock.
    await Deno.copyFile(
      `${root}deno.lock`,
      `${binDir()}/.${name}/deno.lock`,
    );
    console.log(`Installed ${name} in ${binDir()}`);
  }
  if (status !== 0) Deno.exit(status);
  const separator = Deno.build.os === "windows" ? ";" : ":";
  const onPath = (Deno.env.get("PATH") ?? "").split(separator).some((dir) =>
    dir.replace(/[\\/]+$/, "") === binDir()
  );
  console.log(
    onPath
      ? `Run "${SERVICE_NAME} serve" to start the server, "${SERVICE_NAME} help" for the rest.`
      : `${binDir()} is not on your PATH: add it (e.g. export PATH="${binDir()}:$PATH" in your shell's profile), then run "${SERVICE_NAME} serve".`,
  );
}
