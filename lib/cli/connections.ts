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
 * @module
 */

import { cliCommand } from "../app/cli_command.ts";
import { messageOf } from "../base/message_of.ts";
import {
  ENGINE_ALIASES,
  ENGINE_NAMES,
  engineNamed,
  engineOfUrl,
} from "../db/engines.ts";
import {
  AI_POLICIES,
  checkConnectionField,
  CONNECTION_DEFAULTS,
  editConnections,
  EXTERNAL_ACCESS,
  loadConnections,
  SAFE_MODES,
  type SavedConnection,
  WRITE_PREVIEWS,
} from "../app/connections.ts";
import { probeConnection } from "../app/connection_probe.ts";
import { createNewSqliteFile } from "../app/sqlite_new_file.ts";
import { KNOWN_HOSTS_FILE } from "../base/identity.ts";
import { dirname, join } from "node:path";
import { ENGINES } from "../db/engines.ts";
import { describeTarget } from "../db/target.ts";
import { type Parsed, parseFlags, stringFlag, table } from "./args.ts";
import { dropAiLogin } from "../app/harden.ts";
import { hardenCommand } from "./harden.ts";
import { privateColumnsProblem, syncPrivateColumns } from "./private_sync.ts";
import { parsePrivateList } from "../db/private_columns.ts";
import { SSH_FLAG_SPEC, SSH_USAGE, sshFields, trustHost } from "./ssh.ts";
import { type CliIO, UsageError } from "./io.ts";

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

/** Flags that map onto connection fields. */
const FIELD_FLAGS = {
  name: "name",
  engine: "engine",
  // The flag's name before 0.2.
  driver: "engine",
  url: "url",
  password: "password",
  "external-access": "externalAccess",
  "ai-policy": "aiPolicy",
  "safe-mode": "safeMode",
  "write-preview": "writePreview",
} as const;

const FIELD_SPEC = Object.fromEntries(
  Object.keys(FIELD_FLAGS).map((flag) => [flag, { type: "string" as const }]),
);

/** How a password reaches the CLI other than on the command line. */
export interface SecretInput {
  /** All of standard input (for --password-stdin). */
  stdin(): Promise<string>;
  /** Ask on the terminal without echo; null when there is no terminal. */
  ask(prompt: string): Promise<string | null>;
  /** A line typed on standard input after `prompt`; null at its end. */
  line(prompt: string): Promise<string | null>;
  /**
   * A yes/no question on the terminal (`yes` when only Enter is typed);
   * null when there is no terminal to ask on.
   */
  confirm?(question: string, yes: boolean): Promise<boolean | null>;
}

/** Standard input and the terminal of this process. */
export const processInput: SecretInput = {
  async confirm(question, yes) {
    if (!Deno.stdin.isTerminal()) return null;
    const answer = await this.line(`${question} [${yes ? "Y/n" : "y/N"}] `);
    if (answer === null) return null;
    if (answer.trim() === "") return yes;
    return /^\s*y(es)?\s*$/i.test(answer);
  },
  async line(prompt) {
    await Deno.stderr.write(new TextEncoder().encode(prompt));
    const reader = Deno.stdin.readable.pipeThrough(new TextDecoderStream())
      .getReader();
    try {
      let text = "";
      for (;;) {
        const { value, done } = await reader.read();
        if (done) return text === "" ? null : text;
        text += value;
        const end = text.indexOf("\n");
        if (end !== -1) return text.slice(0, end);
      }
    } finally {
      reader.releaseLock();
    }
  },
  async stdin() {
    return await new Response(Deno.stdin.readable).text();
  },
  async ask(prompt) {
    if (!Deno.stdin.isTerminal()) return null;
    await Deno.stderr.write(new TextEncoder().encode(prompt));
    Deno.stdin.setRaw(true);
    try {
      let secret = "";
      const buffer = new Uint8Array(64);
      for (;;) {
        const n = await Deno.stdin.read(buffer);
        if (n === null) break;
        const text = new TextDecoder().decode(buffer.subarray(0, n));
        if (text.includes("\u0003")) throw new UsageError("cancelled");
        const end = text.search(/[\r\n]/);
        if (end !== -1) {
          secret += text.slice(0, end);
          break;
        }
        for (const c of text) {
          if (c === "\u007f" || c === "\b") secret = secret.slice(0, -1);
          else secret += c;
        }
      }
      return secret;
    } finally {
      Deno.stdin.setRaw(false);
      await Deno.stderr.write(new TextEncoder().encode("\n"));
    }
  },
};

