/**
 * `dbport connections add|list|set|remove|test`: the app's saved connections
 * as a CLI. Secrets are never printed: list shows host, port and database, and
 * `test` prints the server version or the redacted error. A running server
 * picks up changes within a second.
 *
 * @module
 */

import {
  AI_POLICIES,
  checkConnectionField,
  CONNECTION_DEFAULTS,
  DRIVERS,
  driverSpec,
  EXTERNAL_ACCESS,
  loadConnections,
  SAFE_MODES,
  saveConnections,
  type SavedConnection,
} from "../app/connections.ts";
import { DbError } from "../db/errors.ts";
import { openDriver } from "../db/pool.ts";
import { describeTarget } from "../db/target.ts";
import { type Parsed, parseFlags, stringFlag, table } from "./args.ts";
import { type CliIO, UsageError } from "./io.ts";

/** Usage of the connections command. */
export const CONNECTIONS_USAGE = `Usage:
  dbport connections add --name NAME --driver ${DRIVERS.join("|")} --url URL
                         [--password PASSWORD] [--external-access ${
  EXTERNAL_ACCESS.join("|")
}]
                         [--ai-policy ${AI_POLICIES.join("|")}]
                         [--safe-mode ${SAFE_MODES.join("|")}] [--json]
  dbport connections list [--json]
  dbport connections set ID_OR_NAME [--name ..] [--url ..] [--password ..] [--external-access ..]
                                    [--ai-policy ..] [--safe-mode ..]
  dbport connections remove ID_OR_NAME
  dbport connections test ID_OR_NAME

URL: postgres://user@host:5432/db, mysql://user@host:3306/db, or for sqlite a
file path, a file: URL or a libsql:// URL. Defaults: --external-access ${CONNECTION_DEFAULTS.externalAccess},
--ai-policy ${CONNECTION_DEFAULTS.aiPolicy}, --safe-mode ${CONNECTION_DEFAULTS.safeMode}.`;

/** Flags that map onto connection fields. */
const FIELD_FLAGS = {
  name: "name",
  driver: "driver",
  url: "url",
  password: "password",
  "external-access": "externalAccess",
  "ai-policy": "aiPolicy",
  "safe-mode": "safeMode",
} as const;

const FIELD_SPEC = Object.fromEntries(
  Object.keys(FIELD_FLAGS).map((flag) => [flag, { type: "string" as const }]),
);

/** Run `connections <subcommand>` against the file at `path`. */
export async function connectionsCommand(
  path: string,
  args: string[],
  io: CliIO,
): Promise<number> {
  const [sub, ...rest] = args;
  switch (sub) {
    case "add":
      return await add(path, rest, io);
    case "list":
      return await list(path, rest, io);
    case "set":
      return await set(path, rest, io);
    case "remove":
      return await remove(path, rest, io);
    case "test":
      return await test(path, rest, io);
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
  driver: string | undefined,
): Partial<SavedConnection> {
  const fields: Record<string, string> = {};
  for (const [flag, key] of Object.entries(FIELD_FLAGS)) {
    const value = stringFlag(parsed, flag);
    if (value === undefined) continue;
    const problem = checkConnectionField(
      key,
      value,
      key === "url" ? (stringFlag(parsed, "driver") ?? driver) : driver,
    );
    if (problem !== null) {
      throw new UsageError(`${command}: --${flag} ${problem}, got "${value}"`);
    }
    fields[key] = value;
  }
  return fields as Partial<SavedConnection>;
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

async function add(path: string, args: string[], io: CliIO): Promise<number> {
  const parsed = parseFlags("connections add", args, {
    ...FIELD_SPEC,
    json: { type: "boolean" },
  });
  if (parsed.positionals.length > 0) {
    throw new UsageError(
      `connections add: unexpected argument "${parsed.positionals[0]}"`,
    );
  }
  for (const flag of ["name", "driver", "url"]) {
    if (stringFlag(parsed, flag) === undefined) {
      throw new UsageError(`connections add: --${flag} is required`);
    }
  }
  const fields = fieldsOf(
    "connections add",
    parsed,
    stringFlag(parsed, "driver"),
  );
  const connections = await load(path);
  if (sameName(connections, fields.name!)) {
    throw new UsageError(
      `connections add: a connection named "${fields.name}" already exists`,
    );
  }
  const connection = {
    id: crypto.randomUUID(),
    ...CONNECTION_DEFAULTS,
    ...fields,
  } as SavedConnection;
  await saveConnections(path, [...connections, connection]);
  if (parsed.flags.json === true) {
    io.out(JSON.stringify(publicView(connection)));
  } else io.out(`Saved connection "${connection.name}" (${connection.id})`);
  return 0;
}

/** What may be shown of a connection: never a user name or password. */
function publicView(connection: SavedConnection) {
  const target = describeTarget(connection.driver, connection.url);
  return {
    id: connection.id,
    name: connection.name,
    driver: connection.driver,
    host: target?.host ?? null,
    port: target?.port ?? null,
    database: target?.database ?? null,
    externalAccess: connection.externalAccess,
    aiPolicy: connection.aiPolicy,
    safeMode: connection.safeMode,
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
      "No saved connections. Add one: deno task dbport connections add --help",
    );
    return 0;
  }
  for (
    const line of table(
      ["ID", "NAME", "DRIVER", "WHERE", "EXTERNAL", "AI POLICY", "SAFE MODE"],
      views.map((v) => [
        v.id,
        v.name,
        v.driver,
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

async function set(path: string, args: string[], io: CliIO): Promise<number> {
  const parsed = parseFlags("connections set", args, FIELD_SPEC);
  const connections = await load(path);
  const current = find(connections, parsed.positionals[0], "connections set");
  if (stringFlag(parsed, "driver") !== undefined) {
    throw new UsageError(
      "connections set: the driver cannot change; remove and add the connection",
    );
  }
  const fields = fieldsOf("connections set", parsed, current.driver);
  if (Object.keys(fields).length === 0) {
    throw new UsageError("connections set: name at least one field to change");
  }
  if (
    fields.name !== undefined && sameName(connections, fields.name, current.id)
  ) {
    throw new UsageError(
      `connections set: a connection named "${fields.name}" already exists`,
    );
  }
  const next = { ...current, ...fields };
  await saveConnections(
    path,
    connections.map((c) => c.id === current.id ? next : c),
  );
  io.out(`Updated connection "${next.name}" (${next.id})`);
  return 0;
}

async function remove(
  path: string,
  args: string[],
  io: CliIO,
): Promise<number> {
  const parsed = parseFlags("connections remove", args, {});
  const connections = await load(path);
  const gone = find(connections, parsed.positionals[0], "connections remove");
  await saveConnections(path, connections.filter((c) => c.id !== gone.id));
  io.out(`Removed connection "${gone.name}" (${gone.id})`);
  return 0;
}

async function test(path: string, args: string[], io: CliIO): Promise<number> {
  const parsed = parseFlags("connections test", args, {});
  const connection = find(
    await load(path),
    parsed.positionals[0],
    "connections test",
  );
  const driver = openDriver(driverSpec(connection));
  try {
    const version = await driver.version({
      signal: new AbortController().signal,
      timeoutMs: 15_000,
    });
    io.out(`"${connection.name}": connected, ${version}`);
    return 0;
  } catch (error) {
    const message = error instanceof DbError
      ? error.message
      : "unexpected failure";
    io.err(`"${connection.name}": cannot connect: ${message}`);
    return 1;
  } finally {
    await driver.close();
  }
}
