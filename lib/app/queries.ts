/**
 * The user's saved queries (`queries.json` in the app directory): a named,
 * described statement on one saved connection, with typed `:name`
 * parameters. Each becomes the tool `q_<name>` for the clients allowed on
 * its connection (lib/features/tools/saved_query.ts; docs/queries.md). The
 * file is edited under its lock, like `connections.json`, and a running
 * server follows its edits.
 *
 * @module
 */

import { isJsonObject } from "../protocol/jsonrpc.ts";
import type { Logger } from "../base/log.ts";
import type { LockOptions } from "./file_lock.ts";
import {
  editParsedFile,
  jsonList,
  type ListFile,
  loadParsedFile,
} from "./parsed_file.ts";

/** The file in the app directory. */
export const QUERIES_FILE = "queries.json";

/** A parameter's type, and the JSON Schema type its tool argument has. */
export const PARAM_TYPES = {
  text: "string",
  int: "integer",
  float: "number",
  bool: "boolean",
} as const;

/** A parameter's type name. */
export type ParamType = keyof typeof PARAM_TYPES;

/** A value a parameter takes. */
export type ParamValue = string | number | boolean;

/** One `:name` parameter of a saved query. */
export interface QueryParam {
  name: string;
  type: ParamType;
  /** Used when the call leaves the argument out; absent: required. */
  default?: ParamValue;
}

/** One saved query. */
export interface SavedQuery {
  /** Lower-case letters, digits and `_`; the tool is `q_<name>`. */
  name: string;
  /** The saved connection it runs on (its id, so a rename keeps it). */
  connectionId: string;
  /** One statement with `:name` parameters. */
  sql: string;
  params: QueryParam[];
  /** What the tool says it does (at most 200 characters). */
  description: string;
}

/** A query name: the tool name `q_<name>` stays short and valid. */
export const QUERY_NAME = /^[a-z][a-z0-9_]{0,47}$/;
/**
 * A parameter name: it is a property name of the tool's input schema, which
 * clients hold to 64 characters of this alphabet.
 */
export const PARAM_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,63}$/;
/**
 * Characters a description may not hold: control characters other than tab
 * and newline (a terminal escape in `queries list`, a NUL in tools/list) and
 * the bidirectional overrides that show text in another order than it reads.
 */
// deno-lint-ignore no-control-regex
const HIDDEN = /[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]/;
/** The longest description (tools/list shows it). */
export const MAX_DESCRIPTION = 200;
/** The longest statement (execute_query's limit). */
export const MAX_SQL = 102_400;

/** Parsed `queries.json`, or why not. */
export type QueriesResult =
  | { ok: true; queries: SavedQuery[] }
  | { ok: false; message: string };

const QUERY_KEYS = new Set([
  "name",
  "connectionId",
  "sql",
  "params",
  "description",
]);
const PARAM_KEYS = new Set(["name", "type", "default"]);

/** Whether `value` has the type `type` asks for. */
export function isParamValue(type: ParamType, value: unknown): boolean {
  switch (type) {
    case "text":
      return typeof value === "string";
    case "int":
      return typeof value === "number" && Number.isSafeInteger(value);
    case "float":
      return typeof value === "number" && Number.isFinite(value);
    case "bool":
      return typeof value === "boolean";
  }
}

/** Why a parameter is malformed, or null. */
function paramProblem(value: unknown): string | null {
  if (!isJsonObject(value)) return "must be an object";
  for (const key of Object.keys(value)) {
    if (!PARAM_KEYS.has(key)) return `has an unknown key "${key}"`;
  }
  if (typeof value.name !== "string" || !PARAM_NAME.test(value.name)) {
    return `.name must be 1-64 letters, digits and _ (not starting with a digit), got ${
      JSON.stringify(value.name)
    }`;
  }
  if (
    typeof value.type !== "string" || !Object.hasOwn(PARAM_TYPES, value.type)
  ) {
    return `.type must be one of ${Object.keys(PARAM_TYPES).join(", ")}, got ${
      JSON.stringify(value.type)
    }`;
  }
  if (
    "default" in value &&
    !isParamValue(value.type as ParamType, value.default)
  ) {
    return `.default must be ${
      value.type === "int" ? "an" : "a"
    } ${value.type}, got ${JSON.stringify(value.default)}`;
  }
  return null;
}

/** Why a saved query is malformed, or null. */
export function queryProblem(value: unknown): string | null {
  if (!isJsonObject(value)) return "must be an object";
  for (const key of Object.keys(value)) {
    if (!QUERY_KEYS.has(key)) return `has an unknown key "${key}"`;
  }
  if (typeof value.name !== "string" || !QUERY_NAME.test(value.name)) {
    return `.name must be 1-48 lower-case letters, digits or _ starting with a letter, got ${
      JSON.stringify(value.name)
    }`;
  }
  if (typeof value.connectionId !== "string" || value.connectionId === "") {
    return ".connectionId must be a saved connection's id";
  }
  if (
    typeof value.sql !== "string" || value.sql.trim() === "" ||
    value.sql.length > MAX_SQL
  ) {
    return `.sql must be one statement of at most ${MAX_SQL} characters`;
  }
  if (
    typeof value.description !== "string" ||
    value.description.length > MAX_DESCRIPTION
  ) {
    return `.description must be text of at most ${MAX_DESCRIPTION} characters`;
  }
  const hidden = HIDDEN.exec(value.description);
  if (hidden !== null) {
    return `.description holds the control character U+${
      hidden[0].charCodeAt(0).toString(16).toUpperCase().padStart(4, "0")
    } at character ${
      hidden.index + 1
    }: clients would show or run it as something else`;
  }
  if (!Array.isArray(value.params)) return ".params must be a list";
  const names = new Set<string>();
  for (const [i, param] of value.params.entries()) {
    const problem = paramProblem(param);
    if (problem !== null) {
      return `.params[${i}]${problem.startsWith(".") ? "" : " "}${problem}`;
    }
    const name = (param as { name: string }).name;
    if (names.has(name)) return `.params[${i}].name "${name}" is used twice`;
    names.add(name);
  }
  return null;
}

