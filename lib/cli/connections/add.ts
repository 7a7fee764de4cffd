/**
 * `dbport connections add`: a new saved connection, tested before it is
 * saved (a new SQLite file made first), and its least-privilege AI login
 * offered when its login can do more than read.
 *
 * @module
 */

import { ENGINE_NAMES, engineOfUrl, ENGINES } from "../../db/engines.ts";
import {
  CONNECTION_DEFAULTS,
  editConnections,
  type SavedConnection,
} from "../../app/connections.ts";
import {
  createNewSqliteFile,
  type NewSqliteFile,
} from "../../app/sqlite_new_file.ts";
import { type Parsed, parseFlags, stringFlag } from "../args.ts";
import { hardenCommand } from "../harden.ts";
import { SSH_FLAG_SPEC, sshFields } from "../ssh.ts";
import { type CliIO, UsageError } from "../io.ts";
import {
  cli,
  engineFlag,
  FIELD_SPEC,
  fieldsOf,
  load,
  probe,
  publicView,
  sameName,
} from "./common.ts";
import type { SecretInput } from "./input.ts";

export async function add(
  path: string,
  args: string[],
  io: CliIO,
  input: SecretInput,
): Promise<number> {
  const parsed = parseFlags("connections add", args, {
    ...FIELD_SPEC,
    ...SSH_FLAG_SPEC,
    json: { type: "boolean" },
    "no-test": { type: "boolean" },
    "save-anyway": { type: "boolean" },
    harden: { type: "boolean" },
    "no-harden": { type: "boolean" },
  });
  const connection = await newConnection(path, parsed);
  const testing = parsed.flags["no-test"] !== true;
  const made = await madeFile(connection, testing, io);
  if (made.kind === "refused") {
    io.err(`connections add: ${made.message}`);
    return 1;
  }
  const tested = testing ? await probe(connection, io, path) : null;
  if (tested?.outcome === "failed") {
    io.err(`Fix: ${tested.fix}`);
    const anyway = parsed.flags["save-anyway"] === true ||
      await input.confirm?.("Save it anyway?", false) === true;
    if (!anyway) {
      if (made.kind === "created") await made.undo();
      io.err(
        `Nothing was saved. Run connections add again once it connects, or keep it as it is with --save-anyway.`,
      );
      return 1;
    }
  }
  await saveNew(path, connection, made);
  if (made.kind === "created" && connection.externalAccess !== "readWrite") {
    io.out(
      `AI clients may not write it (--external-access ${connection.externalAccess}): make its tables yourself (the console's Query page, or sqlite3), or let them write with ${cli()} connections set "${connection.name}" --external-access readWrite.`,
    );
  }
  if (parsed.flags.json === true) {
    io.out(JSON.stringify(publicView(connection)));
  } else io.out(`Saved connection "${connection.name}" (${connection.id})`);
  if (tested?.outcome === "failed") {
    // Saved as asked, so the command did what it was told (exit 0); the
    // warning keeps the failed test and its fix in view. Without
    // --save-anyway nothing is saved and the exit is 1 (above).
    io.err(
      `Warning: it does not connect yet: fix it with ${cli()} connections set "${connection.name}" --url … (or --password), then ${cli()} connections test "${connection.name}".`,
    );
    return 0;
  }
  if (tested?.outcome === "untrusted") {
    io.out(
      `Saved with its SSH host key not trusted yet: check the key and trust it with ${cli()} connections trust-host "${connection.name}".`,
    );
  }
  if (tested?.outcome === "ok" && tested.risks.length > 0) {
    return await offerHarden(path, connection, tested.risks, parsed, io, input);
  }
  return 0;
}

/** The connection the flags describe, its name not yet taken. */
async function newConnection(
  path: string,
  parsed: Parsed,
): Promise<SavedConnection> {
  const engine = addEngine(parsed);
  const fields = fieldsOf("connections add", parsed, engine);
  const connections = await load(path);
  if (sameName(connections, fields.name!)) {
    throw new UsageError(
      `connections add: a connection named "${fields.name}" already exists`,
    );
  }
  const secrets = sshFields("connections add", parsed, undefined);
  return {
    id: crypto.randomUUID(),
    ...CONNECTION_DEFAULTS,
    ...fields,
    engine,
    ...secrets.fields,
  } as SavedConnection;
}

