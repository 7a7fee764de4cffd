/**
 * `deno task dbport connections add` in a subprocess, as a user runs it (the
 * concurrent-edit tests start several at once).
 *
 * @module
 */

import { mainArgs } from "./_main.ts";

/** `deno task dbport connections add` of a SQLite connection, no probe. */
export function addConnection(
  home: string,
  name: string,
): Promise<Deno.CommandOutput> {
  return new Deno.Command(Deno.execPath(), {
    args: mainArgs(
      "connections",
      "add",
      "--name",
      name,
      "--engine",
      "sqlite",
      "--url",
      `${home}/${name}.db`,
      "--no-test",
    ),
    env: { DBPORT_HOME: home, NO_COLOR: "1" },
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).output();
}
