/**
 * `deno task dbport connections` as the owner uses it: errors that say what
 * is wrong (host, port, database, user — never the password), `add` that
 * tests what it saved, and passwords kept off the command line.
 */

import { assert, assertEquals, assertStringIncludes } from "@std/assert";
import { loadConnections } from "../../lib/app/connections.ts";
import { POSTGRES_URL } from "../_db.ts";
import { mainArgs } from "../_main.ts";

async function dbport(
  home: string,
  args: string[],
  stdin?: string,
): Promise<{ code: number; out: string; err: string }> {
  const child = new Deno.Command(Deno.execPath(), {
    args: mainArgs("connections", ...args),
    env: { DBPORT_HOME: home, NO_COLOR: "1" },
    stdin: stdin === undefined ? "null" : "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  if (stdin !== undefined) {
    const writer = child.stdin.getWriter();
    await writer.write(new TextEncoder().encode(stdin));
    await writer.close();
  }
  const { code, stdout, stderr } = await child.output();
  return {
    code,
    out: new TextDecoder().decode(stdout),
    err: new TextDecoder().decode(stderr),
  };
}

Deno.test("connections add tests what it saved, and test shows the owner host, port, database and user", async () => {
  const home = await Deno.makeTempDir({ prefix: "dbport-cli-" });
  try {
    const url = new URL(POSTGRES_URL);
    const added = await dbport(home, [
      "add",
      "--name",
      "Local",
      "--driver",
      "postgres",
      "--url",
      POSTGRES_URL,
    ]);
    assertEquals(added.code, 0, added.err);
    assertStringIncludes(
      added.out,
      `connected to ${url.username}@${url.hostname}:`,
    );
    assertStringIncludes(added.out, "PostgreSQL");

    // A database that does not exist, on a port nobody listens on: named.
    const wrongDb = new URL(POSTGRES_URL);
    wrongDb.pathname = "/no_such_database_here";
    const missing = await dbport(home, [
      "add",
      "--name",
      "Missing",
      "--driver",
      "postgres",
      "--url",
      wrongDb.toString(),
      "--password-stdin",
      "--save-anyway",
    ], "s3cret-pass\n");
    // Saved as asked (exit 0), with a warning that it does not connect.
    assertEquals(missing.code, 0, missing.err);
    assertStringIncludes(missing.err, "Warning: it does not connect yet");
    assertStringIncludes(
      missing.err,
      'database "no_such_database_here" does not exist',
    );
    assert(!(missing.out + missing.err).includes("s3cret-pass"));
    assert(!missing.err.includes("[redacted]:[redacted]"), missing.err);

    const refused = await dbport(home, [
      "add",
      "--name",
      "Nobody",
      "--driver",
      "mysql",
      "--url",
      "mysql://someone@127.0.0.1:1/shop",
      "--no-test",
    ]);
    assertEquals(refused.code, 0);
    assertEquals(refused.err, "");
    const tested = await dbport(home, ["test", "Nobody"]);
    assertEquals(tested.code, 1);
    assertStringIncludes(tested.err, "someone@127.0.0.1:1/shop");
    assertStringIncludes(tested.err, "ECONNREFUSED 127.0.0.1:1");

    // The password from stdin was stored, not echoed.
    const saved = await loadConnections(`${home}/connections.json`);
    assert(saved.ok);
    const stored = saved.connections.find((c) => c.name === "Missing");
    assertEquals(stored?.password, "s3cret-pass");

    // --password with no value and no terminal asks for --password-stdin.
    const bare = await dbport(home, ["set", "Missing", "--password"]);
    assertEquals(bare.code, 2);
    assertStringIncludes(bare.err, "--password-stdin");
  } finally {
    await Deno.remove(home, { recursive: true });
  }
});

Deno.test("connections set --max-estimated-rows/--max-estimated-cost set, check and remove the plan limits", async () => {
  const home = await Deno.makeTempDir({ prefix: "dbport-cli-" });
  try {
    const db = `${home}/plan.db`;
    const added = await dbport(home, [
      "add",
      "--name",
      "Plan",
      "--url",
      db,
      "--no-test",
    ]);
    assertEquals(added.code, 0, added.err);
    const set = await dbport(home, [
      "set",
      "Plan",
      "--max-estimated-rows",
      "100_000",
    ]);
    assertEquals(set.code, 0, set.err);
    const path = `${home}/connections.json`;
    const saved = async () => {
      const loaded = await loadConnections(path);
      assert(loaded.ok);
      return loaded.connections[0]!;
    };
    assertEquals((await saved()).maxEstimatedRows, 100_000);
    const cost = await dbport(home, [
      "set",
      "Plan",
      "--max-estimated-cost",
      "5",
    ]);
    assertEquals(cost.code, 2, cost.out);
    assertStringIncludes(cost.err, "does not apply to SQLite");
    const bad = await dbport(home, [
      "set",
      "Plan",
      "--max-estimated-rows",
      "0",
    ]);
    assertStringIncludes(bad.err, "must be a positive whole number of rows");
    const off = await dbport(home, [
      "set",
      "Plan",
      "--max-estimated-rows",
      "off",
    ]);
    assertEquals(off.code, 0, off.err);
    assertEquals((await saved()).maxEstimatedRows, undefined);
  } finally {
    await Deno.remove(home, { recursive: true });
  }
});
