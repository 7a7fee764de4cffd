/**
 * A SQLite worker's writes (`sqlite_worker.ts`): each on a connection of its
 * own, `BEGIN IMMEDIATE`, the statement, and the answer sent while the
 * transaction stays open, until the main thread's `finish` commits or rolls
 * it back. Worker side only.
 *
 * @module
 */

import { dmlShape } from "../sql/dml_shape.ts";
import { quoteIdent } from "../sql/identifiers.ts";
import {
  boundedCount,
  type QualifiedName,
  startJudgment,
  statementJudgment,
} from "../every_row.ts";
import {
  SQLITE_KEY_COLUMNS,
  SQLITE_TRACK,
  sqliteCounts,
} from "./sqlite_changes.ts";
import {
  execAll,
  rowValues,
  sqlite3,
  SqliteError,
  step,
} from "./sqlite_ffi.ts";
import type { Limits, Request, WriteAnswer } from "./sqlite_protocol.ts";
import { failure, post } from "./sqlite_worker_channel.ts";
import {
  close,
  execQuiet,
  open,
  readRows,
  run,
  watchedAsync,
} from "./sqlite_worker_connections.ts";
import { trackedWrite } from "../tracked_write.ts";
import { startSqliteEffects } from "./sqlite_every_row.ts";
import type { EveryRow, QueryResult } from "../types.ts";

type Write = Extract<Request, { type: "write" }>;

/** Writes answered, their transaction open until `finish`, by call. */
const writes = new Map<number, Deno.PointerValue>();

function totalChanges(db: Deno.PointerValue): number {
  return sqlite3().sqlite3_total_changes(db);
}

/**
 * A write on a handle of its own: `BEGIN IMMEDIATE`, the statement (VACUUM
 * and a few pragmas refuse a transaction and run on their own), and the
 * result sent back while the transaction stays open; the main thread answers
 * `finish` with commit or rollback. A tracked write (a preview's dry run, a
 * write held to it) also counts what it changed and returns its keys, inside
 * the same transaction (tracked_write.ts).
 */
export async function write(request: Write): Promise<void> {
  const db = open(false);
  let keep = false;
  try {
    await watchedAsync(db, { ...request }, async () => {
      const answer = await writeOnce(db, request);
      if (answer.inTransaction) {
        writes.set(request.id, db);
        keep = true;
      }
      post({ id: request.id, ok: true, value: answer });
    });
  } catch (error) {
    sqlite3().sqlite3_get_autocommit(db) || execQuiet(db, "ROLLBACK");
    post(failure(request.id, error));
  } finally {
    if (!keep) close(db);
  }
}

/**
 * The write's statement in `BEGIN IMMEDIATE`, or alone where it refuses a
 * transaction (and may): its result, and whether the transaction is open.
 */
async function writeOnce(
  db: Deno.PointerValue,
  request: Write,
): Promise<WriteAnswer> {
  let inTransaction = false;
  let result: QueryResult;
  const before = totalChanges(db);
  const statement = (text: string, limits = request.limits) =>
    // The client's statement, or the tracked form built around it
    // (the same placeholders in the same places): its values bind.
    run(
      db,
      text,
      request.params ?? [],
      false,
      (prepared) => readRows(db, prepared, limits, true),
    );
  const once = request.track === undefined
    ? () => Promise.resolve(statement(request.sql))
    : () => tracked(db, request, before, statement);
  execAll(db, "BEGIN IMMEDIATE");
  inTransaction = true;
  // What cannot be counted is told with the answer (all of SQLite's
  // writes can be tried and rolled back).
  const untold: EveryRow[] = [];
  const judge = request.everyRow
    ? await startJudgment(
      statementJudgment(request.sql, "sqlite"),
      (table, limit) => Promise.resolve(countRows(db, table, limit)),
      (found) => untold.push(...found),
      { replaces: (table) => Promise.resolve(conflictReplaces(db, table)) },
    )
    : null;
  // What its triggers and foreign keys' actions reach (every_row_effects.ts).
  const effects = request.everyRow
    ? await startSqliteEffects(
      request.sql,
      (sql, params) => Promise.resolve(allRows(db, sql, params)),
      (found) => untold.push(...found),
    )
    : null;
  try {
    result = await once();
  } catch (error) {
    if (!/within a transaction/i.test((error as Error).message)) {
      throw error;
    }
    execAll(db, "ROLLBACK");
    inTransaction = false;
    if (request.needsTransaction) {
      throw new SqliteError("no_transaction", "DBPORT_NO_TRANSACTION");
    }
    result = statement(request.sql);
  }
  // The statement's own rows (its triggers' are not among them).
  const changes = sqlite3().sqlite3_changes(db);
  result = { ...result, rowsAffected: totalChanges(db) - before };
  if (judge === null || !inTransaction) return { result, inTransaction };
  return {
    result,
    inTransaction,
    everyRow: [
      ...untold,
      ...await judge(changes),
      ...(effects === null ? [] : await effects()),
    ],
  };
}

