/**
 * `dbport client-config <client>`: a configuration snippet ready to paste
 * into an MCP client. Desktop clients that spawn servers get the stdio bridge
 * by absolute path (no token: the bridge takes the server's own, from the
 * handshake file); `http` gets the endpoint and a freshly minted token of the
 * chosen level.
 *
 * @module
 */

import { cliCommand } from "../app/cli_command.ts";
import { isOneOf } from "../base/one_of.ts";
import { DEFAULT_TOKEN_LIFETIME, parseDuration } from "../app/duration.ts";
import { isProcessAlive } from "../app/handshake_file.ts";
import { inAppDir } from "../app/paths.ts";
import { onPath } from "../app/cli_command.ts";
import { loadSettings } from "../app/settings.ts";
import type { StateDb } from "../app/state_db.ts";
import { isLevel, type Level, LEVELS, TokenStore } from "../app/tokens.ts";
import { parseHandshake } from "../protocol/handshake.ts";
import {
  BRIDGE_EXECUTABLE,
  HANDSHAKE_FILE,
  HOME_ENV,
  SERVICE_NAME,
  SETTINGS_FILE,
} from "../base/identity.ts";
import { parseFlags, stringFlag } from "./args.ts";
import { BRIDGE, BRIDGE_PERMISSIONS } from "./integration.ts";
import { type CliIO, UsageError } from "./io.ts";
import { parseConnections } from "./tokens.ts";

/** The clients a snippet can be printed for. */
export const CLIENTS = [
  "claude-desktop",
  "claude-code",
  "cursor",
  "vscode",
  "http",
] as const;
export type ClientName = typeof CLIENTS[number];

/** Usage of the client-config command. */
export const CLIENT_CONFIG_USAGE = `Usage:
  dbport client-config claude-desktop|claude-code|cursor|vscode
  dbport client-config http [--level ${LEVELS.join("|")}] [--name NAME]
                            [--connections ID,ID] [--expires DURATION|never]

Desktop clients start the ${BRIDGE_EXECUTABLE} stdio bridge, which finds the
running server and its token itself. "http" mints a new token (default level
readOnly) and prints the endpoint with it; the token is shown once.`;

/** How a client starts the bridge. */
export interface BridgeLaunch {
  command: string;
  args: string[];
  env: Record<string, string>;
}

/**
 * The bridge as the client should start it: `dbport-mcp` by name when
 * `deno task install` put it on the PATH (a config that survives a Deno
 * upgrade and reads the same on another machine); else an installed or
 * compiled one by its path; else `deno run` of this checkout's `bridge.ts`,
 * with `deno` as found on the PATH (a symlink kept, never the resolved
 * binary, which moves with each upgrade).
 */
export async function bridgeLaunch(
  env: (name: string) => string | undefined = (name) => Deno.env.get(name),
): Promise<BridgeLaunch> {
  const home = env(HOME_ENV);
  const vars = home === undefined ? {} : { [HOME_ENV]: home };
  const path = env("PATH") ?? "";
  if (onPath(BRIDGE_EXECUTABLE, path) !== null) {
    return { command: BRIDGE_EXECUTABLE, args: [], env: vars };
  }
  const root = new URL("../../", import.meta.url).pathname;
  const candidates = [
    `${
      env("DENO_INSTALL_ROOT") ?? `${env("HOME") ?? ""}/.deno`
    }/bin/${BRIDGE_EXECUTABLE}`,
    `${root}dist/${BRIDGE_EXECUTABLE}`,
  ];
  for (const candidate of candidates) {
    const info = await Deno.stat(candidate).catch(() => null);
    if (info?.isFile && (info.mode ?? 0o111) & 0o111) {
      return { command: candidate, args: [], env: vars };
    }
  }
  return {
    command: onPath("deno", path) ?? Deno.execPath(),
    args: ["run", ...BRIDGE_PERMISSIONS, BRIDGE],
    env: vars,
  };
}

function json(value: unknown): string {
  return JSON.stringify(value, null, 2);
}

/** A stdio client's entry: command, args and env (only when there is one). */
function stdioEntry(launch: BridgeLaunch): Record<string, unknown> {
  return {
    command: launch.command,
    args: launch.args,
    ...(Object.keys(launch.env).length === 0 ? {} : { env: launch.env }),
  };
}

