/**
 * Where the app keeps its files: shared by the server and the stdio bridge,
 * which must find the same handshake (docs/wire.md "The stdio bridge" 6).
 *
 * @module
 */

import { HOME_ENV, SERVICE_NAME } from "./identity.ts";

/** Environment lookup, injectable for tests. */
export type EnvLookup = (name: string) => string | undefined;

const defaultEnv: EnvLookup = (name) => Deno.env.get(name);

/**
 * The app data directory: `DBPORT_HOME` if set, else the platform's place for
 * an app's own files (macOS `~/Library/Application Support/dbport`, Linux
 * `${XDG_CONFIG_HOME:-~/.config}/dbport`, Windows `%APPDATA%\dbport`).
 */
export function appDataDir(
  env: EnvLookup = defaultEnv,
  os: typeof Deno.build.os = Deno.build.os,
): string {
  const override = env(HOME_ENV);
  if (override !== undefined && override.trim() !== "") return override;
  if (os === "windows") {
    const appData = env("APPDATA");
    if (appData === undefined || appData === "") {
      throw new Error(
        `Cannot locate the app data directory: APPDATA is not set (set ${HOME_ENV})`,
      );
    }
    return `${appData}\\${SERVICE_NAME}`;
  }
  const home = env("HOME");
  if (home === undefined || home === "") {
    throw new Error(
      `Cannot locate the app data directory: HOME is not set (set ${HOME_ENV})`,
    );
  }
  if (os === "darwin") {
    return `${home}/Library/Application Support/${SERVICE_NAME}`;
  }
  const xdg = env("XDG_CONFIG_HOME");
  const base = xdg !== undefined && xdg.startsWith("/")
    ? xdg
    : `${home}/.config`;
  return `${base}/${SERVICE_NAME}`;
}

/** Join a file name onto the app data directory. */
export function inAppDir(dir: string, name: string): string {
  const separator = Deno.build.os === "windows" ? "\\" : "/";
  return dir.endsWith(separator) ? dir + name : dir + separator + name;
}
