/**
 * The app's settings (`settings.json` in the app data directory).
 *
 * Every key is optional and defaulted; an unknown key or a value of the wrong
 * shape is refused with a message naming it. Parsing returns a result.
 *
 * @module
 */

import { messageOf } from "../base/message_of.ts";
import * as s from "../base/schema.ts";
import { isJsonObject } from "../protocol/jsonrpc.ts";
import { editFile } from "./file_lock.ts";

/** How the server asks the user on this machine for consent. */
export type HostDialog =
  | "auto"
  | "terminal"
  | "os"
  | "console"
  | "deny"
  | { command: string[] };

/** Every setting, with defaults applied. */
export interface Settings {
  /**
   * Port to bind on 127.0.0.1; 0 lets the system choose a free one at each
   * start. Absent from the file, the first `serve` chooses one and writes it
   * there, so the address stays the same across restarts.
   */
  port: number;
  /** Whether every request needs a bearer token. */
  requireAuth: boolean;
  /** Web origins allowed to call the server from a browser. */
  allowedOrigins: string[];
  /** Rows a query returns when the client names no limit. */
  defaultRowLimit: number;
  /** The most rows a client may ask for. */
  maxRowLimit: number;
  /** Statement timeout when the client names none. */
  queryTimeoutSeconds: number;
  /** How consent is asked on this machine. */
  hostDialog: HostDialog;
  /** The app's "MCP server" switch. */
  enabled: boolean;
  /**
   * Whether the SQL that clients run is kept in the query history (the
   * `.../history` resource). The activity log keeps only a digest either way.
   */
  queryHistory: boolean;
  /**
   * The most bytes of JSON text a result's rows may take; rows past it are
   * left out, and the drivers stop reading there (no read can exhaust the
   * server's memory).
   */
  maxResultBytes: number;
  /** Longer text cells are cut, with a marker naming what was left out. */
  maxCellChars: number;
  /**
   * The answer budget of the discovery tools (`list_schemas`, `list_tables`,
   * `search_schema`, `describe_table`) and the schema resource, in bytes of
   * JSON text: what a model reads to find its way should cost a few thousand
   * tokens, not its whole context. Never more than `maxResultBytes`.
   */
  maxDiscoveryBytes: number;
  /**
   * The statement timeout of a write preview's dry run (docs/security.md
   * "Write previews"): a preview that cannot finish in time asks no one.
   */
  previewTimeoutSeconds: number;
  /**
   * How long an approval waits for the user on the host (a dialog, the
   * terminal, the console) before it ends as `user_cancelled`.
   */
  approvalTimeoutSeconds: number;
  /**
   * The most characters of a tool result's text (~ 4 per token): rows, cells
   * and entries past it are left out and said so. At most `maxResultBytes`.
   */
  maxAnswerChars: number;
  /** Where `export_query` writes its files; null: `<app dir>/exports`. */
  exportDirectory: string | null;
  /** The most rows one `export_query` file may hold. */
  maxExportRows: number;
  /** The most bytes one `export_query` file may grow to. */
  maxExportBytes: number;
  /**
   * The most bytes of `export_query` files the exports directory may hold in
   * all; null: `maxExportBytes` (lib/features/tools/export_quota.ts).
   */
  maxExportTotalBytes: number | null;
  /** Whether `serve` starts the browser console (a second 127.0.0.1 listener). */
  console: boolean;
  /** The console's port on 127.0.0.1; 0 for a new one at each start (absent: chosen once, like `port`). */
  consolePort: number;
}

/** The defaults (docs/wire.md "HTTP surface": the web origins of supported AI clients). */
export const DEFAULT_SETTINGS: Readonly<Settings> = Object.freeze({
  port: 0,
  requireAuth: true,
  allowedOrigins: ["https://claude.ai", "https://chatgpt.com"],
  defaultRowLimit: 500,
  maxRowLimit: 10000,
  queryTimeoutSeconds: 30,
  hostDialog: "auto",
  enabled: true,
  queryHistory: true,
  maxResultBytes: 1_000_000,
  maxCellChars: 20_000,
  maxDiscoveryBytes: 60_000,
  previewTimeoutSeconds: 5,
  approvalTimeoutSeconds: 120,
  maxAnswerChars: 40_000,
  exportDirectory: null,
  maxExportRows: 10_000_000,
  maxExportBytes: 2 * 1024 ** 3,
  maxExportTotalBytes: null,
  console: true,
  consolePort: 0,
});

