/**
 * Write previews (docs/security.md "Write previews"): before the user is
 * asked to approve a write, it runs once inside a transaction that is always
 * rolled back, and the question says what it changes — exactly how many
 * rows, a few of them as the statement leaves them, and for DROP/TRUNCATE
 * each table and its row count. Where a rollback cannot undo the effect
 * (MySQL/MariaDB DDL commits at once; sequences, advisory locks, other
 * hosts), the preview is the engine's estimate or says why there is none.
 *
 * @module
 */

import { previewMode, type SavedConnection } from "../../app/connections.ts";
import type { Classified } from "../../db/sql/classifier.ts";
import { dryRunRefusal, planRefusal } from "../../db/dry_run.ts";
import { DbError } from "../../db/errors.ts";
import { DIALECTS } from "../../db/dialect.ts";
import type {
  BindValue,
  Changes,
  QueryOptions,
  QueryResult,
  TableChange,
} from "../../db/types.ts";
import type { Resolved } from "./resolved.ts";
import type { WritePreview } from "./write_preview.ts";
import {
  droppedTables,
  outsideEffect,
  SAMPLE_ROWS,
  targetTable,
} from "./preview_sql.ts";
import {
  changedKeysMessage,
  changedMessage,
  changedTablesMessage,
} from "./preview_text.ts";

export type { WritePreview };

/** A preview's cells are cut here: enough to recognise a row. */
export const SAMPLE_CELL_CHARS = 200;

/**
 * Thrown by the dry run's commit hook: the write is rolled back. A DbError,
 * so the drivers hand it back as it is.
 */
class DryRun extends DbError {
  constructor(readonly result: QueryResult) {
    super("held", "the dry run is rolled back");
  }
}

/** Why a connection with private columns previews no count. */
export const PRIVATE_NO_PREVIEW =
  "no dry run or estimate: this connection has private columns, and either would read them as the saved login before anyone approves";

/** What a preview needs to know of the call. */
export interface PreviewCall {
  timeoutSeconds: number;
  signal: AbortSignal;
  /** Values bound to the statement's placeholders. */
  params?: readonly BindValue[];
}

/**
 * Preview `statement` on `resolved` per its connection's `writePreview`
 * (null: `off`). A dry run that fails throws the driver's error: the call
 * then ends with the error the real run would give, and no one is asked.
 */
export async function previewWrite(
  resolved: Resolved,
  statement: Classified,
  call: PreviewCall,
): Promise<WritePreview | null> {
  const mode = previewMode(resolved.connection);
  if (mode === "off") return null;
  const engine = resolved.driver.engine;
  const table = targetTable(statement);
  const base = {
    table,
    columns: [],
    rows: [],
    tables: [],
    changes: null,
    keys: null,
    unbound: null,
    choice: null,
  };
  if (statement.tier === "destructive") {
    const tables = droppedTables(statement);
    if (tables !== null) {
      const counted = await countRows(resolved, tables, call);
      return {
        ...base,
        exact: true,
        rowsAffected: null,
        tables: counted,
        note: counted.length === tables.tables.length
          ? null
          : "a table whose rows could not be read as a plain read is not counted",
      };
    }
  }
  if (
    (resolved.connection.privateColumns?.length ?? 0) > 0 &&
    resolved.connection.writePreview !== "dryRun"
  ) {
    // A dry run's count (SQLite: exact, `WHERE email LIKE 'a%'`) or the
    // planner's estimate (PostgreSQL: the column's most common values)
    // reaches the client before anyone approves: a probe of the private
    // columns as the saved login. Neither, unless the user asks for the dry run.
    return {
      ...base,
      exact: false,
      rowsAffected: null,
      note: PRIVATE_NO_PREVIEW,
    };
  }
  const vetted = dryRunRefusal(statement);
  const outside = vetted === undefined
    ? outsideEffect(statement, engine)
    : vetted;
  if (outside !== null || mode === "estimate") {
    const note = outside ?? estimateReason(resolved.connection);
    // Planning folds functions with constant arguments: no plan either.
    const noPlan = planRefusal(statement);
    return {
      ...base,
      exact: false,
      rowsAffected: noPlan === null
        ? await estimate(resolved, statement, call)
        : null,
      note: noPlan === null
        ? note
        : `${note}; no estimate either (planning folds functions, and ${noPlan})`,
    };
  }
  let result: QueryResult;
  try {
    result = await dryRun(resolved, statement, call);
  } catch (error) {
    if (error instanceof DbError && error.kind === "uncounted") {
      // The engine cannot say exactly what it would change: its estimate,
      // and why there is no dry run.
      return {
        ...base,
        exact: false,
        rowsAffected: await estimate(resolved, statement, call),
        note: error.message,
      };
    }
    // VACUUM, CREATE DATABASE and the like refuse a transaction: nothing
    // can try them and take them back, so the user is asked without one.
    if (!(error instanceof DbError) || error.kind !== "no_transaction") {
      throw error;
    }
    return { ...base, exact: false, rowsAffected: null, note: error.message };
  }
  return {
    ...base,
    exact: true,
    rowsAffected: result.rowsAffected,
    columns: result.columns,
    rows: result.rows,
    note: null,
    ...measured(result.changes),
  };
}

