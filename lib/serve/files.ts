/**
 * Step 6 of a start: the settings, connections and queries files followed as
 * they are edited; settings written by the CLI and tests.
 *
 * @module
 */

import { type FileWatch, watchFile } from "../app/file_watch.ts";
import { inAppDir } from "../app/paths.ts";
import {
  parseSettings,
  type Settings,
  writeSettingsFile,
} from "../app/settings.ts";
import type { Logger } from "../base/log.ts";
import { SETTINGS_FILE } from "../base/identity.ts";
import type { ServerState } from "../server/state.ts";
import type { StartOptions } from "./options.ts";
import type { Stores } from "./stores.ts";

/** Step 6: follow edits of the settings and connections files. */
export async function watchFiles(
  options: StartOptions,
  stores: Stores,
  state: ServerState,
  log: Logger,
): Promise<FileWatch[]> {
  const { settings, connections, queries } = stores.paths;
  return [
    watchFile(
      settings,
      await Deno.readTextFile(settings).catch(() => null),
      (text) => applySettings(state, text, settings, log),
      options.watchIntervalMs,
    ),
    watchFile(
      connections,
      await Deno.readTextFile(connections).catch(() => null),
      (text) => stores.connections.apply(text, connections, log),
      options.watchIntervalMs,
    ),
    watchFile(
      queries,
      await Deno.readTextFile(queries).catch(() => null),
      (text) => void stores.queries.apply(text, queries, log),
      options.watchIntervalMs,
    ),
  ];
}

/** Apply re-read settings; an invalid file keeps the settings in force. */
export function applySettings(
  state: ServerState,
  text: string | null,
  path: string,
  log: Logger,
): void {
  const parsed = parseSettings(text ?? "", path);
  if (!parsed.ok) {
    log(`dbport: ${parsed.message}; keeping the settings in force`);
    return;
  }
  const next: Settings = parsed.settings;
  if (next.port !== state.settings.port && next.port !== 0) {
    log(
      `dbport: "port" changed to ${next.port}; it takes effect at the next start`,
    );
  }
  for (const key of ["console", "consolePort"] as const) {
    if (next[key] !== state.settings[key]) {
      log(
        `dbport: "${key}" changed to ${
          JSON.stringify(next[key])
        }; it takes effect at the next start`,
      );
    }
  }
  state.settings = next;
}

/** Write settings (used by the CLI and tests). */
export async function saveSettings(
  home: string,
  settings: Partial<Settings>,
): Promise<void> {
  await writeSettingsFile(inAppDir(home, SETTINGS_FILE), settings);
}