/**
 * `--password` with no value (last, or before another flag) becomes a
 * question on the terminal; `--password-stdin` reads standard input. Either
 * way the password ends up as `--password=VALUE` for the flag parser.
 */
async function passwordArgs(
  command: string,
  args: string[],
  input: SecretInput,
): Promise<string[]> {
  const out: string[] = [];
  let stdinRead = false;
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    const next = args[i + 1];
    if (arg === "--password-stdin" || arg === "--ssh-password-stdin") {
      if (stdinRead) {
        throw new UsageError(
          `${command}: standard input holds one secret: give --password-stdin or --ssh-password-stdin, not both`,
        );
      }
      stdinRead = true;
      const text = (await input.stdin()).replace(/\r?\n$/, "");
      if (text === "") {
        throw new UsageError(`${command}: ${arg} read no password`);
      }
      out.push(`${arg.replace("-stdin", "")}=${text}`);
    } else if (
      arg === "--password" && (next === undefined || next.startsWith("--"))
    ) {
      const asked = await input.ask("Password: ");
      if (asked === null) {
        throw new UsageError(
          `${command}: --password needs a value; with no terminal to ask on, use --password-stdin`,
        );
      }
      out.push(`--password=${asked}`);
    } else out.push(arg);
  }
  return out;
}

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

async function load(path: string): Promise<SavedConnection[]> {
  const loaded = await loadConnections(path);
  // A malformed file is reported and never overwritten.
  if (!loaded.ok) throw new Error(`${loaded.message}; fix it by hand first`);
  return loaded.connections;
}

/** The connection fields given as flags, each checked. */
function fieldsOf(
  command: string,
  parsed: Parsed,
  engine: string | undefined,
): Partial<SavedConnection> {
  const fields: Record<string, string> = {};
  for (const [flag, key] of Object.entries(FIELD_FLAGS)) {
    const given = stringFlag(parsed, flag);
    if (given === undefined) continue;
    const value = key === "engine" ? (engineNamed(given) ?? given) : given;
    const problem = checkConnectionField(
      key,
      value,
      key === "url" ? (engineFlag(parsed) ?? engine) : engine,
    );
    if (problem !== null) {
      throw new UsageError(`${command}: --${flag} ${problem}, got "${value}"`);
    }
    fields[key] = value;
  }
  return fields as Partial<SavedConnection>;
}

/**
 * `--private "a, b"`: the private columns (db/private_columns.ts), refused
 * where the engine cannot hold them (no AI login; a remote libSQL).
 */
function privateFlag(
  parsed: Parsed,
  current: SavedConnection,
): Partial<SavedConnection> {
  const given = stringFlag(parsed, "private");
  if (given === undefined) return {};
  let privateColumns: string[];
  try {
    privateColumns = parsePrivateList(given);
  } catch (error) {
    throw new UsageError(`connections set: --private ${messageOf(error)}`);
  }
  const problem = privateColumnsProblem({ ...current, privateColumns });
  if (problem !== null) throw new UsageError(`connections set: ${problem}`);
  return { privateColumns };
}

