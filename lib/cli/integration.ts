/**
 * Integration with the desktop: `open-url` (what the `dbport://` scheme runs:
 * start the server headless in the background), `register-url-handler`
 * (Linux: an XDG desktop entry for the scheme) and `install-bridge` (a
 * `dbport-mcp` launcher on the PATH through `deno install -g`).
 *
 * @module
 */

import { appDataDir, inAppDir } from "../app/paths.ts";
import { inspectHandshake } from "../app/handshake_file.ts";
import {
  BRIDGE_EXECUTABLE,
  HANDSHAKE_FILE,
  SERVICE_NAME,
  START_MCP_URL,
  URL_SCHEME,
} from "../base/identity.ts";
import type { CliIO } from "./io.ts";
import {
  BRIDGE_PERMISSIONS,
  SERVE_PERMISSIONS,
} from "../protocol/permissions.ts";

const MAIN = new URL("../../main.ts", import.meta.url).pathname;
/** The bridge's entry in this checkout. */
export const BRIDGE = new URL("../../bridge.ts", import.meta.url).pathname;

export { BRIDGE_PERMISSIONS, SERVE_PERMISSIONS };

/** The pid of the server whose handshake is live in `home`, if any. */
async function liveServer(home: string): Promise<number | null> {
  const found = await inspectHandshake(inAppDir(home, HANDSHAKE_FILE));
  return found.kind === "live" ? found.pid : null;
}

/** `open-url <url>`: start the server in the background unless one runs. */
export async function openUrl(args: string[], io: CliIO): Promise<number> {
  const url = args[0] ?? "";
  if (url.replace(/\/+$/, "") !== START_MCP_URL) {
    io.err(
      `${SERVICE_NAME}: open-url handles ${START_MCP_URL}, not ${
        JSON.stringify(url)
      }`,
    );
    return 2;
  }
  const home = appDataDir();
  const running = await liveServer(home);
  if (running !== null) {
    io.out(`${SERVICE_NAME} already runs (pid ${running})`);
    return 0;
  }
  await Deno.mkdir(home, { recursive: true, mode: 0o700 });
  const log = inAppDir(home, "serve.log");
  const serve = [Deno.execPath(), "run", ...SERVE_PERMISSIONS, MAIN, "serve"];
  // Headless and detached: it outlives this command and any terminal, and
  // writes to serve.log in the app directory (never to a pipe whose reader
  // is gone).
  const command = Deno.build.os === "windows"
    ? { program: serve[0]!, args: serve.slice(1), output: "null" as const }
    : {
      program: "/bin/sh",
      args: ["-c", 'exec "$@" >> "$0" 2>&1', log, ...serve],
      output: "null" as const,
    };
  const child = new Deno.Command(command.program, {
    args: command.args,
    stdin: "null",
    stdout: command.output,
    stderr: command.output,
    detached: true,
  }).spawn();
  for (let i = 0; i < 50; i++) {
    if (await liveServer(home) !== null) {
      io.out(`${SERVICE_NAME} started in the background (pid ${child.pid})`);
      child.unref();
      return 0;
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  io.err(`${SERVICE_NAME}: the server did not start within 10 s`);
  return 1;
}

/** `register-url-handler`: make `dbport://` URLs run `open-url` (Linux). */
export async function registerUrlHandler(io: CliIO): Promise<number> {
  if (Deno.build.os !== "linux") {
    io.out(
      Deno.build.os === "darwin"
        ? `On macOS the app bundle declares the ${URL_SCHEME}:// scheme in its Info.plist (CFBundleURLTypes); Launch Services registers it when the app is first opened. For a development checkout, wrap "deno task dbport open-url" in an Automator or Platypus app that declares the scheme.`
        : `On Windows, register ${URL_SCHEME}:// under HKEY_CURRENT_USER\\Software\\Classes\\${URL_SCHEME} with a shell\\open\\command running: "${Deno.execPath()}" run ${
          SERVE_PERMISSIONS.join(" ")
        } "${MAIN}" open-url "%1"`,
    );
    return 0;
  }
  const home = Deno.env.get("HOME") ?? "";
  const dataHome = Deno.env.get("XDG_DATA_HOME") || `${home}/.local/share`;
  const dir = `${dataHome}/applications`;
  await Deno.mkdir(dir, { recursive: true });
  const file = `${dir}/${SERVICE_NAME}-url-handler.desktop`;
  const exec = [Deno.execPath(), "run", ...SERVE_PERMISSIONS, MAIN, "open-url"]
    .map((part) => /[\s"'\\$`]/.test(part) ? JSON.stringify(part) : part)
    .join(" ");
  await Deno.writeTextFile(
    file,
    [
      "[Desktop Entry]",
      "Type=Application",
      `Name=${SERVICE_NAME} MCP server`,
      `Exec=${exec} %u`,
      "NoDisplay=true",
      "Terminal=false",
      `MimeType=x-scheme-handler/${URL_SCHEME};`,
      "",
    ].join("\n"),
  );
  const ran = await new Deno.Command("xdg-mime", {
    args: [
      "default",
      `${SERVICE_NAME}-url-handler.desktop`,
      `x-scheme-handler/${URL_SCHEME}`,
    ],
    stdout: "null",
    stderr: "null",
  }).output().catch(() => null);
  io.out(`Wrote ${file}`);
  io.out(
    ran?.success
      ? `${URL_SCHEME}:// URLs now start ${SERVICE_NAME} (xdg-mime default set).`
      : `xdg-mime is not available: set the handler with "xdg-mime default ${SERVICE_NAME}-url-handler.desktop x-scheme-handler/${URL_SCHEME}".`,
  );
  return 0;
}

/** `install-bridge`: a `dbport-mcp` launcher on the PATH (`deno install -g`). */
export async function installBridge(io: CliIO): Promise<number> {
  const args = [
    "install",
    "-g",
    "-f",
    "-n",
    BRIDGE_EXECUTABLE,
    ...BRIDGE_PERMISSIONS,
    BRIDGE,
  ];
  const output = await new Deno.Command(Deno.execPath(), {
    args,
    stdout: "piped",
    stderr: "piped",
  }).output();
  const text = new TextDecoder().decode(output.stdout) +
    new TextDecoder().decode(output.stderr);
  if (!output.success) {
    io.err(`deno ${args.join(" ")} failed:\n${text}`);
    return 1;
  }
  io.out(text.trim());
  io.out(
    `Configure MCP clients with the command "${BRIDGE_EXECUTABLE}" (see README.md, "Connect a client", and docs/clients.md).`,
  );
  return 0;
}