/** The outcome of {@linkcode parseSettings}. */
export type SettingsResult = { ok: true; settings: Settings } | {
  ok: false;
  message: string;
};

const integer = (minimum: number, maximum: number) =>
  s.integer({ minimum, maximum });

const origins: s.Check = (value) => {
  if (!Array.isArray(value)) return "must be an array of origins";
  for (const item of value) {
    if (typeof item !== "string") return "must be an array of origins";
    let url: URL;
    try {
      url = new URL(item);
    } catch {
      return `has "${item}", which is not an origin like https://claude.ai`;
    }
    if (url.origin !== item) {
      return `has "${item}", which is not an origin like https://claude.ai`;
    }
  }
  return null;
};

const hostDialog: s.Check = (value) => {
  if (
    value === "auto" || value === "terminal" || value === "os" ||
    value === "console" || value === "deny"
  ) return null;
  if (
    isJsonObject(value) && Object.keys(value).length === 1 &&
    Array.isArray(value.command) && value.command.length > 0 &&
    value.command.every((part) => typeof part === "string" && part !== "")
  ) return null;
  return 'must be "auto", "terminal", "os", "console", "deny" or {"command": ["program", ...]}';
};

const absolutePath: s.Check = (value) =>
  value === null ||
    typeof value === "string" && (value.startsWith("/") ||
        /^[A-Za-z]:[\\/]/.test(value))
    ? null
    : "must be null or an absolute path";

/** The settings file: every key optional, each checked with its bounds. */
export const SETTINGS_SCHEMA = s.object({
  port: integer(0, 65535),
  requireAuth: s.boolean(),
  allowedOrigins: s.refine(s.array(s.string()), origins),
  defaultRowLimit: integer(1, 1_000_000),
  maxRowLimit: integer(1, 1_000_000),
  queryTimeoutSeconds: integer(1, 300),
  hostDialog: s.refine<s.AnySchema, HostDialog>(
    s.any('"auto", "terminal", "os", "console", "deny" or {"command": [...]}'),
    hostDialog,
  ),
  enabled: s.boolean(),
  queryHistory: s.boolean(),
  maxResultBytes: integer(10_000, 100_000_000),
  maxCellChars: integer(100, 10_000_000),
  maxDiscoveryBytes: integer(10_000, 100_000_000),
  previewTimeoutSeconds: integer(1, 300),
  approvalTimeoutSeconds: integer(1, 3600),
  maxAnswerChars: integer(1_000, 100_000_000),
  exportDirectory: s.refine(s.nullable(s.string()), absolutePath),
  maxExportRows: integer(1, 1_000_000_000),
  maxExportBytes: integer(1_000, 1024 ** 4),
  maxExportTotalBytes: s.nullable(integer(1_000, 1024 ** 5)),
  console: s.boolean(),
  consolePort: integer(0, 65535),
});

// The file's type is the settings' own, every key optional: a key added to
// one and not the other fails `deno task check`.
const _sameKeys: s.Same<Partial<Settings>, s.Infer<typeof SETTINGS_SCHEMA>> =
  true;

/** The known keys, in order. */
const KEYS = Object.keys(SETTINGS_SCHEMA.properties) as (keyof Settings)[];

/** What is wrong with `value` for setting `key` (`must be ...`), or null. */
function problemOf(key: keyof Settings, value: unknown): string | null {
  const issue = s.issueOf(SETTINGS_SCHEMA.properties[key], value, {
    bounds: true,
  });
  if (issue === null) return null;
  // A setting is one value: a type's words or its own check's.
  return issue.kind === "invalid"
    ? issue.problem
    : `must be ${issue.kind === "type" ? issue.expected : "a value"}`;
}

function isKey(key: string): key is keyof Settings {
  return Object.hasOwn(SETTINGS_SCHEMA.properties, key);
}

