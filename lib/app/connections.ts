/**
 * The user's saved connections (`connections.json` in the app data directory,
 * mode 0600): what each connection reaches and the user's policy for it.
 *
 * Parsing returns a result naming the exact field at fault; a malformed file
 * is never overwritten, and a running server keeps what it had.
 *
 * @module
 */

import { isJsonObject } from "../protocol/jsonrpc.ts";
import { urlProblem, urlWithoutSecrets } from "../db/target.ts";
import * as s from "../base/schema.ts";
import { checkSshSetting, type SshSetting } from "../db/ssh/setting.ts";
import type { AiLogin, DriverSpec } from "../db/open_driver.ts";
import { type Engine, ENGINE_NAMES, ENGINES, isEngine } from "../db/engines.ts";
import { editFile, type LockOptions } from "./file_lock.ts";
import {
  editParsedFile,
  jsonList,
  type ListFile,
  loadParsedFile,
} from "./parsed_file.ts";
import { checkPrivateColumns } from "../db/private_columns.ts";

/** Whether external (MCP) clients may use a connection, and how far. */
export const EXTERNAL_ACCESS = ["blocked", "readOnly", "readWrite"] as const;
/** Whether the AI may use a connection without asking. */
export const AI_POLICIES = ["alwaysAllow", "askEachTime", "never"] as const;
/** How statements are confirmed on the host. */
export const SAFE_MODES = ["silent", "alert", "alertFull", "readOnly"] as const;
/** How a write that asks for approval is previewed (docs/security.md "Write previews"). */
export const WRITE_PREVIEWS = ["dryRun", "estimate", "off"] as const;
export type WritePreviewMode = typeof WRITE_PREVIEWS[number];

export type ExternalAccess = typeof EXTERNAL_ACCESS[number];
export type AiPolicy = typeof AI_POLICIES[number];
export type SafeMode = typeof SAFE_MODES[number];

/** One saved connection. */
export interface SavedConnection {
  /** A UUID. */
  id: string;
  name: string;
  /** Read from the old field name `driver` too (files written before 0.2). */
  engine: Engine;
  /** Where it goes; credentials may be in it. */
  url: string;
  /** The password, when it is not in the URL. */
  password?: string;
  externalAccess: ExternalAccess;
  aiPolicy: AiPolicy;
  safeMode: SafeMode;
  /**
   * A least-privilege login every AI read runs as (made by `connections
   * harden`); approved writes run as the saved login.
   */
  aiLogin?: AiLogin;
  /**
   * `dryRun` (the default): a write that asks for approval first runs in a
   * transaction that is rolled back, and the user sees what it changes;
   * `estimate`: the engine's plan estimate only; `off`: no preview.
   */
  writePreview?: WritePreviewMode;
  /** The password from this environment variable of the server. */
  passwordEnv?: string;
  /** The password from this program's output, run without a shell. */
  passwordCommand?: string[];
  /** Reach the database through SSH (docs/connections.md "SSH tunnels"). */
  ssh?: SshSetting;
  /**
   * Reads whose planned row estimate exceeds this are refused before they
   * run (docs/security.md "Reads refused by their plan"). Off when absent.
   */
  maxEstimatedRows?: number;
  /** Likewise for the plan's total cost (PostgreSQL; MariaDB 11+). */
  maxEstimatedCost?: number;
  /**
   * Columns no AI client may read: `schema.table.column` entries and
   * patterns (db/private_columns.ts), enforced by the engine through the AI
   * login's grants (PostgreSQL, MariaDB) or the read handle's authorizer
   * (SQLite).
   */
  privateColumns?: string[];
}

/** The policy defaults of a new connection. */
export const CONNECTION_DEFAULTS = Object.freeze(
  {
    externalAccess: "readOnly",
    aiPolicy: "alwaysAllow",
    safeMode: "alert",
  } as const,
);

