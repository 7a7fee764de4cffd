/**
 * `deno task test:unit` / `deno task test:e2e`: one tier of tests/tiers.ts,
 * with any further arguments passed on to `deno test` (`--filter`, say).
 * The unit tier runs in parallel with the databases' ports denied and `CI`
 * set, so a test that needs a database fails there instead of skipping.
 *
 * @module
 */

import { testFiles, tierOf } from "../tests/tiers.ts";

const [tier, ...rest] = Deno.args;
if (tier !== "unit" && tier !== "e2e") {
  throw new Error(
    `test_tier: name a tier, "unit" or "e2e" (got ${JSON.stringify(tier)})`,
  );
}
const root = new URL("../", import.meta.url);
const files = (await testFiles(root)).filter((path) => tierOf(path) === tier);
const databases = ["127.0.0.1", "localhost", "[::1]"].flatMap((host) => [
  `${host}:5432`,
  `${host}:3306`,
]);
const flags = tier === "unit"
  ? ["--allow-all", `--deny-net=${databases.join(",")}`, "--parallel"]
  : ["--allow-all"];
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
  // Under CI a test whose database cannot be reached fails instead of being
  // skipped: with the ports denied, a unit test that needs one fails.
  ...(tier === "unit" ? { env: { CI: "1" } } : {}),
  stdin: "inherit",
  stdout: "inherit",
  stderr: "inherit",
}).spawn().status;
Deno.exit(code);