/** A dry run's changes as the preview keeps them. */
function measured(
  changes: Changes | undefined,
): Pick<WritePreview, "changes" | "keys" | "unbound" | "choice"> {
  if (changes === undefined) {
    return { changes: null, keys: null, unbound: null, choice: null };
  }
  const changed = changes.tables.some((table) => table.rows > 0);
  return {
    changes: changes.tables,
    keys: changes.keys,
    unbound: changed ? changes.unbound : null,
    choice: changes.choice,
  };
}

/** The connection's preview mode (lib/app/connections.ts). */
export { previewMode };

/** Why a connection's preview is the estimate, in the approval's one line. */
export function estimateReason(connection: SavedConnection): string {
  return connection.aiLogin === undefined
    ? "this connection's write preview is set to the estimate"
    : `this connection's AI login (${connection.aiLogin.user}) keeps reads least-privilege, and a dry run would run as the saved login before anyone approves`;
}

/** The approved run's tracking: its changes measured, no sample rows. */
export const HOLD_TRACK = { sampleRows: 0 };

/**
 * Run `statement` with its effect held to `preview` (an exact one): any
 * table whose changed rows differ in number from the preview's, or changed
 * rows whose primary keys differ from the ones previewed, roll it back with
 * `changed` (docs/security.md "What the hold compares").
 */
export function holdTo(
  preview: WritePreview | null,
): QueryOptions["beforeCommit"] {
  if (preview === null || !preview.exact || preview.rowsAffected === null) {
    return undefined;
  }
  const approved = preview.rowsAffected;
  const tables = preview.changes;
  return (result) => {
    if (tables === null || result.changes === undefined) {
      if (result.rowsAffected !== approved) {
        throw new DbError(
          "changed",
          changedMessage(result.rowsAffected, approved),
        );
      }
      return;
    }
    const now = result.changes;
    if (!sameTables(now.tables, tables)) {
      throw new DbError("changed", changedTablesMessage(now.tables, tables));
    }
    if (preview.keys !== null && now.keys !== preview.keys) {
      throw new DbError("changed", changedKeysMessage(tables));
    }
  };
}

/** Whether two accounts of changed tables say the same, table by table. */
function sameTables(a: TableChange[], b: TableChange[]): boolean {
  const count = (list: TableChange[]) =>
    new Map(list.filter((t) => t.rows > 0).map((t) => [t.table, t.rows]));
  const left = count(a);
  const right = count(b);
  return left.size === right.size &&
    [...left].every(([table, rows]) => right.get(table) === rows);
}