/** Bring the AI login's grants in step with the new list, and say so. */
async function reportPrivateSync(
  connection: SavedConnection,
  io: CliIO,
): Promise<number> {
  const facts = ENGINES[connection.engine];
  if (facts.privateColumnsHeldBy === "authorizer") {
    io.out(
      `AI reads on "${connection.name}" are refused the private columns by ${facts.label}'s authorizer (a running server takes the list at once).`,
    );
    return 0;
  }
  const done = await syncPrivateColumns(connection);
  for (const statement of done.statements) io.out(`  ${statement};`);
  for (const note of done.notes) io.out(`Note: ${note}`);
  if (done.problem !== null) {
    io.err(
      `connections set: the AI login's grants do not hold the private columns: ${done.problem}. A running server refuses AI reads on "${connection.name}" until they do.`,
    );
    return 1;
  }
  io.out(
    `Private on "${connection.name}": ${
      done.columns.length === 0 ? "no column yet" : done.columns.join(", ")
    }${
      done.views.length === 0
        ? ""
        : `; views withheld: ${done.views.join(", ")}`
    }.`,
  );
  return 0;
}

/** `--engine`, or its old name `--driver` (an alias read as its engine). */
function engineFlag(parsed: Parsed): string | undefined {
  const given = stringFlag(parsed, "engine") ?? stringFlag(parsed, "driver");
  return given === undefined ? undefined : (engineNamed(given) ?? given);
}

function find(
  connections: SavedConnection[],
  key: string | undefined,
  command: string,
): SavedConnection {
  if (key === undefined) {
    throw new UsageError(`${command}: name a connection id or name`);
  }
  const lower = key.toLowerCase();
  const found = connections.find((c) => c.id === lower) ??
    connections.find((c) => c.name.toLowerCase() === lower);
  if (found === undefined) {
    throw new UsageError(
      `${command}: no saved connection has the id or name "${key}"`,
    );
  }
  return found;
}

function sameName(
  connections: readonly SavedConnection[],
  name: string,
  except?: string,
): boolean {
  return connections.some((c) =>
    c.id !== except && c.name.toLowerCase() === name.toLowerCase()
  );
}

async function add(
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
  const fields = fieldsOf("connections add", parsed, engine);
  const connections = await load(path);
  if (sameName(connections, fields.name!)) {
    throw new UsageError(
      `connections add: a connection named "${fields.name}" already exists`,
    );
  }
  const secrets = sshFields("connections add", parsed, undefined);
  const connection = {
    id: crypto.randomUUID(),
    ...CONNECTION_DEFAULTS,
    ...fields,
    engine,
    ...secrets.fields,
  } as SavedConnection;
  const testing = parsed.flags["no-test"] !== true;
  // A new local database file is made here, by the user's command, before
  // its test (sqlite_new_file.ts says why not at the first write).
  const made = testing && ENGINES[connection.engine].filePaths
    ? await createNewSqliteFile(connection.url, connection.safeMode)
    : { kind: "none" as const };
  if (made.kind === "refused") {
    io.err(`connections add: ${made.message}`);
    return 1;
  }
  if (made.kind === "created") {
    // A plain path is saved absolute: the server does not run in this
    // directory (a file: URL keeps its own form and options).
    if (!/^file:/i.test(connection.url)) connection.url = made.path;
    io.out(
      `Created the empty SQLite database ${made.path} (it did not exist; its directory does).`,
    );
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

/** The CLI's command as the user types it. */
function cli(): string {
  return cliCommand();
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

/** What a connection test found. */
type Probe =
  | { outcome: "ok"; risks: string[] }
  | { outcome: "untrusted" }
  | { outcome: "failed"; fix: string };

/** Connect and say what was found, a line per step (connection_probe.ts). */
async function probe(
  connection: SavedConnection,
  io: CliIO,
  path: string,
): Promise<Probe> {
  const report = await probeConnection(connection, knownHostsOf(path));
  for (const step of report.steps) (step.ok ? io.out : io.err)(step.text);
  return report;
}

/** What may be shown of a connection: never a user name or password. */
function publicView(connection: SavedConnection) {
  const target = describeTarget(connection.engine, connection.url);
  return {
    id: connection.id,
    name: connection.name,
    engine: connection.engine,
    /** The old name of `engine`, kept for scripts that read it. */
    driver: connection.engine,
    host: target?.host ?? null,
    port: target?.port ?? null,
    database: target?.database ?? null,
    externalAccess: connection.externalAccess,
    aiPolicy: connection.aiPolicy,
    safeMode: connection.safeMode,
    ...planLimitsOf(connection),
  };
}

/** The plan limits a connection sets (none: nothing). */
function planLimitsOf(connection: SavedConnection) {
  const { maxEstimatedRows: rows, maxEstimatedCost: cost } = connection;
  return {
    ...(rows === undefined ? {} : { maxEstimatedRows: rows }),
    ...(cost === undefined ? {} : { maxEstimatedCost: cost }),
  };
}

async function list(path: string, args: string[], io: CliIO): Promise<number> {
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
        v.host === null
          ? (v.database ?? "-")
          : `${v.host}:${v.port}/${v.database ?? ""}`,
        v.externalAccess,
        v.aiPolicy,
        v.safeMode,
      ]),
    )
  ) io.out(line);
  return 0;
}

