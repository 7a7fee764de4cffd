/**
 * `dbport connections set NAME --flag…`: a saved connection's fields, its
 * plan limits and its private columns (the AI login's grants brought in
 * step at once).
 *
 * @module
 */

import { messageOf } from "../../base/message_of.ts";
import {
  checkConnectionField,
  editConnections,
  type SavedConnection,
} from "../../app/connections.ts";
import { ENGINES } from "../../db/engines.ts";
import { type Parsed, parseFlags, stringFlag } from "../args.ts";
import {
  privateColumnsProblem,
  syncPrivateColumns,
} from "../../app/private_sync.ts";
import { parsePrivateList } from "../../db/private_columns.ts";
import { SSH_FLAG_SPEC, sshFields } from "../ssh.ts";
import { type CliIO, UsageError } from "../io.ts";
import {
  engineFlag,
  FIELD_SPEC,
  fieldsOf,
  find,
  load,
  sameName,
} from "./common.ts";

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

export async function set(
  path: string,
  args: string[],
  io: CliIO,
): Promise<number> {
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
