/**
 * `deno task compile [--target T ...]`: build `dist/dbport-mcp` from
 * `bridge.ts` with `deno compile`, the bridge's permissions baked in and
 * nothing more. `deno compile` needs a `denort` runtime it downloads from
 * dl.deno.land (or `DENORT_BIN`); where that cannot be had, this prints one
 * `SKIP` line naming the reason and exits 0 — never a fake binary.
 */

import { BRIDGE_PERMISSIONS } from "../lib/cli/integration.ts";
import { BRIDGE_EXECUTABLE } from "../lib/base/identity.ts";

const root = new URL("../", import.meta.url).pathname;
const targets: (string | null)[] = [];
for (let i = 0; i < Deno.args.length; i++) {
  if (Deno.args[i] === "--target" && Deno.args[i + 1]) {
    targets.push(Deno.args[++i]!);
  }
}
if (targets.length === 0) targets.push(null);

let status = 0;
for (const target of targets) {
  const output = `${root}dist/${BRIDGE_EXECUTABLE}${
    target === null ? "" : `-${target}`
  }${target?.includes("windows") ? ".exe" : ""}`;
  const args = [
    "compile",
    "--no-check",
    "--output",
    output,
    ...BRIDGE_PERMISSIONS,
    ...(target === null ? [] : ["--target", target]),
    `${root}bridge.ts`,
  ];
  const result = await new Deno.Command(Deno.execPath(), {
    args,
    stdout: "piped",
    stderr: "piped",
  }).output();
  // Colour codes off: deno compile colours its errors.
  const text = new TextDecoder().decode(result.stderr).replace(
    new RegExp(String.fromCharCode(27) + "\\[[0-9;]*m", "g"),
    "",
  );
  if (result.success) {
    // deno-lint-ignore no-console
    console.log(`built ${output}`);
    continue;
  }
  if (/denort|dl\.deno\.land|dns error|download/i.test(text)) {
    const lines = text.split("\n").map((line) => line.trim());
    const url = /https:\/\/\S+denort\S+\.zip/.exec(text)?.[0] ?? "denort";
    const cause = lines.find((line) => /dns error|Connect|refused/.test(line))
      ?.replace(/^\d+: /, "") ??
      lines.find((line) => /error/i.test(line)) ??
      "no detail";
    const reason = `downloading ${url} failed: ${cause}`;
    // deno-lint-ignore no-console
    console.log(
      `SKIP: deno compile could not get its denort runtime for ${
        target ?? Deno.build.target
      } (${reason}); run the bridge with "deno run bridge.ts" or "deno task dbport install-bridge"`,
    );
    continue;
  }
  // deno-lint-ignore no-console
  console.error(text);
  status = 1;
}
Deno.exit(status);
