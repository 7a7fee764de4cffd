/**
 * What the `connections` subcommands share: the connection fields as flags,
 * the file read (a malformed one is never overwritten), a connection found
 * by id or name, its public view and its test.
 *
 * @module
 */

import { cliCommand } from "../../app/cli_command.ts";
import { engineNamed } from "../../db/engines.ts";
import {
  checkConnectionField,
  loadConnections,
  type SavedConnection,
} from "../../app/connections.ts";
import { probeConnection } from "../../app/connection_probe.ts";
import { KNOWN_HOSTS_FILE } from "../../base/identity.ts";
import { dirname, join } from "node:path";
import {
  describeTarget,
  urlProblem,
  urlWithoutSecrets,
} from "../../db/target.ts";
import { type Parsed, stringFlag } from "../args.ts";
import { type CliIO, UsageError } from "../io.ts";

/** Flags that map onto connection fields. */
export const FIELD_FLAGS = {
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

export const FIELD_SPEC = Object.fromEntries(
  Object.keys(FIELD_FLAGS).map((flag) => [flag, { type: "string" as const }]),
);

export async function load(path: string): Promise<SavedConnection[]> {
  const loaded = await loadConnections(path);
  // A malformed file is reported and never overwritten.
  if (!loaded.ok) throw new Error(`${loaded.message}; fix it by hand first`);
  return loaded.connections;
}

/** The connection fields given as flags, each checked. */
export function fieldsOf(
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
      // A URL is quoted without its password and secret parameters (it was
      // quoted whole: "50%off" and all), a password never.
      const got = key === "password"
        ? ""
        : `, got "${key === "url" ? urlWithoutSecrets(value) : value}"`;
      throw new UsageError(`${command}: --${flag} ${problem}${got}`);
    }
    fields[key] = value;
  }
  return fields as Partial<SavedConnection>;
}

/** `--engine`, or its old name `--driver` (an alias read as its engine). */
export function engineFlag(parsed: Parsed): string | undefined {
  const given = stringFlag(parsed, "engine") ?? stringFlag(parsed, "driver");
  return given === undefined ? undefined : (engineNamed(given) ?? given);
}

export function find(
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

export function sameName(
  connections: readonly SavedConnection[],
  name: string,
  except?: string,
): boolean {
  return connections.some((c) =>
    c.id !== except && c.name.toLowerCase() === name.toLowerCase()
  );
}

/** The CLI's command as the user types it. */
export function cli(): string {
  return cliCommand();
}

/** What a connection test found. */
export type Probe =
  | { outcome: "ok"; risks: string[] }
  | { outcome: "untrusted" }
  | { outcome: "failed"; fix: string };

/** Connect and say what was found, a line per step (connection_probe.ts). */
export async function probe(
  connection: SavedConnection,
  io: CliIO,
  path: string,
): Promise<Probe> {
  const report = await probeConnection(connection, knownHostsOf(path));
  for (const step of report.steps) (step.ok ? io.out : io.err)(step.text);
  return report;
}

/** What may be shown of a connection: never a user name or password. */
export function publicView(connection: SavedConnection) {
  const target = describeTarget(connection.engine, connection.url);
  const problem = urlProblem(connection.engine, connection.url);
  return {
    id: connection.id,
    name: connection.name,
    engine: connection.engine,
    /** The old name of `engine`, kept for scripts that read it. */
    driver: connection.engine,
    host: target?.host ?? null,
    port: target?.port ?? null,
    database: target?.database ?? null,
    // A URL the file holds that cannot be used (the connection fails when
    // used): what is wrong with it, never the URL.
    ...(problem === null ? {} : { urlProblem: `url ${problem}` }),
    externalAccess: connection.externalAccess,
    aiPolicy: connection.aiPolicy,
    safeMode: connection.safeMode,
    ...planLimitsOf(connection),
  };
}

/** The plan limits a connection sets (none: nothing). */
export function planLimitsOf(connection: SavedConnection) {
  const { maxEstimatedRows: rows, maxEstimatedCost: cost } = connection;
  return {
    ...(rows === undefined ? {} : { maxEstimatedRows: rows }),
    ...(cost === undefined ? {} : { maxEstimatedCost: cost }),
  };
}

/** dbport's own known_hosts, beside connections.json. */
export function knownHostsOf(path: string): string {
  return join(dirname(path), KNOWN_HOSTS_FILE);
}