/** The plan limits' flags: a number sets one, `off` removes it. */
const PLAN_LIMIT_FLAGS = {
  "max-estimated-rows": "maxEstimatedRows",
  "max-estimated-cost": "maxEstimatedCost",
} as const;

function planLimits(
  parsed: Parsed,
  engine: string,
): { fields: Partial<SavedConnection>; remove: (keyof SavedConnection)[] } {
  const fields: Record<string, number> = {};
  const remove: (keyof SavedConnection)[] = [];
  for (const [flag, key] of Object.entries(PLAN_LIMIT_FLAGS)) {
    const given = stringFlag(parsed, flag);
    if (given === undefined) continue;
    if (given === "off") {
      remove.push(key);
      continue;
    }
    const value = Number(given.replaceAll("_", ""));
    const problem = given.trim() === ""
      ? "must be a number"
      : checkConnectionField(key, value, engine);
    if (problem !== null) {
      throw new UsageError(
        `connections set: --${flag} ${problem} (or off), got "${given}"`,
      );
    }
    fields[key] = value;
  }
  return { fields: fields as Partial<SavedConnection>, remove };
}

async function set(path: string, args: string[], io: CliIO): Promise<number> {
  const parsed = parseFlags("connections set", args, {
    ...FIELD_SPEC,
    ...SSH_FLAG_SPEC,
    "max-estimated-rows": { type: "string" },
    "max-estimated-cost": { type: "string" },
    private: { type: "string" },
  });
  const connections = await load(path);
  const current = find(connections, parsed.positionals[0], "connections set");
  if (engineFlag(parsed) !== undefined) {
    throw new UsageError(
      "connections set: the engine cannot change; remove and add the connection",
    );
  }
  const secrets = sshFields("connections set", parsed, current);
  const limits = planLimits(parsed, current.engine);
  const fields = {
    ...fieldsOf("connections set", parsed, current.engine),
    ...secrets.fields,
    ...limits.fields,
    ...privateFlag(parsed, current),
  };
  secrets.remove.push(...limits.remove);
  if (Object.keys(fields).length === 0 && secrets.remove.length === 0) {
    throw new UsageError("connections set: name at least one field to change");
  }
  if (
    fields.name !== undefined && sameName(connections, fields.name, current.id)
  ) {
    throw new UsageError(
      `connections set: a connection named "${fields.name}" already exists`,
    );
  }
  const next: SavedConnection = { ...current, ...fields };
  for (const key of secrets.remove) delete next[key];
  // A password typed now replaces a command or variable named before.
  if (fields.password !== undefined) {
    delete next.passwordEnv;
    delete next.passwordCommand;
  }
  await editConnections(path, (fresh) => {
    if (fields.name !== undefined && sameName(fresh, next.name, next.id)) {
      throw new UsageError(
        `connections set: a connection named "${next.name}" already exists`,
      );
    }
    if (!fresh.some((c) => c.id === current.id)) {
      throw new UsageError(
        `connections set: "${current.name}" was removed meanwhile`,
      );
    }
    return fresh.map((c) => c.id === current.id ? next : c);
  });
  io.out(`Updated connection "${next.name}" (${next.id})`);
  if (fields.privateColumns !== undefined) {
    return await reportPrivateSync(next, io);
  }
  return 0;
}

