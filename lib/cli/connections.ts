/**
 * `dbport connections add|list|set|remove|test`: the app's saved connections
 * as a CLI. Passwords are never printed: list shows host, port and database;
 * `test` (and `add`, unless --no-test) prints where it connected and the
 * server's version, or the error with host, port, database and user left in
 * (this is the owner's own terminal; only MCP clients get redacted text).
 * Passwords need not go on the command line: --password-stdin, or --password
 * with no value on a terminal asks without echo. A running server picks up
 * changes within a second.
 *
 * One file a subcommand, in connections/: add, list, set, remove, test and
 * trust-host (probe.ts); what they share in common.ts; the password's
 * input in input.ts. `harden` is harden.ts.
 *
 * @module
 */

import {
  AI_POLICIES,
  CONNECTION_DEFAULTS,
  EXTERNAL_ACCESS,
  SAFE_MODES,
  WRITE_PREVIEWS,
} from "../app/connections.ts";
import { ENGINE_ALIASES, ENGINE_NAMES } from "../db/engines.ts";
import { hardenCommand } from "./harden.ts";
import { type CliIO, UsageError } from "./io.ts";
import { add } from "./connections/add.ts";
import {
  passwordArgs,
  processInput,
  type SecretInput,
} from "./connections/input.ts";
import { list } from "./connections/list.ts";
import { test, trust } from "./connections/probe.ts";
import { remove } from "./connections/remove.ts";
import { set } from "./connections/set.ts";
import { SSH_USAGE } from "./ssh.ts";

export { processInput, type SecretInput };

/** Usage of the connections command. */
export const CONNECTIONS_USAGE = `Usage:
  dbport connections add --name NAME --url URL [--engine ${
  ENGINE_NAMES.join("|")
}]
                         [--password [PASSWORD] | --password-stdin] [--external-access ${
  EXTERNAL_ACCESS.join("|")
}]
                         [--ai-policy ${AI_POLICIES.join("|")}]
                         [--safe-mode ${
  SAFE_MODES.join("|")
}] [--no-test | --save-anyway]
                         [--harden | --no-harden] [--json]
  dbport connections list [--json]
  dbport connections set ID_OR_NAME [--name ..] [--url ..] [--password [..] | --password-stdin] [--external-access ..]
                                    [--ai-policy ..] [--safe-mode ..] [--write-preview ${
  WRITE_PREVIEWS.join("|")
}]
                                    [--max-estimated-rows N|off] [--max-estimated-cost N|off]
                         Reads whose plan expects more rows (or cost) are refused
                         before they run (docs/security.md "Reads refused by their plan").
                                    [--private "schema.table.column, *.email, *.*ssn*"]
                         --private: columns no AI client may read, held by the engine
                         (needs the AI login on PostgreSQL/MariaDB); "" clears it.
  dbport connections remove ID_OR_NAME [--drop-ai-login | --keep-ai-login]
                         An AI login harden made is dropped on the server with
                         --drop-ai-login (a terminal asks, default yes); with no
                         terminal, one of the two flags is needed.
  dbport connections test ID_OR_NAME
  dbport connections trust-host ID_OR_NAME [--yes]
                         Show the host key of each SSH hop and trust it (dbport's
                         known_hosts); a changed key is never replaced here.
  dbport connections harden ID_OR_NAME [--apply] [--user NAME]
                         Show (and with --apply make) a least-privilege login that
                         every AI read runs as: no superuser, no file, program or
                         signal privileges. Approved writes keep the saved login.

add tests the connection first and saves it only when it answers (or with
--save-anyway; a terminal asks); an SSH host key not trusted yet is saved, with
the trust-host command to run. A PostgreSQL or MariaDB login that can do more
than read is offered a least-privilege AI login at once (harden --apply):
--harden makes it, --no-harden does not, a terminal asks (default yes).
A SQLite file that does not exist yet, in a directory that does, is created
empty by add (not with --no-test, nor under --safe-mode readOnly).
--engine is read from the URL when not given; ${
  Object.keys(ENGINE_ALIASES).map((a) => `${a} means ${ENGINE_ALIASES[a]}`)
    .join(", ")
}.
--driver is the old name of --engine and still works.
--password with no value asks for it on the terminal (no echo); --password-stdin
reads it from standard input. Either keeps it out of the shell's history.

URL: postgres://user@host:5432/db, mysql://user@host:3306/db, or for sqlite a
file path, a file: URL or a libsql:// URL. Defaults: --external-access ${CONNECTION_DEFAULTS.externalAccess},
--ai-policy ${CONNECTION_DEFAULTS.aiPolicy}, --safe-mode ${CONNECTION_DEFAULTS.safeMode}.

${SSH_USAGE}`;

/** Run `connections <subcommand>` against the file at `path`. */
export async function connectionsCommand(
  path: string,
  argv: string[],
  io: CliIO,
  input: SecretInput = processInput,
): Promise<number> {
  const [sub, ...given] = argv;
  const rest = sub === "add" || sub === "set"
    ? await passwordArgs(`connections ${sub}`, given, input)
    : given;
  switch (sub) {
    case "add":
      return await add(path, rest, io, input);
    case "list":
      return await list(path, rest, io);
    case "set":
      return await set(path, rest, io);
    case "remove":
      return await remove(path, rest, io, input);
    case "test":
      return await test(path, rest, io);
    case "trust-host":
      return await trust(path, rest, io, input);
    case "harden":
      return await hardenCommand(path, rest, io);
    default:
      throw new UsageError(
        sub === undefined
          ? `connections: name a subcommand\n\n${CONNECTIONS_USAGE}`
          : `connections: unknown subcommand "${sub}"\n\n${CONNECTIONS_USAGE}`,
      );
  }
}