/** What a driver needs of a saved connection (never its policy). */
export function driverSpec(connection: SavedConnection): DriverSpec {
  // Field by field, in this order (issue 38: it is built for every call,
  // and each spread of an empty object was one more object).
  const spec: DriverSpec = {
    id: connection.id,
    engine: connection.engine,
    url: connection.url,
  };
  if (connection.password !== undefined) spec.password = connection.password;
  if (connection.aiLogin !== undefined) spec.aiLogin = connection.aiLogin;
  if (connection.passwordEnv !== undefined) {
    spec.passwordSource = { env: connection.passwordEnv };
  } else if (connection.passwordCommand !== undefined) {
    spec.passwordSource = { command: connection.passwordCommand };
  }
  if (connection.ssh !== undefined) spec.ssh = connection.ssh;
  if (connection.privateColumns?.length) {
    spec.privateColumns = connection.privateColumns;
  }
  spec.name = connection.name;
  return spec;
}

/** The outcome of parsing connections. */
export type ConnectionsResult =
  | {
    ok: true;
    connections: SavedConnection[];
    /**
     * Connections kept whose URL cannot be used (`keepUnusable`): what is
     * wrong with each, naming the connection, its URL never quoted. Each
     * fails when used, saying so (db/open_driver.ts); the others serve.
     */
    unusable?: string[];
  }
  | { ok: false; message: string };

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Whether `value` is a UUID in its textual form. */
export function isUuid(value: string): boolean {
  return UUID.test(value);
}

/** The field that named the engine before it was called `engine`. */
const LEGACY_ENGINE_KEY = "driver";

/** A check of one value: its problem, or null. */
const when =
  (ok: (value: unknown) => boolean, problem: string): s.Check => (value) =>
    ok(value) ? null : problem;

/**
 * One saved connection as `connections.json` holds it. The checks that
 * depend on the engine (the URL's form, a cost limit) are
 * {@linkcode checkConnectionField}'s.
 */
export const CONNECTION_SCHEMA = s.object({
  id: s.refine(
    s.string(),
    when((v) => typeof v === "string" && isUuid(v), "must be a UUID"),
  ),
  name: s.refine(
    s.string({ maxLength: 200 }),
    when(
      (v) => typeof v === "string" && v.trim() !== "" && v.length <= 200,
      "must be a non-empty string of at most 200 characters",
    ),
  ),
  engine: s.choice(ENGINE_NAMES),
  url: s.refine(
    s.string(),
    when(
      (v) => typeof v === "string" && v.trim() !== "",
      "must be a non-empty string",
    ),
  ),
  password: s.string(),
  externalAccess: s.choice(EXTERNAL_ACCESS),
  aiPolicy: s.choice(AI_POLICIES),
  safeMode: s.choice(SAFE_MODES),
  aiLogin: s.refine(
    s.object({ user: s.string(), password: s.string() }, ["user", "password"]),
    when(
      (v) =>
        isJsonObject(v) && typeof v.user === "string" && v.user !== "" &&
        typeof v.password === "string" &&
        Object.keys(v).every((k) => k === "user" || k === "password"),
      'must be {"user": "...", "password": "..."}',
    ),
  ),
  writePreview: s.choice(WRITE_PREVIEWS),
  passwordEnv: s.refine(
    s.string(),
    when(
      (v) => typeof v === "string" && /^[A-Za-z_][A-Za-z0-9_]*$/.test(v),
      "must name an environment variable",
    ),
  ),
  passwordCommand: s.refine(
    s.array(s.string()),
    when(
      (v) =>
        Array.isArray(v) && v.length > 0 &&
        v.every((part) => typeof part === "string" && part !== ""),
      'must be ["program", "arg", ...] (run without a shell)',
    ),
  ),
  ssh: s.refine<s.AnySchema, SshSetting>(
    s.any("SSH tunnel (docs/connections.md)"),
    checkSshSetting,
  ),
  maxEstimatedRows: s.refine(
    s.integer({ minimum: 1 }),
    when(
      (v) => Number.isSafeInteger(v) && (v as number) > 0,
      "must be a positive whole number of rows",
    ),
  ),
  maxEstimatedCost: s.refine(
    s.number(),
    when(
      (v) => typeof v === "number" && Number.isFinite(v) && v > 0,
      "must be a positive number (the planner's cost units)",
    ),
  ),
  privateColumns: s.refine(s.array(s.string()), checkPrivateColumns),
}, ["id", "name", "engine", "url", "externalAccess", "aiPolicy", "safeMode"]);

