/**
 * How the user types dbport's CLI: `dbport` once `deno task install` put it
 * on the PATH, else `deno task dbport` from the checkout. Every hint that
 * names a command says it the way it works on this machine.
 *
 * @module
 */

import { SERVICE_NAME } from "../base/identity.ts";

let found: string | undefined;

/** The directory on the PATH that holds an executable `name`, or null. */
export function onPath(
  name: string,
  path = Deno.env.get("PATH") ?? "",
): string | null {
  const separator = Deno.build.os === "windows" ? ";" : ":";
  const names = Deno.build.os === "windows" ? [`${name}.cmd`, name] : [name];
  for (const dir of path.split(separator)) {
    if (dir === "") continue;
    for (const file of names) {
      try {
        const info = Deno.statSync(`${dir}/${file}`);
        if (info.isFile && ((info.mode ?? 0o111) & 0o111) !== 0) {
          return `${dir}/${file}`;
        }
      } catch { /* not here */ }
    }
  }
  return null;
}

/** `dbport` when it is installed on the PATH, else `deno task dbport`. */
export function cliCommand(): string {
  if (found !== undefined) return found;
  let installed = false;
  try {
    installed = onPath(SERVICE_NAME) !== null;
  } catch {
    // No permission to read the environment: the checkout's form.
  }
  found = installed ? SERVICE_NAME : `deno task ${SERVICE_NAME}`;
  return found;
}