/**
 * Run `text` as a write in a transaction that is always rolled back, and
 * answer what it would have committed.
 */
async function heldBack(
  resolved: Resolved,
  text: string,
  limits: { maxRows: number; maxBytes: number; maxCellChars: number },
  call: PreviewCall,
  tracked = true,
): Promise<QueryResult> {
  try {
    await resolved.driver.query(text, {
      ...limits,
      // The statement's own placeholders, or its plan's (the same ones).
      ...(call.params?.length ? { params: call.params } : {}),
      mode: "write",
      timeoutMs: call.timeoutSeconds * 1000,
      signal: call.signal,
      ...(tracked ? { track: { sampleRows: limits.maxRows } } : {}),
      beforeCommit: (result) => {
        throw new DryRun(result);
      },
    });
  } catch (error) {
    if (error instanceof DryRun) return error.result;
    throw error;
  }
  // The hook always throws; a driver that skipped it committed nothing it
  // was not asked to, but there is no result to show.
  throw new DbError("no_transaction", "the dry run did not reach COMMIT");
}

/**
 * The statement's dry run: what it changes in every table, a few of its
 * changed rows (the driver makes it return them where the engine can) and
 * its rows' keys.
 */
async function dryRun(
  resolved: Resolved,
  statement: Classified,
  call: PreviewCall,
): Promise<QueryResult> {
  return await heldBack(resolved, statement.text, {
    maxRows: SAMPLE_ROWS,
    maxBytes: 64 * 1024,
    maxCellChars: SAMPLE_CELL_CHARS,
  }, call);
}

/** The engine's estimate of the rows a write changes, or null. */
async function estimate(
  resolved: Resolved,
  statement: Classified,
  call: PreviewCall,
): Promise<number | null> {
  const dialect = DIALECTS[resolved.driver.engine];
  const writeRows = dialect.writeRows;
  if (writeRows === null) return null;
  const text = dialect.planStatement(statement.text, {
    analyze: false,
    mariadb: false,
  });
  // A plan changes nothing; it is held back all the same (MariaDB plans a
  // write only in a transaction that may write). No plan, no estimate.
  const result = await heldBack(
    resolved,
    text,
    {
      maxRows: 10,
      maxBytes: 1_000_000,
      maxCellChars: 1_000_000,
    },
    call,
    false,
  ).catch(() => null);
  return result === null ? null : writeRows(dialect.planOf(result.rows));
}

/**
 * Each table's row count, read in the read-only transaction. A table that
 * does not exist fails here as the statement would, unless the statement
 * says IF EXISTS: then it is left out.
 */
async function countRows(
  resolved: Resolved,
  dropped: { tables: string[]; ifExists: boolean },
  call: PreviewCall,
): Promise<{ table: string; rows: number }[]> {
  const counted: { table: string; rows: number }[] = [];
  for (const table of dropped.tables) {
    const text = `SELECT count(*) FROM ${table}`;
    let result: QueryResult;
    try {
      // Read only as a client's read would be: a view whose definition
      // calls a function that writes or reaches outside is not counted.
      const checked = await resolved.driver.check(text, "read", {
        signal: call.signal,
        timeoutMs: call.timeoutSeconds * 1000,
      });
      if (
        !checked.ok || checked.reach !== null || checked.denied ||
        (checked.tier !== null && checked.tier !== "read")
      ) continue;
      result = await resolved.driver.query(text, {
        mode: "read",
        maxRows: 1,
        maxBytes: 10_000,
        maxCellChars: 100,
        timeoutMs: call.timeoutSeconds * 1000,
        signal: call.signal,
      });
    } catch (error) {
      if (
        dropped.ifExists && error instanceof DbError && error.kind === "query"
      ) {
        continue;
      }
      throw error;
    }
    counted.push({ table, rows: Number(result.rows[0]?.[0] ?? 0) });
  }
  return counted;
}