async function remove(
  path: string,
  args: string[],
  io: CliIO,
  input: SecretInput,
): Promise<number> {
  const parsed = parseFlags("connections remove", args, {
    "drop-ai-login": { type: "boolean" },
    "keep-ai-login": { type: "boolean" },
  });
  const connections = await load(path);
  const gone = find(connections, parsed.positionals[0], "connections remove");
  const login = gone.aiLogin?.user;
  // Another saved connection may use the same login: it stays then.
  const shared = login !== undefined &&
    connections.some((c) => c.id !== gone.id && c.aiLogin?.user === login);
  let dropped = false;
  if (
    login !== undefined && !shared && parsed.flags["keep-ai-login"] !== true
  ) {
    let drop = parsed.flags["drop-ai-login"] === true;
    if (!drop) {
      const answer = await input.confirm?.(
        `Drop the AI login ${
          JSON.stringify(login)
        } that harden made on the server of "${gone.name}"?`,
        true,
      ) ?? null;
      if (answer === null) {
        // No terminal to ask on and no word either way: once the connection
        // is gone dbport can no longer drop the login, so refuse, not guess.
        throw new UsageError(
          `connections remove: "${gone.name}" has the AI login ${
            JSON.stringify(login)
          } that harden made on its server. Nothing was removed: add --drop-ai-login to drop it too, or --keep-ai-login to leave it there.`,
        );
      }
      drop = answer;
    }
    if (drop) {
      io.out(`Dropping the AI login ${JSON.stringify(login)}:`);
      const failed = await dropAiLogin(gone, io);
      if (failed !== null) {
        io.err(
          `connections remove: cannot drop the AI login ${
            JSON.stringify(login)
          }: ${failed}. Nothing was removed; fix it, or keep the login with --keep-ai-login.`,
        );
        return 1;
      }
      dropped = true;
    }
  }
  await editConnections(path, (fresh) => fresh.filter((c) => c.id !== gone.id));
  io.out(`Removed connection "${gone.name}" (${gone.id})`);
  if (login !== undefined && !dropped) {
    io.out(
      shared
        ? `The AI login ${
          JSON.stringify(login)
        } stays on the server: another saved connection uses it.`
        : `The AI login ${
          JSON.stringify(login)
        } stays on the server (dbport no longer manages it: drop it there when it is no longer wanted).`,
    );
  }
  return 0;
}

async function test(path: string, args: string[], io: CliIO): Promise<number> {
  const parsed = parseFlags("connections test", args, {});
  const connection = find(
    await load(path),
    parsed.positionals[0],
    "connections test",
  );
  const tested = await probe(connection, io, path);
  if (tested.outcome === "failed") {
    io.err(
      `Fix: ${tested.fix} (${cli()} connections set "${connection.name}" …)`,
    );
  }
  if (tested.outcome === "ok" && tested.risks.length > 0) {
    io.out(
      `Warning: the login of "${connection.name}" ${
        tested.risks.join(", ")
      }: only dbport's checks keep AI reads read-only. Make a least-privilege login for them: ${cli()} connections harden "${connection.name}" --apply`,
    );
  }
  return tested.outcome === "ok" ? 0 : 1;
}

/** dbport's own known_hosts, beside connections.json. */
function knownHostsOf(path: string): string {
  return join(dirname(path), KNOWN_HOSTS_FILE);
}

async function trust(
  path: string,
  args: string[],
  io: CliIO,
  input: SecretInput,
): Promise<number> {
  const parsed = parseFlags("connections trust-host", args, {
    yes: { type: "boolean" },
  });
  const connection = find(
    await load(path),
    parsed.positionals[0],
    "connections trust-host",
  );
  return await trustHost(
    connection,
    knownHostsOf(path),
    io,
    async (question) => {
      if (parsed.flags.yes === true) return true;
      const answer = await input.line(question);
      return answer !== null && /^\s*y(es)?\s*$/i.test(answer);
    },
  );
}