// The file's type is the connection's own: a field added to one and not the
// other fails `deno task check`.
const _sameFields: s.Same<SavedConnection, s.Infer<typeof CONNECTION_SCHEMA>> =
  true;

const FIELDS = CONNECTION_SCHEMA.properties;
const KEYS = Object.keys(FIELDS);

/** Check one field of a connection; a problem text or null. */
export function checkConnectionField(
  key: string,
  value: unknown,
  engine?: string,
): string | null {
  const field = key === LEGACY_ENGINE_KEY
    ? FIELDS.engine
    : Object.hasOwn(FIELDS, key)
    ? FIELDS[key as keyof typeof FIELDS]
    : undefined;
  if (field === undefined) {
    return `is not a connection field (known: ${KEYS.join(", ")})`;
  }
  // SQLite's plans carry no cost: a limit that could never apply is refused.
  if (
    key === "maxEstimatedCost" && isEngine(engine) &&
    !ENGINES[engine].plansCarryCost
  ) {
    return `does not apply to ${
      ENGINES[engine].label
    }, whose plans carry no cost (use maxEstimatedRows)`;
  }
  const issue = s.issueOf(field, value);
  if (issue !== null) {
    return issue.kind === "invalid"
      ? issue.problem
      : `must be ${issue.kind === "type" ? issue.expected : "a value"}`;
  }
  return key === "url" ? checkUrl(value as string, engine) : null;
}

function checkUrl(url: string, engine: string | undefined): string | null {
  return isEngine(engine) ? urlProblem(engine, url) : null;
}

/** Parse `connections.json` text (an empty file holds no connection). */
export function parseConnections(
  text: string,
  source = "connections.json",
  options: {
    /**
     * A connection whose URL is of the wrong form for its engine (or
     * cannot be read) is kept and named in `unusable`, rather than failing
     * the whole file: what a server does, so that one bad URL never stops
     * it nor the other connections (outsider stop 54).
     */
    keepUnusable?: boolean;
  } = {},
): ConnectionsResult {
  const list = jsonList(text, source, "connections");
  if (!list.ok) return list;
  const fail = (message: string): ConnectionsResult => ({
    ok: false,
    message: `Cannot read ${source}: ${message}`,
  });
  const extra = Object.keys(list.object).filter((key) => key !== "connections");
  if (extra.length > 0) return fail(`unknown key "${extra[0]}"`);
  const connections: SavedConnection[] = [];
  const unusable: string[] = [];
  const ids = new Set<string>();
  const names = new Set<string>();
  for (const [index, item] of list.items.entries()) {
    const at = `connections[${index}]`;
    if (!isJsonObject(item)) return fail(`${at} must be an object`);
    // A file written before the field was renamed says "driver"; its
    // messages name the field as the file does.
    const legacy = LEGACY_ENGINE_KEY in item;
    if (legacy && "engine" in item) {
      return fail(`${at} names its engine twice ("engine" and "driver")`);
    }
    const engineKey = legacy ? LEGACY_ENGINE_KEY : "engine";
    for (const key of Object.keys(item)) {
      if (!Object.hasOwn(FIELDS, key) && key !== LEGACY_ENGINE_KEY) {
        return fail(`${at}.${key} ${checkConnectionField(key, item[key])}`);
      }
    }
    const merged: Record<string, unknown> = { ...CONNECTION_DEFAULTS, ...item };
    for (const key of ["id", "name", engineKey, "url"]) {
      if (!(key in merged)) return fail(`${at}.${key} is missing`);
    }
    for (const [key, field] of Object.entries(merged)) {
      const problem = checkConnectionField(
        key,
        field,
        String(merged[engineKey]),
      );
      if (problem !== null) {
        const named = typeof merged.name === "string"
          ? ` (connection ${JSON.stringify(merged.name)})`
          : "";
        if (
          key === "url" && options.keepUnusable === true &&
          typeof field === "string" && field.trim() !== ""
        ) {
          unusable.push(`${at}.url ${problem}${named}`);
          continue;
        }
        // An ssh value may hold a passphrase: it is never quoted; a URL is
        // quoted without its password and secret parameters.
        return fail(
          `${at}.${key} ${problem}${key === "url" ? named : ""}${
            key === "ssh" || key === "password" ? "" : `, got ${
              JSON.stringify(
                key === "url" && typeof field === "string"
                  ? urlWithoutSecrets(field)
                  : field,
              )
            }`
          }`,
        );
      }
    }
    const { [LEGACY_ENGINE_KEY]: _legacy, ...fields } = merged;
    const connection = {
      ...fields,
      engine: merged[engineKey],
    } as SavedConnection;
    const id = connection.id.toLowerCase();
    if (ids.has(id)) return fail(`${at}.id "${connection.id}" is used twice`);
    const name = connection.name.toLowerCase();
    if (names.has(name)) {
      return fail(`${at}.name "${connection.name}" is used twice`);
    }
    ids.add(id);
    names.add(name);
    connections.push({ ...connection, id });
  }
  return {
    ok: true,
    connections,
    ...(unusable.length === 0 ? {} : { unusable }),
  };
}

