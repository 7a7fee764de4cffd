/**
 * `dbport queries add|edit|list|remove`: the user's saved queries
 * (lib/app/queries.ts, docs/queries.md), each offered to AI clients as the
 * tool `q_<name>`. A query is checked as it is saved: its connection
 * exists, it holds one statement, and every `:name` in it is a declared
 * parameter (read by the engine's lexer, never inside strings, comments or
 * `::` casts) and every declared parameter is used.
 *
 * @module
 */

import { parseArgs } from "node:util";
import { loadConnections, type SavedConnection } from "../app/connections.ts";
import {
  editQueries,
  loadQueries,
  MAX_DESCRIPTION,
  PARAM_TYPES,
  parseParamSpec,
  QUERY_NAME,
  type QueryParam,
  type SavedQuery,
} from "../app/queries.ts";
import { classify } from "../db/sql/classifier.ts";
import { compileNamed, PlaceholderError } from "../db/sql/placeholders.ts";
import { messageOf } from "../base/message_of.ts";
import { table } from "./args.ts";
import { type CliIO, UsageError } from "./io.ts";

/** Usage of the queries command. */
export const QUERIES_USAGE = `Usage:
  dbport queries add --name NAME --connection ID_OR_NAME --sql SQL
                     [--param NAME:TYPE[:default=VALUE]]... [--description TEXT]
  dbport queries edit NAME [--name NEW] [--connection ..] [--sql ..]
                     [--param ..]... [--description ..]
                     (any --param replaces the whole parameter list)
  dbport queries list [--json]
  dbport queries remove NAME

Each saved query is the tool q_NAME for AI clients allowed on its connection.
SQL names its parameters :name; they are bound by the engine's protocol, never
written into the statement. TYPE: ${
  Object.keys(PARAM_TYPES).join(", ")
}. A parameter
with a default may be left out of a call.
The query runs like execute_query: vetted, read-only unless it writes, and a
write asks the user where the connection's Safe Mode says so.
AI clients see a new or changed query at their next tools/list (dbport sends no
list-changed notification).`;

const SPEC = {
  name: { type: "string" },
  connection: { type: "string" },
  sql: { type: "string" },
  param: { type: "string", multiple: true },
  description: { type: "string" },
  json: { type: "boolean" },
} as const;

interface Flags {
  name?: string;
  connection?: string;
  sql?: string;
  param?: string[];
  description?: string;
  json?: boolean;
}

function parse(command: string, args: string[]) {
  try {
    const { values, positionals } = parseArgs({
      args,
      options: SPEC,
      strict: true,
      allowPositionals: true,
    });
    return { flags: values as Flags, positionals };
  } catch (error) {
    throw new UsageError(
      `queries ${command}: ${messageOf(error).split("\n")[0]}`,
    );
  }
}

/** The connection named by id or name (any case). */
function findConnection(
  connections: readonly SavedConnection[],
  wanted: string,
): SavedConnection {
  const key = wanted.toLowerCase();
  const found = connections.find((c) => c.id === key) ??
    connections.find((c) => c.name.toLowerCase() === key);
  if (found === undefined) {
    throw new UsageError(
      `no saved connection is named ${
        JSON.stringify(wanted)
      } (dbport connections list shows them)`,
    );
  }
  return found;
}

/** Check a query against its connection's engine; throws naming the fault. */
function checked(query: SavedQuery, connection: SavedConnection): SavedQuery {
  if (!QUERY_NAME.test(query.name)) {
    throw new UsageError(
      `--name must be 1-48 lower-case letters, digits or _ starting with a letter (the tool is q_NAME), got ${
        JSON.stringify(query.name)
      }`,
    );
  }
  if (query.description.length > MAX_DESCRIPTION) {
    throw new UsageError(
      `--description is ${query.description.length} characters; the limit is ${MAX_DESCRIPTION} (every client reads it in tools/list)`,
    );
  }
  const lexed = classify(query.sql, connection.engine);
  if (!lexed.ok) throw new UsageError(`--sql: ${lexed.message}`);
  try {
    compileNamed(
      query.sql,
      connection.engine,
      query.params.map((param) => param.name),
    );
  } catch (error) {
    if (error instanceof PlaceholderError) {
      throw new UsageError(`--sql: ${error.message}`);
    }
    throw error;
  }
  return query;
}

function paramsOf(specs: readonly string[]): QueryParam[] {
  const params: QueryParam[] = [];
  for (const spec of specs) {
    let param: QueryParam;
    try {
      param = parseParamSpec(spec);
    } catch (error) {
      throw new UsageError(messageOf(error));
    }
    if (params.some((p) => p.name === param.name)) {
      throw new UsageError(`--param ${param.name} is given twice`);
    }
    params.push(param);
  }
  return params;
}

function paramText(param: QueryParam): string {
  return `${param.name}:${param.type}${
    param.default === undefined ? "" : `=${JSON.stringify(param.default)}`
  }`;
}

/** Where the command reads and writes. */
export interface QueriesPaths {
  connections: string;
  queries: string;
}

async function savedConnections(
  paths: QueriesPaths,
): Promise<SavedConnection[]> {
  const loaded = await loadConnections(paths.connections);
  if (!loaded.ok) throw new Error(loaded.message);
  return loaded.connections;
}

