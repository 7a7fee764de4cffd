/**
 * One SQLite file as the main thread holds it (a {@linkcode SqliteFile}: its
 * worker clients, whether the file was seen, the write queue), and one call
 * that runs SQL on it: checked to exist, sent to a worker that is not inside
 * a long statement, stoppable by its flag, its failure told in dbport's
 * words.
 *
 * @module
 */

import { messageOf } from "../../base/message_of.ts";
import { DbError, noTransaction } from "../errors.ts";
import { isOwnFile } from "../own_files.ts";
import { redact } from "../redact.ts";
import { toDbError } from "./sqlite_cells.ts";
import { type Call, SqliteClient, WorkerError } from "./sqlite_client.ts";
import { freeFlag, takeFlag } from "./sqlite_flags.ts";
import type { Exec } from "./sqlite_schema.ts";
import { stoppable, throwIfAborted } from "../stoppable.ts";
import type { CallOptions } from "../types.ts";

/** How to open one SQLite file. */
export interface SqliteConfig {
  path: string;
  secrets: readonly string[];
  idleMs?: number;
  /** Columns AI reads may not read: the read handles' authorizer denies them. */
  privateColumns?: readonly string[];
  /** The app's own state files, refused as this connection's file (own_files.ts). */
  ownFiles?: readonly string[];
}

/**
 * Worker threads per file: a long read on one leaves the other serving (two
 * heavy reads ran side by side on libSQL's threads before).
 */
const WORKERS = 2;
/** A worker silent this long with calls in hand is inside a long statement. */
const STUCK_MS = 10;

/** One SQLite file's state on the main thread. */
export interface SqliteFile {
  config: SqliteConfig;
  /**
   * The first worker takes every write and every read while it answers; a
   * read arriving while it is inside a long statement goes to the other.
   */
  clients: SqliteClient[];
  /** The file was found to exist (before the first worker opened it). */
  checked: boolean;
  /**
   * One write at a time: the worker holds a write's transaction open until
   * `finish`, and a second write's busy wait there would keep `finish` from
   * ever being read.
   */
  writing: Promise<unknown>;
}

/** A file's state; no worker starts until the first call. */
export function sqliteFile(config: SqliteConfig): SqliteFile {
  const idleMs = config.idleMs ?? 60_000;
  return {
    config,
    clients: Array.from(
      { length: WORKERS },
      () => new SqliteClient(config.path, idleMs, config.privateColumns),
    ),
    checked: false,
    writing: Promise.resolve(),
  };
}

/** The worker that takes writes (and reads while it answers). */
export function firstClient(file: SqliteFile): SqliteClient {
  return file.clients[0]!;
}

/** The worker for a read: the first, unless it is inside a long statement. */
function readClient(file: SqliteFile): SqliteClient {
  const client = firstClient(file);
  return client.stuckFor < STUCK_MS
    ? client
    : file.clients.reduce((best, next) =>
      next.stuckFor < best.stuckFor ? next : best
    );
}

/** A worker's failure as the driver tells it. */
export function sqliteFailure(file: SqliteFile, error: unknown): DbError {
  if (error instanceof WorkerError && error.code === "DBPORT_NO_TRANSACTION") {
    return noTransaction();
  }
  // The read handle's authorizer (a PRAGMA that sets, load_extension).
  if (error instanceof WorkerError && error.code === "SQLITE_AUTH") {
    return new DbError("read_only", redact(error.message, file.config.secrets));
  }
  return toDbError(error, file.config.secrets);
}

/** The file must exist before the first worker opens it. */
async function ensureExists(file: SqliteFile): Promise<void> {
  if (file.checked) return;
  const { path, secrets } = file.config;
  try {
    const info = await Deno.stat(path);
    if (!info.isFile) throw new Error("not a regular file");
  } catch (error) {
    throw new DbError(
      "connect",
      redact(
        `cannot open the SQLite file ${path}: ${
          error instanceof Deno.errors.NotFound
            ? "it does not exist"
            : messageOf(error)
        }`,
        secrets,
      ),
    );
  }
  if (
    file.config.ownFiles !== undefined &&
    await isOwnFile(path, file.config.ownFiles)
  ) {
    throw new DbError(
      "connect",
      redact(
        `refused: the SQLite file ${path} is dbport's own state (its tokens, activity log and query history), not a connection`,
        secrets,
      ),
    );
  }
  file.checked = true;
}

/** One call that runs SQL, stoppable by its flag. */
export async function callSqlite<T>(
  file: SqliteFile,
  options: CallOptions,
  request: Call,
  onBatch?: Parameters<SqliteClient["call"]>[2],
): Promise<T> {
  const on = request.type === "write" ? firstClient(file) : readClient(file);
  throwIfAborted(options.signal);
  await ensureExists(file);
  // The worker's start is not the statement's time (sqlite_client.ts).
  await on.started(options.signal);
  const { flag, slot } = takeFlag();
  const deadline = Date.now() + options.timeoutMs;
  let stopped = false;
  try {
    return await stoppable(
      () =>
        on.call<T>(
          { ...request, flag, deadline: deadline + 250 },
          deadline,
          onBatch,
        ),
      options,
      () => {
        stopped = true;
        Atomics.store(flag, 0, 1);
      },
    );
  } catch (error) {
    throw sqliteFailure(file, error);
  } finally {
    // A stopped call's worker may still hold its flag: never handed out again.
    if (!stopped) freeFlag(slot);
  }
}

/** Catalog statements (sqlite_schema.ts) on a read handle, with `options`. */
export function catalog(file: SqliteFile, options: CallOptions): Exec {
  return (text, params = []) =>
    callSqlite<Record<string, unknown>[]>(file, options, {
      type: "rows",
      sql: text,
      params,
    });
}
