/**
 * The thread that owns one SQLite file's connections (`sqlite_client.ts`
 * starts it): every open, prepare, step, busy wait and close happens here,
 * never on the event loop. Each call carries a flag in shared memory that
 * the main thread sets to stop it; a progress handler checks it (and the
 * call's deadline) every few hundred virtual-machine steps, so a statement
 * stops without anyone waiting on its lock. Read handles are `query_only`,
 * run only statements SQLite calls read-only, attach nothing, and cap a
 * value's length (`SQLITE_LIMIT_LENGTH`) so that a huge value fails inside
 * SQLite before it exists in dbport's memory.
 *
 * This file takes the calls (sqlite_protocol.ts) and hands each to its part:
 * the connections (`sqlite_worker_connections.ts`), the read guard
 * (`sqlite_read_guard.ts`), reads (`sqlite_worker_read.ts`) and writes
 * (`sqlite_worker_write.ts`).
 *
 * @module
 */

/// <reference lib="deno.worker" />

import type { Request } from "./sqlite_protocol.ts";
import { denyColumns } from "./sqlite_read_guard.ts";
import { answerThrough, failure, post } from "./sqlite_worker_channel.ts";
import { file, reap } from "./sqlite_worker_connections.ts";
import {
  closeIdle,
  more,
  prepareOnly,
  query,
  rows,
  stream,
} from "./sqlite_worker_read.ts";
import { closeWrites, finish, write } from "./sqlite_worker_write.ts";

function init(request: Extract<Request, { type: "init" }>): void {
  file.path = request.path;
  file.idleMs = request.idleMs;
  denyColumns(request.privateColumns);
  file.registry = request.registry;
  reap(request.orphans);
  post({ id: request.id, ok: true, value: null });
}

/** For tests only: a worker that stops answering. */
function stall(request: Extract<Request, { type: "stall" }>): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, request.ms);
  post({ id: request.id, ok: true, value: null });
}

function closeAll(request: Extract<Request, { type: "close" }>): void {
  closeIdle();
  closeWrites();
  post({ id: request.id, ok: true, value: null });
}

function handle(request: Request): void {
  try {
    switch (request.type) {
      case "init":
        return init(request);
      case "rows":
        return rows(request);
      case "prepare":
        return prepareOnly(request);
      case "query":
        return query(request);
      case "write":
        write(request).catch((error) => post(failure(request.id, error)));
        return;
      case "finish":
        return finish(request);
      case "stream":
        void stream(request);
        return;
      case "more":
        return more(request.id, request.stop);
      case "stall":
        return stall(request);
      case "close":
        return closeAll(request);
    }
  } catch (error) {
    post(failure(request.id, error));
  }
}

// The spawner thread that started this worker sends the main thread's port
// first; every call comes through it.
self.onmessage = (
  event: MessageEvent<Request | { type: "port"; port: MessagePort }>,
) => {
  const message = event.data;
  if (message.type !== "port") return handle(message);
  answerThrough(message.port);
  message.port.onmessage = (event: MessageEvent<Request>) => handle(event.data);
};