/** `queries add`: a new query, checked against its connection's engine. */
async function addQuery(
  paths: QueriesPaths,
  args: string[],
  io: CliIO,
): Promise<number> {
  const { flags, positionals } = parse("add", args);
  if (positionals.length > 0) {
    throw new UsageError(`queries add: unexpected ${positionals[0]}`);
  }
  for (const flag of ["name", "connection", "sql"] as const) {
    if (flags[flag] === undefined) {
      throw new UsageError(`queries add: --${flag} is required`);
    }
  }
  const connection = findConnection(
    await savedConnections(paths),
    flags.connection!,
  );
  const query = checked({
    name: flags.name!,
    connectionId: connection.id,
    sql: flags.sql!,
    params: paramsOf(flags.param ?? []),
    description: flags.description ?? "",
  }, connection);
  await editQueries(paths.queries, (fresh) => {
    if (fresh.some((q) => q.name === query.name)) {
      throw new UsageError(
        `a saved query is already named "${query.name}" (dbport queries edit ${query.name} changes it)`,
      );
    }
    return [...fresh, query];
  });
  io.out(
    `Saved the query "${query.name}" on ${
      JSON.stringify(connection.name)
    }: AI clients allowed on it get the tool q_${query.name} at their next tools/list.`,
  );
  return 0;
}

/** `queries edit NAME`: the fields given replace the saved ones. */
async function editQuery(
  paths: QueriesPaths,
  args: string[],
  io: CliIO,
): Promise<number> {
  const { flags, positionals } = parse("edit", args);
  const [name, ...more] = positionals;
  if (name === undefined || more.length > 0) {
    throw new UsageError("queries edit: name exactly one query");
  }
  const all = await savedConnections(paths);
  let done: { query: SavedQuery; connection: SavedConnection } | null = null;
  await editQueries(paths.queries, (fresh) => {
    const index = fresh.findIndex((q) => q.name === name);
    if (index < 0) {
      throw new UsageError(`no saved query is named ${JSON.stringify(name)}`);
    }
    const old = fresh[index]!;
    const connection = flags.connection === undefined
      ? all.find((c) => c.id === old.connectionId)
      : findConnection(all, flags.connection);
    if (connection === undefined) {
      throw new UsageError("the query's connection is gone: give --connection");
    }
    const next = checked({
      name: flags.name ?? old.name,
      connectionId: connection.id,
      sql: flags.sql ?? old.sql,
      params: flags.param === undefined ? old.params : paramsOf(flags.param),
      description: flags.description ?? old.description,
    }, connection);
    if (next.name !== old.name && fresh.some((q) => q.name === next.name)) {
      throw new UsageError(`a saved query is already named "${next.name}"`);
    }
    done = { query: next, connection };
    return fresh.map((q, i) => (i === index ? next : q));
  });
  const saved = done as
    | { query: SavedQuery; connection: SavedConnection }
    | null;
  io.out(
    `Saved the query "${saved!.query.name}" on ${
      JSON.stringify(saved!.connection.name)
    } (the tool q_${saved!.query.name}).`,
  );
  return 0;
}

/** `queries list [--json]`. */
async function listQueries(
  paths: QueriesPaths,
  args: string[],
  io: CliIO,
): Promise<number> {
  const { flags } = parse("list", args);
  const loaded = await loadQueries(paths.queries);
  if (!loaded.ok) throw new Error(loaded.message);
  const all = await savedConnections(paths).catch(() =>
    [] as SavedConnection[]
  );
  const nameOf = (id: string) =>
    all.find((c) => c.id === id)?.name ?? `(gone: ${id})`;
  if (flags.json) {
    io.out(JSON.stringify(
      loaded.queries.map((q) => ({
        ...q,
        tool: `q_${q.name}`,
        connection: nameOf(q.connectionId),
      })),
      null,
      2,
    ));
    return 0;
  }
  if (loaded.queries.length === 0) {
    io.out("No saved query. Add one: dbport queries add --help");
    return 0;
  }
  const rows = loaded.queries.map((q) => [
    `q_${q.name}`,
    nameOf(q.connectionId),
    q.params.map(paramText).join(", ") || "-",
    q.description || "-",
  ]);
  for (
    const line of table(
      ["TOOL", "CONNECTION", "PARAMETERS", "DESCRIPTION"],
      rows,
    )
  ) io.out(line);
  return 0;
}

/** `queries remove NAME`. */
async function removeQuery(
  paths: QueriesPaths,
  args: string[],
  io: CliIO,
): Promise<number> {
  const { positionals } = parse("remove", args);
  const [name, ...more] = positionals;
  if (name === undefined || more.length > 0) {
    throw new UsageError("queries remove: name exactly one query");
  }
  await editQueries(paths.queries, (fresh) => {
    if (!fresh.some((q) => q.name === name)) {
      throw new UsageError(`no saved query is named ${JSON.stringify(name)}`);
    }
    return fresh.filter((q) => q.name !== name);
  });
  io.out(`Removed the query "${name}" (and the tool q_${name}).`);
  return 0;
}

const SUBCOMMANDS = {
  add: addQuery,
  edit: editQuery,
  list: listQueries,
  remove: removeQuery,
} as const;

/** Run `dbport queries ...`; returns the exit status. */
export async function queriesCommand(
  paths: QueriesPaths,
  args: string[],
  io: CliIO,
): Promise<number> {
  const [sub = "", ...rest] = args;
  if (!Object.hasOwn(SUBCOMMANDS, sub)) {
    throw new UsageError(
      `queries: unknown subcommand ${JSON.stringify(sub)}\n\n${QUERIES_USAGE}`,
    );
  }
  return await SUBCOMMANDS[sub as keyof typeof SUBCOMMANDS](paths, rest, io);
}
