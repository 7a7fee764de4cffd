/**
 * How a SQLite worker answers the main thread: through the port the spawner
 * hands over (`sqlite_spawner.ts`), or its own `self` until then. Worker
 * side only.
 *
 * @module
 */

/// <reference lib="deno.worker" />

import type { Response } from "./sqlite_protocol.ts";

/** The main thread's end (sqlite_spawner.ts hands it over); self until then. */
let channel: { postMessage(message: unknown): void } = self;

/** Answer the main thread from now on through `port`. */
export function answerThrough(port: MessagePort): void {
  channel = port;
}

/** Send one answer, batch or failure to the main thread. */
export function post(message: Response): void {
  channel.postMessage(message);
}

/** A failed call's answer: the error's message and SQLite code. */
export function failure(id: number, error: unknown): Response {
  const e = error as { message?: string; code?: string };
  return {
    id,
    ok: false,
    error: {
      message: String(e.message ?? error),
      code: typeof e.code === "string" ? e.code : "",
    },
  };
}