/** Parse settings text (an empty file means every default). */
export function parseSettings(
  text: string,
  source = "settings.json",
): SettingsResult {
  if (text.trim() === "") return { ok: true, settings: defaults() };
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    const detail = messageOf(error);
    return { ok: false, message: `Cannot parse ${source}: ${detail}` };
  }
  if (!isJsonObject(value)) {
    return {
      ok: false,
      message: `Cannot read ${source}: it must be a JSON object`,
    };
  }
  const unknown = Object.keys(value).filter((key) => !isKey(key));
  if (unknown.length > 0) {
    return {
      ok: false,
      message: `Cannot read ${source}: unknown ${
        unknown.length === 1 ? "key" : "keys"
      } ${unknown.map((key) => `"${key}"`).join(", ")} (known: ${
        KEYS.join(", ")
      })`,
    };
  }
  const settings: Record<string, unknown> = { ...defaults() };
  for (const key of KEYS) {
    if (!(key in value)) continue;
    const problem = problemOf(key, value[key]);
    if (problem !== null) {
      return {
        ok: false,
        message: `Cannot read ${source}: "${key}" ${problem}, got ${
          JSON.stringify(value[key])
        }`,
      };
    }
    settings[key] = value[key];
  }
  // Every key was either a default or passed its field's check.
  const parsed = settings as unknown as Settings;
  if (parsed.defaultRowLimit > parsed.maxRowLimit) {
    return {
      ok: false,
      message:
        `Cannot read ${source}: "defaultRowLimit" (${parsed.defaultRowLimit}) exceeds "maxRowLimit" (${parsed.maxRowLimit})`,
    };
  }
  // The default answer budget yields to a smaller byte budget; one the user
  // set may not exceed it.
  if (
    "maxAnswerChars" in value && parsed.maxAnswerChars > parsed.maxResultBytes
  ) {
    return {
      ok: false,
      message:
        `Cannot read ${source}: "maxAnswerChars" (${parsed.maxAnswerChars}) exceeds "maxResultBytes" (${parsed.maxResultBytes})`,
    };
  }
  return { ok: true, settings: parsed };
}

function defaults(): Settings {
  return structuredClone<Settings>(DEFAULT_SETTINGS);
}

/** Read settings from a file; a missing file means every default. */
export async function loadSettings(path: string): Promise<SettingsResult> {
  let text: string;
  try {
    text = await Deno.readTextFile(path);
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) {
      return { ok: true, settings: defaults() };
    }
    const detail = messageOf(error);
    return { ok: false, message: `Cannot read ${path}: ${detail}` };
  }
  return parseSettings(text, path);
}

/** A settings file's text: every key it is given, as JSON. */
export function settingsText(settings: Partial<Settings>): string {
  return JSON.stringify(settings, null, 2) + "\n";
}

/**
 * Write a settings file (0600, atomically) under its lock (file_lock.ts), so
 * a concurrent editor waits rather than being overwritten.
 */
export async function writeSettingsFile(
  path: string,
  settings: Partial<Settings>,
): Promise<void> {
  await editFile(path, () => settingsText(settings));
}

/** The keys a settings file's text sets itself (none for a missing or unreadable one). */
export function settingsKeysOf(text: string | null): Set<string> {
  try {
    const value: unknown = JSON.parse(text ?? "");
    return new Set(isJsonObject(value) ? Object.keys(value) : []);
  } catch {
    return new Set();
  }
}

/**
 * The value `settings set KEY VALUE` means: the JSON it reads as (`8765`,
 * `true`, `["https://a.example"]`), else the text itself (`terminal`).
 */
export function settingValue(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/**
 * `settings set`: the file's own keys with `key` set to `value`, checked as
 * the file is at every start; the message names what is allowed.
 */
export async function setSetting(
  path: string,
  key: string,
  value: unknown,
): Promise<SettingsResult> {
  if (!isKey(key)) {
    return {
      ok: false,
      message: `Unknown setting "${key}" (known: ${KEYS.join(", ")})`,
    };
  }
  const problem = problemOf(key, value);
  if (problem !== null) {
    return {
      ok: false,
      message: `"${key}" ${problem}, got ${JSON.stringify(value)}`,
    };
  }
  // Under the file's lock: re-read, change one key, replace atomically.
  let result: SettingsResult | undefined;
  await editFile(path, (text) => {
    const current = parseSettings(text ?? "", path);
    if (!current.ok) {
      result = current;
      return null;
    }
    const own = (text ?? "").trim() === ""
      ? {}
      : JSON.parse(text!) as Partial<Settings>;
    const next = { ...own, [key]: value };
    result = parseSettings(JSON.stringify(next), path);
    return result.ok ? settingsText(next) : null;
  });
  return result!;
}
