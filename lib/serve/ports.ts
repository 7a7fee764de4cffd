/**
 * Kept addresses: a taken port giving way to a free one for one start, and the
 * ports a start chose written to settings.json.
 *
 * @module
 */

import { cliCommand } from "../app/cli_command.ts";
import { thrown } from "../base/thrown.ts";
import { editFile } from "../app/file_lock.ts";
import {
  type Settings,
  settingsKeysOf,
  settingsText,
} from "../app/settings.ts";
import type { Logger } from "../base/log.ts";
import { SETTINGS_FILE } from "../base/identity.ts";
import type { ServerState } from "../server/state.ts";
import type { StartOptions } from "./options.ts";
import type { Stores } from "./stores.ts";

/**
 * Bind `port`; when the address is kept and that port is taken, bind a free
 * one for this start and say so (settings.json keeps the port it names).
 */
export async function givingWay<T extends { port: number }>(
  options: StartOptions,
  port: number,
  key: "port" | "consolePort",
  bindOn: (port: number) => Promise<T>,
  log: Logger,
): Promise<T> {
  try {
    return await bindOn(port);
  } catch (error) {
    if (!options.keepAddress || port === 0) throw error;
    if (thrown(error).code !== "EADDRINUSE") throw error;
    const bound = await bindOn(0);
    log(
      `dbport: 127.0.0.1:${port} ("${key}" in ${SETTINGS_FILE}) is in use; ${
        key === "port" ? "the MCP endpoint" : "the console"
      } listens on 127.0.0.1:${bound.port} for this start (${
        key === "port"
          ? `${cliCommand()} client-config http prints it`
          : `${cliCommand()} console opens it`
      }); the next start tries ${port} again`,
    );
    return bound;
  }
}

/**
 * Keep the ports this start chose where settings.json names none: the file
 * is written with every setting in force and those ports, so the next start
 * binds the same address (an HTTP client's saved URL, an open console tab).
 */
export async function keepChosenPorts(
  stores: Stores,
  state: ServerState,
  port: number,
  consolePort: number | undefined,
): Promise<void> {
  // Under the file's lock, on the file as it is now: a `settings set` made
  // meanwhile is kept, and only the ports it does not name are added.
  await editFile(stores.paths.settings, (text) => {
    const own = settingsKeysOf(text);
    if (
      own.has("port") && (own.has("consolePort") || consolePort === undefined)
    ) {
      return null;
    }
    const next: Settings = { ...state.settings };
    if (!own.has("port")) next.port = port;
    if (!own.has("consolePort") && consolePort !== undefined) {
      next.consolePort = consolePort;
    }
    state.settings = next;
    return settingsText(next);
  });
}
