/**
 * `deno task test:unit` / `deno task test:e2e`: one tier of tests/tiers.ts,
 * with any further arguments passed on to `deno test` (`--filter`, say).
 * The unit tier runs in parallel with the databases' ports denied and `CI`
 * set, so a test that needs a database fails there instead of skipping.
 *
 * @module
 */

import { testFiles, tierOf, tierRun } from "../tests/tiers.ts";

const [tier, ...rest] = Deno.args;
if (tier !== "unit" && tier !== "e2e") {
  throw new Error(
    `test_tier: name a tier, "unit" or "e2e" (got ${JSON.stringify(tier)})`,
  );
}
const root = new URL("../", import.meta.url);
const files = (await testFiles(root)).filter((path) => tierOf(path) === tier);
const { flags, env } = tierRun(tier);
const { code } = await new Deno.Command(Deno.execPath(), {
  args: [
    "test",
    "--config",
    "deno.dev.json",
    "--no-prompt",
    ...flags,
    ...rest,
    ...files,
  ],
  cwd: root,
  env,
  stdin: "inherit",
  stdout: "inherit",
  stderr: "inherit",
}).spawn().status;
Deno.exit(code);
