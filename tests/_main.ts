/**
 * Running `main.ts` as a user does (`deno task serve` / `deno task dbport`):
 * the same permissions as the tasks in deno.json.
 *
 * @module
 */

import { SERVE_PERMISSIONS } from "../lib/cli/integration.ts";

/** The entry point. */
export const MAIN = new URL("../main.ts", import.meta.url).pathname;

/** `deno run` arguments for `main.ts <args>`, with the tasks' permissions. */
export function mainArgs(...args: string[]): string[] {
  return ["run", ...SERVE_PERMISSIONS, MAIN, ...args];
}

/** A running `main.ts serve`, read up to its "Press Ctrl+C" line. */
export interface ServeProcess {
  child: Deno.ChildProcess;
  /** Its stdout so far; `readRest()` appends the rest. */
  out: string;
  /** The MCP endpoint it printed. */
  url: string | undefined;
  /** Read stdout to its end (after the process was told to stop). */
  readRest(): Promise<string>;
}

/** The repository's root, where `deno task` finds deno.json. */
export const ROOT = new URL("../", import.meta.url).pathname;

/**
 * Start `main.ts serve` in `home` and wait until it says it is ready; with
 * `task`, exactly as the README says: `deno task serve` from the root.
 */
export async function spawnServe(
  home: string,
  options: { task?: boolean; env?: Record<string, string> } = {},
): Promise<ServeProcess> {
  const child = new Deno.Command(Deno.execPath(), {
    args: options.task ? ["task", "serve"] : mainArgs("serve"),
    cwd: ROOT,
    env: { DBPORT_HOME: home, NO_COLOR: "1", ...options.env },
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  const serve: ServeProcess = {
    child,
    out: "",
    url: undefined,
    async readRest() {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) return serve.out;
        serve.out += value;
      }
    },
  };
  while (!serve.out.includes("Ctrl+C")) {
    const { done, value } = await reader.read();
    if (done) break;
    serve.out += value;
  }
  serve.url = /MCP endpoint:\s+(\S+)/.exec(serve.out)?.[1];
  return serve;
}
