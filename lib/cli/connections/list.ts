/**
 * `dbport connections list [--json]`: where each saved connection goes and
 * its policy, never a user name or password.
 *
 * @module
 */

import { cliCommand } from "../../app/cli_command.ts";
import { parseFlags, table } from "../args.ts";
import type { CliIO } from "../io.ts";
import { load, publicView } from "./common.ts";

export async function list(
  path: string,
  args: string[],
  io: CliIO,
): Promise<number> {
  const parsed = parseFlags("connections list", args, {
    json: { type: "boolean" },
  });
  const views = (await load(path)).map(publicView);
  if (parsed.flags.json === true) {
    io.out(JSON.stringify(views));
    return 0;
  }
  if (views.length === 0) {
    io.out(
      `No saved connections. Add one: ${cliCommand()} connections add --help`,
    );
    return 0;
  }
  for (
    const line of table(
      ["ID", "NAME", "ENGINE", "WHERE", "EXTERNAL", "AI POLICY", "SAFE MODE"],
      views.map((v) => [
        v.id,
        v.name,
        v.engine,
        v.urlProblem !== undefined
          ? `(${v.urlProblem})`
          : v.host === null
          ? (v.database ?? "-")
          : `${v.host}${v.port === null ? "" : `:${v.port}`}/${
            v.database ?? ""
          }`,
        v.externalAccess,
        v.aiPolicy,
        v.safeMode,
      ]),
    )
  ) io.out(line);
  return 0;
}
