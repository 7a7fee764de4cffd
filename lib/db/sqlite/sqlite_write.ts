/**
 * A write to a SQLite file, from the main thread: a handle of its own with
 * `query_only` off, `BEGIN IMMEDIATE`, the statement (VACUUM and a few
 * pragmas refuse a transaction and run on their own), COMMIT. The worker
 * answers before COMMIT, so the preview's `beforeCommit` can still hold it
 * back; COMMIT itself is never stopped. Writes to one file take turns.
 *
 * @module
 */

import {
  callSqlite,
  firstClient,
  sqliteFailure,
  type SqliteFile,
} from "./sqlite_call.ts";
import type { Limits, WriteAnswer } from "./sqlite_protocol.ts";
import { ROLLED_BACK, throwIfAborted } from "../stoppable.ts";
import type { QueryOptions, QueryResult } from "../types.ts";

/** How long a COMMIT may wait for readers (it is never stopped). */
const COMMIT_MS = 5_000;

/** The answer budget of a statement's options. */
export function limitsOf(options: QueryOptions): Limits {
  return {
    maxRows: options.maxRows,
    maxBytes: options.maxBytes,
    maxCellChars: options.maxCellChars,
  };
}

/** A write, after the file's writes before it. */
export function writeSqlite(
  file: SqliteFile,
  text: string,
  options: QueryOptions,
): Promise<QueryResult> {
  const turn = file.writing.then(() => writeNow(file, text, options));
  file.writing = turn.catch(() => {});
  return turn;
}

async function writeNow(
  file: SqliteFile,
  text: string,
  options: QueryOptions,
): Promise<QueryResult> {
  const client = firstClient(file);
  const id = client.nextId();
  const answer = await callSqlite<WriteAnswer>(file, options, {
    type: "write",
    id,
    sql: text,
    ...(options.params?.length ? { params: options.params } : {}),
    limits: limitsOf(options),
    needsTransaction: options.beforeCommit !== undefined ||
      options.track !== undefined,
    ...(options.track === undefined ? {} : { track: options.track }),
    ...(options.everyRow === undefined ? {} : { everyRow: true as const }),
  });
  const finish = (commit: boolean) =>
    client.call<null>(
      { type: "finish", id, commit },
      Date.now() + COMMIT_MS,
    ).catch((error) => {
      throw sqliteFailure(file, error);
    });
  const done = answer.result;
  try {
    throwIfAborted(options.signal, ROLLED_BACK);
    if (answer.inTransaction) {
      options.everyRow?.(answer.everyRow ?? []);
      options.beforeCommit?.(done);
    }
    options.onCommit?.();
  } catch (error) {
    if (answer.inTransaction) await finish(false).catch(() => {});
    throw error;
  }
  if (answer.inTransaction) await finish(true);
  return done;
}
