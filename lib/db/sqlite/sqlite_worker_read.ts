/**
 * A SQLite worker's reads (`sqlite_worker.ts`): the pool of read handles
 * (opened `query_only` with the read guard, kept open between calls, closed
 * when idle), and the read calls on them: rows, a prepare, a query within
 * the answer budget, and a stream in batches with backpressure. Worker side
 * only.
 *
 * @module
 */

import { failure, post } from "./sqlite_worker_channel.ts";
import {
  close,
  file,
  open,
  readRows,
  run,
  watched,
} from "./sqlite_worker_connections.ts";
import {
  finalize,
  prepare,
  type Prepared,
  rowValues,
  step,
} from "./sqlite_ffi.ts";
import { cellMapper } from "./sqlite_cells.ts";
import type { Request, Watch } from "./sqlite_protocol.ts";
import {
  readOnly,
  refreshIndexed,
  refuseTableValued,
} from "./sqlite_read_guard.ts";
import type { Cell } from "../types.ts";

/** Read handles kept open between calls (bench W4: eight at eight clients). */
const MAX_IDLE = 8;
/** How long rows are read before other messages get a turn. */
const SLICE_MS = 20;

const idle: { db: Deno.PointerValue; since: number }[] = [];
/** Streams waiting for the main thread's `more`, by call. */
const waiting = new Map<number, (stop: boolean) => void>();

function acquire(): Deno.PointerValue {
  const db = idle.pop()?.db ?? open(true);
  try {
    refreshIndexed(db);
  } catch (error) {
    release(db);
    throw error;
  }
  return db;
}

function release(db: Deno.PointerValue): void {
  if (idle.length < MAX_IDLE) idle.push({ db, since: Date.now() });
  else close(db);
}

setInterval(() => {
  const now = Date.now();
  for (let i = idle.length - 1; i >= 0; i--) {
    if (now - idle[i]!.since > file.idleMs) {
      close(idle.splice(i, 1)[0]!.db);
    }
  }
}, 10_000);

/** Close every idle read handle (the worker is closing). */
export function closeIdle(): void {
  for (const handle of idle.splice(0)) close(handle.db);
}

/**
 * Answer a read call with what `work` returns on a pooled read handle, the
 * call's flag and deadline watched.
 */
function answerRead<T>(
  request: Watch,
  work: (db: Deno.PointerValue) => T,
): void {
  const db = acquire();
  let value: T;
  try {
    value = watched(db, request, () => work(db));
  } finally {
    release(db);
  }
  post({ id: request.id, ok: true, value });
}

/** A catalog statement's rows, as objects by column name. */
export function rows(request: Extract<Request, { type: "rows" }>): void {
  answerRead(
    request,
    (db) =>
      run(db, request.sql, request.params, true, (prepared) => {
        const rows: Record<string, unknown>[] = [];
        while (step(db, prepared.handle)) {
          const values = rowValues(prepared.handle, prepared.columns.length);
          const row: Record<string, unknown> = {};
          prepared.columns.forEach((column, i) => {
            row[column.name] = values[i];
          });
          rows.push(row);
        }
        return rows;
      }),
  );
}

/** Compile a statement without running it (SQLite's own parser as a check). */
export function prepareOnly(
  request: Extract<Request, { type: "prepare" }>,
): void {
  answerRead(request, (db) => {
    finalize(prepare(db, request.sql).handle);
    return null;
  });
}

/** A read within the answer budget. */
export function query(request: Extract<Request, { type: "query" }>): void {
  answerRead(request, (db) =>
    run(
      db,
      request.sql,
      request.params ?? [],
      true,
      (prepared) => readRows(db, prepared, request.limits, false),
    ));
}

/** The main thread took a stream's batch: go on, or stop. */
export function more(id: number, stop: boolean): void {
  waiting.get(id)?.(stop);
}

/**
 * Stream every row of a read in batches; after each batch wait for the main
 * thread's `more` (backpressure), serving other calls meanwhile.
 */
export async function stream(
  request: Extract<Request, { type: "stream" }>,
): Promise<void> {
  const db = acquire();
  let prepared: Prepared | null = null;
  let count = 0;
  try {
    prepared = watched(db, request, () => {
      refuseTableValued(request.sql);
      const p = prepare(db, request.sql);
      readOnly(p);
      return p;
    });
    const names = prepared.columns.map((column) => column.name);
    const mappers = prepared.columns.map((column) => cellMapper(column.type));
    let done = false;
    while (!done) {
      const batch: Cell[][] = [];
      done = watched(
        db,
        request,
        () => fillBatch(db, prepared!, mappers, batch, request),
      );
      if (batch.length === 0 && done) break;
      count += batch.length;
      post({
        id: request.id,
        ok: true,
        batch: { columns: names, rows: batch },
      });
      const stop = await new Promise<boolean>((resolve) =>
        waiting.set(request.id, resolve)
      );
      waiting.delete(request.id);
      if (stop) break;
    }
    post({ id: request.id, ok: true, value: { rows: count } });
  } catch (error) {
    post(failure(request.id, error));
  } finally {
    if (prepared !== null) finalize(prepared.handle);
    release(db);
  }
}

/**
 * Step rows into `batch` until it is full (rows or bytes) or its time slice
 * is spent; true when the statement has no more rows.
 */
function fillBatch(
  db: Deno.PointerValue,
  prepared: Prepared,
  mappers: ((value: unknown) => Cell)[],
  batch: Cell[][],
  limits: { batchRows: number; batchBytes: number },
): boolean {
  let bytes = 0;
  const started = performance.now();
  while (
    batch.length < limits.batchRows && bytes < limits.batchBytes &&
    performance.now() - started < SLICE_MS * 5
  ) {
    if (!step(db, prepared.handle)) return true;
    const cells = rowValues(prepared.handle, mappers.length);
    for (let i = 0; i < cells.length; i++) {
      const value = cells[i];
      bytes += typeof value === "string"
        ? value.length
        : value instanceof Uint8Array
        ? value.length * 2
        : 8;
      cells[i] = mappers[i]!(value);
    }
    batch.push(cells as Cell[]);
  }
  return false;
}
