/**
 * The Deno permissions of dbport's two programs: `serve` (main.ts) and the
 * stdio bridge (bridge.ts). Pure data, here so that the bridge, which imports
 * nothing outside `lib/protocol/`, can start a checkout's server with the
 * same flags as `deno task serve` (lib/bridge/launch.ts).
 *
 * @module
 */

/** The flags `serve` runs with (the same as `deno task serve`). */
export const SERVE_PERMISSIONS = [
  // V8's young generation grows to 48 MiB by default; at 4 MiB semi-spaces
  // RSS under load is 220 -> 165 MiB at the same CPU (docs/performance.md
  // "Memory").
  "--v8-flags=--max-semi-space-size=4",
  // Never a permission prompt: one would stop every client until a key is
  // pressed in a terminal no one watches.
  "--no-prompt",
  // Any host the user saved; the listener binds 127.0.0.1 by its own code.
  "--allow-net",
  "--allow-read",
  "--allow-write",
  "--allow-env",
  "--allow-sys",
  "--allow-ffi",
  "--allow-run",
];

/** What the bridge needs, and nothing more. */
export const BRIDGE_PERMISSIONS = [
  "--no-prompt",
  // The bridge only ever talks to the local server.
  "--allow-net=127.0.0.1",
  "--allow-read",
  "--allow-env",
  "--allow-run",
  "--allow-sys=uid",
];
