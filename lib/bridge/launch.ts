/**
 * Finding the server (docs/wire.md "The stdio bridge" 2): a trusted handshake, or
 * else the OS open command on `dbport://integrations/start-mcp` and a poll
 * every 200 ms for up to 10 s. `DBPORT_LAUNCH` overrides the open command
 * (embedding apps, tests): a JSON array, or words split on spaces; the URL is
 * appended. A bridge run from a checkout (bridge.ts beside main.ts) where no
 * app or URL handler takes `dbport://` (Linux: none registered with
 * xdg-mime; elsewhere: the open command fails) starts that checkout's
 * `serve` in the background itself (`main.ts open-url`, which logs to
 * serve.log in the app directory) and proceeds.
 *
 * @module
 */

import { messageOf } from "../base/message_of.ts";
import { ErrorCode } from "../protocol/errors.ts";
import { SERVICE_NAME, START_MCP_URL, URL_SCHEME } from "../base/identity.ts";
import { SERVE_PERMISSIONS } from "../protocol/permissions.ts";
import { readTrusted, type Trust } from "./trust.ts";
import { BridgeFailure, NOT_RUNNING } from "./upstream.ts";

/** The environment variable that overrides the open command. */
export const LAUNCH_ENV = "DBPORT_LAUNCH";
const POLL_MS = 200;
const WAIT_MS = 10_000;

/** The command that opens `START_MCP_URL` on this OS. */
export function launchCommand(
  override: string | undefined,
  os: typeof Deno.build.os = Deno.build.os,
): string[] {
  if (override !== undefined && override.trim() !== "") {
    const trimmed = override.trim();
    const parts: unknown = trimmed.startsWith("[")
      ? JSON.parse(trimmed)
      : trimmed.split(/\s+/);
    if (
      !Array.isArray(parts) || parts.length === 0 ||
      !parts.every((part) => typeof part === "string")
    ) {
      throw new Error(
        `${LAUNCH_ENV} must be a command or a JSON array of strings`,
      );
    }
    return [...parts, START_MCP_URL];
  }
  switch (os) {
    case "darwin":
      return ["open", "-g", START_MCP_URL];
    case "windows":
      return ["cmd", "/c", "start", "", START_MCP_URL];
    default:
      return ["xdg-open", START_MCP_URL];
  }
}

/** A trusted handshake: the one on disk, or one a launched server writes. */
export async function acquire(
  dir: string,
  options: { now?: () => number; log: (line: string) => void; launch: boolean },
): Promise<Extract<Trust, { ok: true }>> {
  const now = options.now ?? Date.now;
  const found = await readTrusted(dir, now());
  if (found.ok) return found;
  if (!options.launch) {
    throw new BridgeFailure(
      ErrorCode.ServiceUnavailable,
      `${NOT_RUNNING} (${found.problem})`,
    );
  }
  const override = Deno.env.get(LAUNCH_ENV);
  const main = checkoutMain();
  const viaCheckout = override === undefined && main !== null &&
    !await urlHandlerRegistered();
  const command = viaCheckout
    ? checkoutCommand(main!)
    : launchCommand(override);
  options.log(
    `${SERVICE_NAME}-mcp: no trusted handshake (${found.problem}); running ${
      command.join(" ")
    }`,
  );
  let launched = spawnLaunch(command);
  let last = found.problem;
  let fellBack = viaCheckout || override !== undefined || main === null;
  const deadline = Date.now() + WAIT_MS;
  while (Date.now() < deadline) {
    const failed = launched();
    if (failed !== null && !fellBack) {
      // No app took the URL: this checkout's serve instead.
      fellBack = true;
      const checkout = checkoutCommand(main!);
      options.log(
        `${SERVICE_NAME}-mcp: ${failed}; running ${checkout.join(" ")}`,
      );
      launched = spawnLaunch(checkout);
      continue;
    }
    if (failed !== null) {
      options.log(`${SERVICE_NAME}-mcp: ${failed}`);
      throw new BridgeFailure(
        ErrorCode.ServiceUnavailable,
        `${NOT_RUNNING}; the launch command failed (${failed})`,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
    const trust = await readTrusted(dir, now());
    if (trust.ok) return trust;
    last = trust.problem;
  }
  throw new BridgeFailure(
    ErrorCode.ServiceUnavailable,
    `${NOT_RUNNING}; it did not start within 10 s of opening ${START_MCP_URL} (${last})`,
  );
}

/**
 * Run a launch command and leave it running; the answer says why it failed
 * (it could not run, or exited non-zero), or null while it has not.
 */
function spawnLaunch(command: string[]): () => string | null {
  let failed: string | null = null;
  try {
    const child = new Deno.Command(command[0]!, {
      args: command.slice(1),
      stdin: "null",
      stdout: "null",
      stderr: "null",
    }).spawn();
    // The open command returns at once; the app keeps running on its own.
    child.status.then(
      (status) => {
        if (!status.success) {
          failed = `${command[0]} exited with ${status.code}`;
        }
      },
      () => {},
    );
  } catch (error) {
    failed = `could not run ${command[0]}: ${messageOf(error)}`;
  }
  return () => failed;
}

/** main.ts of the checkout this bridge runs from; null for a compiled one. */
export function checkoutMain(
  url: URL = new URL("../../main.ts", import.meta.url),
): string | null {
  if (url.protocol !== "file:") return null;
  try {
    return Deno.statSync(url).isFile ? url.pathname : null;
  } catch {
    return null;
  }
}

/**
 * The checkout's server started in the background as `open-url` does it (the
 * same permissions as `deno task serve`, its output in the app directory's
 * serve.log).
 */
export function checkoutCommand(main: string): string[] {
  return [
    Deno.execPath(),
    "run",
    ...SERVE_PERMISSIONS,
    main,
    "open-url",
    START_MCP_URL,
  ];
}

/**
 * Whether something opens `dbport://` URLs. On Linux, what xdg-mime names
 * (no xdg-mime: nothing); elsewhere the open command itself tells, by failing.
 */
async function urlHandlerRegistered(
  os: typeof Deno.build.os = Deno.build.os,
): Promise<boolean> {
  if (os !== "linux") return true;
  let output: Deno.CommandOutput | null;
  try {
    output = await new Deno.Command("xdg-mime", {
      args: ["query", "default", `x-scheme-handler/${URL_SCHEME}`],
      stdin: "null",
      stdout: "piped",
      stderr: "null",
    }).output();
  } catch {
    output = null; // no xdg-mime
  }
  return output !== null && output.success &&
    new TextDecoder().decode(output.stdout).trim() !== "";
}