/** Parse `queries.json` text (an empty file holds no query). */
export function parseQueries(
  text: string,
  source = QUERIES_FILE,
): QueriesResult {
  const list = jsonList(text, source, "queries");
  if (!list.ok) return list;
  const names = new Set<string>();
  for (const [i, query] of list.items.entries()) {
    const problem = queryProblem(query);
    if (problem !== null) {
      return {
        ok: false,
        message: `Cannot read ${source}: queries[${i}]${
          problem.startsWith(".") ? "" : " "
        }${problem}`,
      };
    }
    const name = (query as SavedQuery).name;
    if (names.has(name)) {
      return {
        ok: false,
        message:
          `Cannot read ${source}: queries[${i}].name "${name}" is used twice`,
      };
    }
    names.add(name);
  }
  return { ok: true, queries: list.items as SavedQuery[] };
}

/** The text of `queries.json` holding `queries`. */
export function queriesText(queries: readonly SavedQuery[]): string {
  return JSON.stringify({ queries }, null, 2) + "\n";
}

/** queries.json as a list file (parsed_file.ts); a bad query refused. */
function queriesFile(path: string): ListFile<SavedQuery> {
  return {
    parse: (text) => {
      const parsed = parseQueries(text, path);
      return parsed.ok ? { ok: true, items: parsed.queries } : parsed;
    },
    text: (queries) => {
      for (const query of queries) {
        const problem = queryProblem(query);
        if (problem !== null) {
          throw new Error(
            `the query "${query.name}"${
              problem.startsWith(".") ? "" : " "
            }${problem}`,
          );
        }
      }
      return queriesText(queries);
    },
  };
}

/** Read the saved queries; a missing file holds none. */
export async function loadQueries(path: string): Promise<QueriesResult> {
  const loaded = await loadParsedFile(path, queriesFile(path));
  return loaded.ok ? { ok: true, queries: loaded.items } : loaded;
}

/**
 * Change the saved queries under the file's lock: `change` gets them as the
 * file holds them now and returns the new list; it may throw to refuse
 * (nothing is written). A malformed file is never overwritten.
 */
export function editQueries(
  path: string,
  change: (
    fresh: SavedQuery[],
  ) => readonly SavedQuery[] | Promise<readonly SavedQuery[]>,
  options: LockOptions = {},
): Promise<readonly SavedQuery[]> {
  return editParsedFile(path, queriesFile(path), change, options);
}

/**
 * A `--param` value: `name:type` or `name:type:default=VALUE` (VALUE read
 * as the type: `10`, `2.5`, `true`, or any text).
 */
export function parseParamSpec(spec: string): QueryParam {
  const match = /^([A-Za-z_][A-Za-z0-9_]{0,63}):([a-z]+)(?::default=([^]*))?$/
    .exec(
      spec,
    );
  if (match === null) {
    throw new Error(
      `--param ${
        JSON.stringify(spec)
      } must be NAME:TYPE or NAME:TYPE:default=VALUE (NAME: 1-64 letters, digits or _; TYPE: ${
        Object.keys(PARAM_TYPES).join(", ")
      })`,
    );
  }
  const [, name, type, text] = match as unknown as [
    string,
    string,
    string,
    string | undefined,
  ];
  if (!Object.hasOwn(PARAM_TYPES, type)) {
    throw new Error(
      `--param ${JSON.stringify(spec)}: the type "${type}" is not one of ${
        Object.keys(PARAM_TYPES).join(", ")
      }`,
    );
  }
  const param: QueryParam = { name, type: type as ParamType };
  if (text !== undefined) {
    const value = defaultOf(param.type, text);
    if (value === undefined) {
      throw new Error(
        `--param ${JSON.stringify(spec)}: the default ${
          JSON.stringify(text)
        } is not ${type === "int" ? "an" : "a"} ${type}`,
      );
    }
    param.default = value;
  }
  return param;
}

function defaultOf(type: ParamType, text: string): ParamValue | undefined {
  switch (type) {
    case "text":
      return text;
    case "int":
      return /^-?[0-9]+$/.test(text) && Number.isSafeInteger(Number(text))
        ? Number(text)
        : undefined;
    case "float": {
      const value = Number(text);
      return text.trim() !== "" && Number.isFinite(value) ? value : undefined;
    }
    case "bool":
      return text === "true" ? true : text === "false" ? false : undefined;
  }
}

/** The saved queries a running server serves, replaced when the file changes. */
export class QueryStore {
  #queries: readonly SavedQuery[];

  constructor(initial: readonly SavedQuery[] = []) {
    this.#queries = initial;
  }

  /** Every saved query, in file order. */
  all(): readonly SavedQuery[] {
    return this.#queries;
  }

  /** Apply new file text (null: the file is gone, so nothing is saved). */
  apply(text: string | null, source: string, log: Logger): boolean {
    const parsed = parseQueries(text ?? "", source);
    if (!parsed.ok) {
      log(`dbport: ${parsed.message}; keeping the saved queries in force`);
      return false;
    }
    this.#queries = parsed.queries;
    return true;
  }
}