/**
 * A new local database file, made here by the user's command before its
 * test (sqlite_new_file.ts says why not at the first write); a plain path
 * is then saved absolute in `connection`: the server does not run in this
 * directory (a file: URL keeps its own form and options).
 */
async function madeFile(
  connection: SavedConnection,
  testing: boolean,
  io: CliIO,
): Promise<NewSqliteFile> {
  const made = testing && ENGINES[connection.engine].filePaths
    ? await createNewSqliteFile(connection.url, connection.safeMode)
    : { kind: "none" as const };
  if (made.kind === "created") {
    if (!/^file:/i.test(connection.url)) connection.url = made.path;
    io.out(
      `Created the empty SQLite database ${made.path} (it did not exist; its directory does).`,
    );
  }
  return made;
}

/**
 * Save `connection` unless its name was taken meanwhile; the file made for
 * it, if any, is removed when it is not saved.
 */
async function saveNew(
  path: string,
  connection: SavedConnection,
  made: NewSqliteFile,
): Promise<void> {
  try {
    await editConnections(path, (fresh) => {
      if (sameName(fresh, connection.name)) {
        throw new UsageError(
          `connections add: a connection named "${connection.name}" already exists`,
        );
      }
      return [...fresh, connection];
    });
  } catch (error) {
    if (made.kind === "created") await made.undo();
    throw error;
  }
}

/**
 * A login that can do more than read: make the least-privilege AI login now
 * (--harden, or yes on a terminal), or say how (--no-harden, no terminal).
 */
async function offerHarden(
  path: string,
  connection: SavedConnection,
  risks: readonly string[],
  parsed: Parsed,
  io: CliIO,
  input: SecretInput,
): Promise<number> {
  const harden = `${cli()} connections harden "${connection.name}" --apply`;
  const warning = `Warning: the login of "${connection.name}" ${
    risks.join(", ")
  }: only dbport's checks keep AI reads read-only.`;
  const flagged = parsed.flags.harden === true ||
    parsed.flags["no-harden"] === true;
  const asked = flagged ? null : await input.confirm?.(
    `${warning}\nMake a least-privilege login for AI reads now (made as this login: a new login with SELECT only)?`,
    true,
  ) ?? null;
  if (parsed.flags.harden === true || asked === true) {
    return await hardenCommand(path, [connection.id, "--apply"], io);
  }
  io.out(
    `${warning} Make a least-privilege login for them: ${harden}${
      flagged || asked === false
        ? ""
        : " (with no terminal to ask on, none was made: add --harden to make it at once, --no-harden to say no)"
    }`,
  );
  return 0;
}

/**
 * The flags `add` needs, checked together, and the engine: `--engine`, or
 * the one the URL names.
 */
function addEngine(parsed: Parsed): string {
  if (parsed.positionals.length > 0) {
    throw new UsageError(
      `connections add: unexpected argument "${parsed.positionals[0]}"`,
    );
  }
  for (const flag of ["name", "url"]) {
    if (stringFlag(parsed, flag) === undefined) {
      throw new UsageError(`connections add: --${flag} is required`);
    }
  }
  for (
    const [one, other] of [["harden", "no-harden"], ["no-test", "save-anyway"]]
  ) {
    if (parsed.flags[one!] === true && parsed.flags[other!] === true) {
      throw new UsageError(`connections add: --${one} or --${other}, not both`);
    }
  }
  const engine = engineFlag(parsed) ?? engineOfUrl(stringFlag(parsed, "url")!);
  if (engine === null) {
    throw new UsageError(
      `connections add: the URL names no engine; give --engine ${
        ENGINE_NAMES.join("|")
      } (URLs: postgres://, postgresql://, mysql://, mariadb://, libsql://, a file path or file:)`,
    );
  }
  return engine;
}
