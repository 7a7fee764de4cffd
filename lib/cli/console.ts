/**
 * `dbport console`: open the running server's browser console. The address
 * and the per-start key are read from the 0600 handshake; the browser gets
 * `http://127.0.0.1:<port>/c/<prefix>/?key=…` once and swaps the key for a session
 * cookie. With no browser to open, the address is printed instead.
 *
 * @module
 */

import { consoleKeyUrl, parseHandshake } from "../protocol/handshake.ts";
import { isProcessAlive } from "../base/process.ts";
import { type CliIO, UsageError } from "./io.ts";

/** How `console` is used. */
export const CONSOLE_USAGE = `Usage:
  dbport console [--print]

Open the running server's console (approvals, activity, history, connections,
tokens) in the browser.
  --print   print its address (with the key) instead of opening a browser`;

/** Run `console` against the handshake at `handshakePath`. */
export async function consoleCommand(
  handshakePath: string,
  args: string[],
  io: CliIO,
  open: (url: string) => Promise<boolean>,
): Promise<number> {
  const unknown = args.find((arg) => arg !== "--print");
  if (unknown !== undefined) {
    throw new UsageError(
      `console: unexpected argument "${unknown}"\n\n${CONSOLE_USAGE}`,
    );
  }
  let text: string;
  try {
    text = await Deno.readTextFile(handshakePath);
  } catch {
    io.err(
      "The dbport server is not running (no handshake file). Start it: deno task serve",
    );
    return 1;
  }
  const parsed = parseHandshake(text);
  if (!parsed.ok || !isProcessAlive(parsed.handshake.pid)) {
    io.err(
      "The dbport server is not running (its handshake is stale). Start it: deno task serve",
    );
    return 1;
  }
  const browser = parsed.handshake.console;
  if (browser === undefined) {
    io.err(
      'The running server has no console ("console": false in settings.json; it takes effect at the next start).',
    );
    return 1;
  }
  const url = consoleKeyUrl(browser);
  if (!args.includes("--print") && await open(url)) {
    io.out(
      `Opened the dbport console in your browser (127.0.0.1:${browser.port}).`,
    );
    return 0;
  }
  if (!args.includes("--print")) {
    io.out(
      "No browser could be opened here. Open this address in a browser on this machine:",
    );
  }
  io.out(url);
  return 0;
}