/** Whether a key of `table` says ON CONFLICT REPLACE (every_row.ts). */
function conflictReplaces(
  db: Deno.PointerValue,
  table: QualifiedName,
): boolean {
  const master = table.schema === null
    ? "sqlite_master"
    : `${quoteIdent(table.schema, "sqlite")}.sqlite_master`;
  return run(
    db,
    `SELECT sql FROM ${master} WHERE type = 'table' AND name = ?`,
    [table.name],
    false,
    (prepared) =>
      step(db, prepared.handle) &&
      /\bconflict\s+replace\b/i.test(String(rowValues(prepared.handle, 1)[0])),
  );
}

/** Every row of one query of dbport's own (sqlite_every_row.ts). */
function allRows(
  db: Deno.PointerValue,
  sql: string,
  params: string[],
): unknown[][] {
  return run(db, sql, params, false, (prepared) => {
    const count = sqlite3().sqlite3_column_count(prepared.handle);
    const rows: unknown[][] = [];
    while (step(db, prepared.handle)) {
      rows.push(rowValues(prepared.handle, count));
    }
    return rows;
  });
}

/** The rows of `table`, at most `limit` (every_row.ts). */
function countRows(
  db: Deno.PointerValue,
  table: QualifiedName,
  limit: number,
): number {
  return run(
    db,
    boundedCount(table, limit, "sqlite"),
    [],
    false,
    (prepared) =>
      step(db, prepared.handle)
        ? Number(rowValues(prepared.handle, 1)[0])
        : Number.NaN,
  );
}

/** A tracked write's statement on the open transaction: counts and keys. */
function tracked(
  db: Deno.PointerValue,
  request: Write,
  before: number,
  statement: (text: string, limits?: Limits) => QueryResult,
): Promise<QueryResult> {
  const shape = dmlShape(request.sql, "sqlite");
  return trackedWrite(request.sql, request.track!, request.limits.maxRows, {
    shape,
    ...SQLITE_TRACK,
    keyColumns: (target) =>
      Promise.resolve(
        run(
          db,
          SQLITE_KEY_COLUMNS,
          [target.name, target.schema ?? "main"],
          false,
          (prepared) => {
            const columns: string[] = [];
            while (step(db, prepared.handle)) {
              columns.push(String(rowValues(prepared.handle, 1)[0]));
            }
            return columns;
          },
        ),
      ),
    run: (text, maxRows, maxBytes) =>
      Promise.resolve(
        statement(text, { ...request.limits, maxRows, maxBytes }),
      ),
    counted: () =>
      Promise.resolve(
        sqliteCounts(
          shape.target,
          sqlite3().sqlite3_changes(db),
          totalChanges(db) - before,
        ),
      ),
  });
}

/** Commit or roll back a write the worker answered. */
export function finish(request: Extract<Request, { type: "finish" }>): void {
  const db = writes.get(request.id);
  writes.delete(request.id);
  if (db === undefined) {
    post({ id: request.id, ok: true, value: null });
    return;
  }
  try {
    // COMMIT is never stopped: it waits for readers within the busy timeout.
    sqlite3().sqlite3_busy_timeout(db, 5_000);
    execAll(db, request.commit ? "COMMIT" : "ROLLBACK");
    post({ id: request.id, ok: true, value: null });
  } catch (error) {
    execQuiet(db, "ROLLBACK");
    post(failure(request.id, error));
  } finally {
    close(db);
  }
}

/** Roll back and close every write still open (the worker is closing). */
export function closeWrites(): void {
  for (const db of writes.values()) {
    execQuiet(db, "ROLLBACK");
    close(db);
  }
  writes.clear();
}
