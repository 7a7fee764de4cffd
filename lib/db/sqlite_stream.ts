/**
 * An interim `Driver.streamRead` for local SQLite files over today's driver
 * (sqlite.ts), which it leaves as it is: a read-only handle of its own
 * (`PRAGMA query_only`), the statement's rows mapped as sqlite.ts maps them
 * and handed on a batch at a time, `interrupt()` on the timeout or an abort.
 * The SQLite worker driver brings its own.
 *
 * @module
 */

import Database from "libsql/promise";
import { DbError } from "./errors.ts";
import { cellMapper, toDbError } from "./sqlite.ts";
import { stoppable } from "./stoppable.ts";
import type { Cell, Driver, QueryOptions } from "./types.ts";

/** Rows handed on at a time. */
const STREAM_BATCH = 1_000;
const BUSY_TIMEOUT_MS = 5_000;

type Column = { name: string; type: string | null };

/** `driver` with a `streamRead` over the file at `path`. */
export function withSqliteStream(
  driver: Driver,
  path: string,
  secrets: readonly string[],
): Driver {
  return {
    ...driver,
    streamRead: (text, options, onBatch) =>
      streamSqliteRead(path, secrets, text, options, onBatch),
  };
}

async function streamSqliteRead(
  path: string,
  secrets: readonly string[],
  text: string,
  options: QueryOptions,
  onBatch: (columns: string[], rows: Cell[][]) => Promise<void>,
): Promise<{ rows: number }> {
  let db: Database | null = null;
  try {
    const info = await Deno.stat(path);
    if (!info.isFile) throw new Error("not a regular file");
    db = new Database(path, { timeout: BUSY_TIMEOUT_MS });
    await db.exec("PRAGMA query_only = ON");
    const handle = db;
    return await stoppable(
      () => pump(handle, text, onBatch),
      options,
      () => handle.interrupt(),
    );
  } catch (error) {
    if (error instanceof DbError) throw error;
    throw toDbError(error, secrets);
  } finally {
    db?.close();
  }
}

async function pump(
  db: Database,
  text: string,
  onBatch: (columns: string[], rows: Cell[][]) => Promise<void>,
): Promise<{ rows: number }> {
  const statement = await db.prepare(text);
  if (!statement.reader) {
    throw new DbError("query", "the statement returns no rows to export");
  }
  statement.safeIntegers(true);
  statement.raw(true);
  const columns = (statement.columns() as Column[]) ?? [];
  const names = columns.map((column) => column.name);
  const mappers = columns.map((column) => cellMapper(column.type));
  let batch: Cell[][] = [];
  let count = 0;
  for (const row of await statement.iterate()) {
    const cells = row as unknown[];
    batch.push(cells.map((value, i) => mappers[i]!(value)));
    count++;
    if (batch.length >= STREAM_BATCH) {
      // Waiting for the batch to be taken gives the event loop its turn.
      await onBatch(names, batch);
      batch = [];
    }
  }
  if (batch.length > 0 || count === 0) await onBatch(names, batch);
  return { rows: count };
}