/** A shell word, quoted only when it needs to be. */
function shellWord(word: string): string {
  return /^[A-Za-z0-9_\-./:=@,+]+$/.test(word)
    ? word
    : `'${word.replaceAll("'", `'\\''`)}'`;
}

/** Where Claude Desktop keeps its configuration, per platform. */
function claudeDesktopFile(): string {
  switch (Deno.build.os) {
    case "darwin":
      return "~/Library/Application Support/Claude/claude_desktop_config.json";
    case "windows":
      return "%APPDATA%\\Claude\\claude_desktop_config.json";
    default:
      return "~/.config/Claude/claude_desktop_config.json";
  }
}

/** The snippet for a client that starts the bridge. */
export function stdioSnippet(
  client: Exclude<ClientName, "http">,
  launch: BridgeLaunch,
): string {
  switch (client) {
    case "claude-desktop":
      return [
        `Add to ${claudeDesktopFile()} (merge with any "mcpServers" already there), then restart Claude Desktop:`,
        "",
        json({ mcpServers: { [SERVICE_NAME]: stdioEntry(launch) } }),
      ].join("\n");
    case "claude-code": {
      const env = Object.entries(launch.env).flatMap(([key, value]) => [
        "-e",
        `${key}=${value}`,
      ]);
      const command = [
        "claude",
        "mcp",
        "add",
        "--scope",
        "user",
        ...env,
        SERVICE_NAME,
        "--",
        launch.command,
        ...launch.args,
      ].map(shellWord).join(" ");
      return [
        "Run once (user scope: every project sees it):",
        "",
        command,
        "",
        "Or commit to a project's .mcp.json:",
        "",
        json({ mcpServers: { [SERVICE_NAME]: stdioEntry(launch) } }),
      ].join("\n");
    }
    case "cursor":
      return [
        "Add to ~/.cursor/mcp.json (or .cursor/mcp.json in a project):",
        "",
        json({ mcpServers: { [SERVICE_NAME]: stdioEntry(launch) } }),
      ].join("\n");
    case "vscode":
      return [
        'Add to .vscode/mcp.json in a workspace (or run "MCP: Open User Configuration"):',
        "",
        json({
          servers: { [SERVICE_NAME]: { type: "stdio", ...stdioEntry(launch) } },
        }),
      ].join("\n");
  }
}

/** The snippet for an HTTP client. */
export function httpSnippet(
  url: string,
  token: string,
  level: Level,
  note: string | null,
): string {
  return [
    `Endpoint: ${url}`,
    `Token (${level}; shown once, revoke with "${cliCommand()} tokens revoke NAME"):`,
    `  ${token}`,
    "",
    "A client that takes a URL and headers (Claude Code, Cursor, VS Code and most SDKs):",
    "",
    json({
      mcpServers: {
        [SERVICE_NAME]: {
          type: "http",
          url,
          headers: { Authorization: `Bearer ${token}` },
        },
      },
    }),
    "",
    "Claude Code:",
    "",
    [
      "claude",
      "mcp",
      "add",
      "--transport",
      "http",
      SERVICE_NAME,
      url,
      "--header",
      `Authorization: Bearer ${token}`,
    ].map(shellWord).join(" "),
    ...(note === null ? [] : ["", note]),
  ].join("\n");
}

/** The endpoint: the running server's, else the configured port's. */
async function endpoint(
  home: string,
): Promise<{ url: string; note: string | null }> {
  const text = await Deno.readTextFile(inAppDir(home, HANDSHAKE_FILE)).catch(
    () => null,
  );
  const parsed = text === null ? null : parseHandshake(text);
  const loaded = await loadSettings(inAppDir(home, SETTINGS_FILE));
  const fixed = loaded.ok && loaded.settings.port > 0
    ? loaded.settings.port
    : null;
  const running = parsed?.ok && isProcessAlive(parsed.handshake.pid)
    ? parsed.handshake.port
    : null;
  if (fixed !== null && running !== null && running !== fixed) {
    return {
      url: `http://127.0.0.1:${running}/mcp`,
      note:
        `Port ${fixed} ("port" in ${SETTINGS_FILE}) was in use when the server started, so it listens on ${running} for this start only; the next start tries ${fixed} again (http://127.0.0.1:${fixed}/mcp).`,
    };
  }
  if (fixed !== null) {
    return { url: `http://127.0.0.1:${fixed}/mcp`, note: null };
  }
  const note =
    `The port is chosen at each start ("port": 0 in ${SETTINGS_FILE}): set a fixed "port" there so this URL keeps working.`;
  if (running !== null) {
    return { url: `http://127.0.0.1:${running}/mcp`, note };
  }
  throw new UsageError(
    `client-config http: ${SERVICE_NAME} is not running and ${SETTINGS_FILE} names no fixed port: start it (deno task serve) or set "port"`,
  );
}

/** Run `client-config <client> [flags]`. */
export async function clientConfigCommand(
  home: string,
  openDb: () => Promise<StateDb>,
  args: string[],
  io: CliIO,
  now = Date.now(),
): Promise<number> {
  const parsed = parseFlags("client-config", args, {
    level: { type: "string" },
    name: { type: "string" },
    connections: { type: "string" },
    expires: { type: "string" },
  });
  const [client, extra] = parsed.positionals;
  if (
    client === undefined || !isOneOf(CLIENTS, client)
  ) {
    throw new UsageError(
      `client-config: name a client, one of ${CLIENTS.join(", ")}${
        client === undefined ? "" : `; got "${client}"`
      }\n\n${CLIENT_CONFIG_USAGE}`,
    );
  }
  if (extra !== undefined) {
    throw new UsageError(`client-config: unexpected argument "${extra}"`);
  }
  if (client !== "http") {
    for (const flag of ["level", "name", "connections", "expires"]) {
      if (parsed.flags[flag] !== undefined) {
        throw new UsageError(
          `client-config ${client}: --${flag} is for "http" only: the bridge uses the server's own token`,
        );
      }
    }
    io.out(
      stdioSnippet(client, await bridgeLaunch()),
    );
    return 0;
  }
  const level = stringFlag(parsed, "level") ?? "readOnly";
  if (!isLevel(level)) {
    throw new UsageError(
      `client-config http: --level must be one of ${
        LEVELS.join(", ")
      }, got "${level}"`,
    );
  }
  const lifetime = parseDuration(
    stringFlag(parsed, "expires") ?? DEFAULT_TOKEN_LIFETIME,
  );
  if (!lifetime.ok) {
    throw new UsageError(`client-config http: ${lifetime.message}`);
  }
  const connections = parseConnections(
    "client-config http",
    stringFlag(parsed, "connections"),
  );
  const { url, note } = await endpoint(home);
  const db = await openDb();
  try {
    const { plaintext } = await new TokenStore(db).create({
      name: stringFlag(parsed, "name") ??
        `http client ${new Date(now).toISOString().slice(0, 19)}`,
      level,
      connections,
      expiresAt: lifetime.ms === null ? null : now + lifetime.ms,
    }, now);
    io.out(httpSnippet(url, plaintext, level, note));
  } finally {
    db.close();
  }
  return 0;
}