/**
 * connections.json as a list file (parsed_file.ts): a connection whose URL
 * cannot be used is kept (`keepUnusable`), named in `unusable` when given.
 */
function connectionsFile(
  path: string,
  unusable?: (problems: string[]) => void,
): ListFile<SavedConnection> {
  return {
    parse: (text) => {
      const parsed = parseConnections(text, path, { keepUnusable: true });
      if (!parsed.ok) return parsed;
      if (parsed.unusable !== undefined) unusable?.(parsed.unusable);
      return { ok: true, items: parsed.connections };
    },
    text: connectionsText,
  };
}

/**
 * Read the saved connections; a missing file holds none. A connection whose
 * URL cannot be used is kept and named in `unusable` (it fails when used).
 */
export async function loadConnections(
  path: string,
): Promise<ConnectionsResult> {
  let unusable: string[] | undefined;
  const loaded = await loadParsedFile(
    path,
    connectionsFile(path, (problems) => void (unusable = problems)),
  );
  return loaded.ok
    ? {
      ok: true,
      connections: loaded.items,
      ...(unusable === undefined ? {} : { unusable }),
    }
    : loaded;
}

/** The text of `connections.json` holding `connections`. */
export function connectionsText(
  connections: readonly SavedConnection[],
): string {
  return JSON.stringify({ connections }, null, 2) + "\n";
}

/**
 * Change the saved connections under the file's lock: `change` gets the
 * connections as the file holds them now (never a copy read earlier) and
 * returns the new list; it may throw to refuse (nothing is written). A
 * malformed file is never overwritten. Returns the list written.
 */
export function editConnections(
  path: string,
  change: (
    fresh: SavedConnection[],
  ) => readonly SavedConnection[] | Promise<readonly SavedConnection[]>,
  options: LockOptions = {},
): Promise<readonly SavedConnection[]> {
  return editParsedFile(path, connectionsFile(path), change, options);
}

/** Replace the saved connections whole (under the lock), mode 0600. */
export async function saveConnections(
  path: string,
  connections: readonly SavedConnection[],
): Promise<void> {
  await editFile(path, () => connectionsText(connections));
}

/**
 * The connection's preview mode. A dry run runs as the saved login, before
 * anyone approves, and its count or error reaches the client: on a connection
 * whose AI reads run as a least-privilege `aiLogin`, that would let a client
 * probe what only the saved login can see, so there it is the engine's
 * estimate unless the user asks for more (docs/security.md "Write previews";
 * `connections harden` writes `estimate` down).
 */
export function previewMode(
  connection: SavedConnection,
): "dryRun" | "estimate" | "off" {
  return connection.writePreview ??
    (connection.aiLogin === undefined ? "dryRun" : "estimate");
}
