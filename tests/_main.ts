/**
 * Running `main.ts` as a user does (`deno task serve` / `deno task dbport`):
 * the same permissions as the tasks in deno.json.
 *
 * @module
 */

/** The entry point. */
export const MAIN = new URL("../main.ts", import.meta.url).pathname;

/** `deno run` arguments for `main.ts <args>`, with the tasks' permissions. */
export function mainArgs(...args: string[]): string[] {
  return [
    "run",
    "--allow-net=127.0.0.1",
    "--allow-read",
    "--allow-write",
    "--allow-env",
    "--allow-sys",
    "--allow-ffi",
    MAIN,
    ...args,
  ];
}
