/**
 * Step 4b of a start: the browser console on its own 127.0.0.1 port, unless it
 * is off.
 *
 * @module
 */

import { thrown } from "../base/thrown.ts";
import { messageOf } from "../base/message_of.ts";
import { loadConsoleSecret } from "../console/secret.ts";
import type { Logger } from "../base/log.ts";
import { hostEnv } from "../app/host_dialog.ts";
import { openBrowser } from "../app/open_browser.ts";
import {
  type RunningConsole,
  startConsole,
} from "../console/console_server.ts";
import type { Core } from "./core.ts";
import type { StartOptions } from "./options.ts";
import { givingWay } from "./ports.ts";
import type { Stores } from "./stores.ts";

/** Step 4b: the browser console on its own 127.0.0.1 port, unless it is off. */
export async function startBrowserConsole(
  options: StartOptions,
  stores: Stores,
  core: Core,
  now: () => number,
  log: Logger,
): Promise<RunningConsole | null> {
  const { state } = core;
  if (!state.settings.console) return null;
  const port = options.consolePort ?? state.settings.consolePort;
  const secret = await loadConsoleSecret(options.home);
  try {
    return await givingWay(
      options,
      port,
      "consolePort",
      (port) =>
        startConsole({
          settings: () => state.settings,
          connections: stores.connections,
          connectionsPath: stores.paths.connections,
          pool: stores.pool,
          activity: stores.activity,
          history: stores.history,
          queries: stores.queries,
          tokens: stores.tokens,
          tokensChanged: () => core.tokenSync.poll(),
          now,
          log,
        }, {
          port,
          secret,
          ...(options.idleTimeoutMs === undefined
            ? {}
            : { idleTimeoutMs: options.idleTimeoutMs }),
          openBrowser: options.openBrowser ??
            ((url) => openBrowser(url, hostEnv())),
        }),
      log,
    );
  } catch (error) {
    const { code } = thrown(error);
    throw new Error(
      code === "EADDRINUSE"
        ? `Cannot start the console on 127.0.0.1:${port}: the port is in use (change "consolePort" in ${stores.paths.settings}, or set it to 0 for a free one)`
        : `Cannot start the console on 127.0.0.1:${port}: ${messageOf(error)}`,
      { cause: error },
    );
  }
}
