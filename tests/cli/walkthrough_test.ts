/**
 * What a newcomer typed in the issue-37 walkthrough (a fresh clone, a fresh
 * HOME, the README literally) and tripped over: each as a subprocess with a
 * temp app directory.
 */

import { assertEquals, assertStringIncludes } from "@std/assert";
import { mainArgs } from "../_main.ts";

async function dbport(home: string, ...args: string[]) {
  const output = await new Deno.Command(Deno.execPath(), {
    args: mainArgs(...args),
    env: { DBPORT_HOME: home, NO_COLOR: "1" },
    stdin: "null",
  }).output();
  return {
    code: output.code,
    out: new TextDecoder().decode(output.stdout),
    err: new TextDecoder().decode(output.stderr),
  };
}

Deno.test("dbport --help and -h print the help and exit 0, as dbport help does", async () => {
  const home = await Deno.makeTempDir({ prefix: "dbport-walk-" });
  try {
    for (const flag of ["--help", "-h", "help"]) {
      const r = await dbport(home, flag);
      assertEquals(r.code, 0, `${flag}: ${r.err}`);
      assertEquals(r.err, "", flag);
      assertStringIncludes(r.out, "dbport <command>");
      assertStringIncludes(r.out, "Commands:");
    }
    const unknown = await dbport(home, "--nope");
    assertEquals(unknown.code, 2);
    assertStringIncludes(unknown.err, 'Unknown command "--nope"');
    assertStringIncludes(unknown.out, "Commands:");
  } finally {
    await Deno.remove(home, { recursive: true });
  }
});

Deno.test("a negative number after a flag reaches the flag's own check, not parseArgs' 'ambiguous'", async () => {
  const home = await Deno.makeTempDir({ prefix: "dbport-walk-" });
  try {
    const made = await dbport(
      home,
      "tokens",
      "create",
      "--name",
      "Agent",
      "--level",
      "readOnly",
    );
    assertEquals(made.code, 0, made.err);
    const r = await dbport(
      home,
      "tokens",
      "set",
      "Agent",
      "--max-calls-per-minute",
      "-1",
    );
    assertEquals(r.code, 2, r.out + r.err);
    assertEquals(r.err.includes("ambiguous"), false, r.err);
    assertStringIncludes(r.err, "--max-calls-per-minute");
    assertStringIncludes(r.err, '"-1"');
  } finally {
    await Deno.remove(home, { recursive: true });
  }
});
