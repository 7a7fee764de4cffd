/**
 * Long PostgreSQL statements parsed off the event loop, in one worker
 * (`pg_parse_worker.ts`) started on first need and ended when idle. A parse
 * that does not answer within `PARSE_LIMIT_MS` ends the worker (a WebAssembly
 * loop stops when its thread is terminated) and is answered as too complex.
 *
 * @module
 */

import type { PgParse } from "./pg_parse_types.ts";

/** Longest a parse may take before the statement counts as too complex. */
export const PARSE_LIMIT_MS = 5_000;
const IDLE_MS = 60_000;

let worker: Worker | null = null;
let next = 1;
let idle: ReturnType<typeof setTimeout> | undefined;
const pending = new Map<
  number,
  { resolve: (parsed: PgParse) => void; timer: ReturnType<typeof setTimeout> }
>();

function end(): void {
  worker?.terminate();
  worker = null;
  clearTimeout(idle);
  idle = undefined;
}

function spawn(): Worker {
  if (worker !== null) return worker;
  const started = new Worker(
    new URL("./pg_parse_worker.ts", import.meta.url),
    { type: "module" },
  );
  started.onmessage = (event: MessageEvent<{ id: number; parsed: PgParse }>) =>
    settle(event.data.id, event.data.parsed);
  started.onerror = (event) => {
    event.preventDefault();
    failAll(`the parser failed: ${event.message}`);
  };
  worker = started;
  return started;
}

function settle(id: number, parsed: PgParse): void {
  const call = pending.get(id);
  if (call === undefined) return;
  pending.delete(id);
  clearTimeout(call.timer);
  call.resolve(parsed);
  if (pending.size === 0) {
    clearTimeout(idle);
    idle = setTimeout(end, IDLE_MS);
    Deno.unrefTimer(idle);
  }
}

function failAll(message: string): void {
  end();
  for (const id of [...pending.keys()]) settle(id, { ok: false, message });
}

/** Parse `sql` in the worker. */
export function parseOffLoop(sql: string): Promise<PgParse> {
  const target = spawn();
  clearTimeout(idle);
  const id = next++;
  return new Promise<PgParse>((resolve) => {
    const timer = setTimeout(
      () =>
        failAll(
          `the statement is too complex to analyze within ${
            PARSE_LIMIT_MS / 1000
          } s`,
        ),
      PARSE_LIMIT_MS,
    );
    pending.set(id, { resolve, timer });
    target.postMessage({ id, sql });
  });
}

/** End the worker now (tests; a server closing). */
export function stopParser(): void {
  failAll("the parser was stopped");
}
