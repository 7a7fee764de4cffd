/**
 * `dbport connections harden NAME [--apply]`: a least-privilege login for AI
 * reads (docs/security.md "AI login"). Without `--apply` it shows what it
 * would run; with it, it runs that as the saved login, proves the new login
 * can read and holds no such power, and saves it with the connection. The
 * plan, its run, its proof and its save live in lib/app/harden.ts, which
 * the console's Harden button uses too.
 *
 * @module
 */

import { cliCommand } from "../app/cli_command.ts";
import {
  aiUserName,
  applyHarden,
  prepareHarden,
  saveHardened,
} from "../app/harden.ts";
import { HardenRefused } from "../app/harden_run.ts";
import { DbError } from "../db/errors.ts";
import { parseFlags, stringFlag } from "./args.ts";
import { find, load } from "./connections/common.ts";
import type { CliIO } from "./io.ts";

/** The plan's steps, where the tests have always found them. */
export { applyHarden, prepareHarden, saveHardened };

/** Run `connections harden` against the connections file at `path`. */
export async function hardenCommand(
  path: string,
  args: string[],
  io: CliIO,
): Promise<number> {
  const parsed = parseFlags("connections harden", args, {
    apply: { type: "boolean" },
    user: { type: "string" },
  });
  const connection = find(
    await load(path),
    parsed.positionals[0],
    "connections harden",
  );
  try {
    const prepared = await prepareHarden(
      connection,
      stringFlag(parsed, "user") ?? aiUserName(connection),
    );
    if (prepared === null) {
      io.out(
        `"${connection.name}" is a SQLite database: it has no logins. AI reads run on a read-only handle (PRAGMA query_only); keep the file readable only by you.`,
      );
      return 0;
    }
    const { plan } = prepared;
    io.out(
      `${parsed.flags.apply ? "Creating" : "Would create"} the login ${
        JSON.stringify(plan.user)
      } for AI reads on "${connection.name}":`,
    );
    for (const statement of prepared.shown) io.out(`  ${statement};`);
    for (const note of plan.notes) io.out(`Note: ${note}`);
    if (parsed.flags.apply !== true) {
      io.out(
        "Nothing was changed. Run again with --apply to create it (as the saved login) and use it for every AI read.",
      );
      return 0;
    }
    let done;
    try {
      done = await applyHarden(prepared);
    } catch (error) {
      if (!(error instanceof HardenRefused)) throw error;
      io.err(`${error.message}. Nothing was saved.`);
      return 1;
    }
    for (const schema of done.skipped) {
      io.out(`Note: the schema ${schema} was dropped meanwhile; passed over.`);
    }
    await saveHardened(path, done.connection);
    io.out(
      `Saved: every AI read on "${connection.name}" now runs as ${
        JSON.stringify(plan.user)
      }; approved writes run as the saved login.`,
    );
    if (
      done.connection.writePreview === "estimate" &&
      connection.writePreview !== "estimate"
    ) {
      io.out(
        `Write previews on "${connection.name}" are now the engine's estimate (a dry run would run as the saved login before you approve); to have the dry run back: ${cliCommand()} connections set "${connection.name}" --write-preview dryRun`,
      );
    }
    return 0;
  } catch (error) {
    const message = error instanceof DbError || error instanceof Error
      ? error.message
      : String(error);
    io.err(`connections harden: ${message}`);
    return 1;
  }
}
