/**
 * Open a web address in the user's browser: `$BROWSER` when set, else the
 * platform's opener (`open` on macOS, `xdg-open` on a Linux desktop, the URL
 * handler on Windows). Run without a shell, the address as one argument.
 *
 * @module
 */

import type { DialogEnv } from "./host_dialog.ts";

/** The command that opens `url`, or null when this machine has none. */
export function browserCommand(
  url: string,
  env: DialogEnv,
  browser: string | undefined = Deno.env.get("BROWSER"),
): string[] | null {
  if (browser !== undefined && browser.trim() !== "") {
    return [browser.trim(), url];
  }
  switch (env.os) {
    case "darwin":
      return ["open", url];
    case "windows":
      return ["rundll32", "url.dll,FileProtocolHandler", url];
    default:
      return env.display && env.has("xdg-open") ? ["xdg-open", url] : null;
  }
}

/** Open `url`; false when no browser could be started. */
export async function openBrowser(
  url: string,
  env: DialogEnv,
): Promise<boolean> {
  const argv = browserCommand(url, env);
  if (argv === null) return false;
  try {
    const status = await new Deno.Command(argv[0]!, {
      args: argv.slice(1),
      stdin: "null",
      stdout: "null",
      stderr: "null",
    }).output();
    return status.success;
  } catch {
    return false;
  }
}
