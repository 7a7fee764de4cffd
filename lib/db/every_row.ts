/**
 * Whether a write changed every row of a table, judged by its effect as the
 * engine counts it rather than by its words (docs/security.md "Every row,
 * by effect"): `DELETE ... WHERE true`, `MERGE ... ON true`, an upsert of a
 * table from itself and a function whose body empties a table all change
 * every row without the words "no WHERE". A write that ran without asking
 * and did so is rolled back before COMMIT and asked about
 * (lib/features/tools/every_row.ts).
 *
 * The counts are the engine's: a table's rows inserted, updated and deleted
 * by the transaction, and its rows after the write, counted only as far as
 * the judgment needs (a LIMIT one past the rows the write put in), so a
 * write of one row in a table of millions reads at most two.
 *
 * @module
 */

import { dmlShape } from "./sql/dml_shape.ts";
import { quoteIdent } from "./sql/identifiers.ts";
import { tableName } from "./tracked_write.ts";
import { type Dialect, tokenize } from "./sql/lexer.ts";
import type { EveryRow } from "./types.ts";

/** A table of fewer rows is never "every row": one row is what WHERE picks. */
export const EVERY_ROW_MIN = 2;

/** How a write touched one table, as the engine counts it. */
export interface Touch {
  /** The table as the engine names it. */
  table: string;
  inserted: number;
  updated: number;
  deleted: number;
}

/** Whether `touch` could have changed every row (worth counting at all). */
export function mayCoverTable(touch: Touch): boolean {
  return touch.updated + touch.deleted >= EVERY_ROW_MIN;
}

/**
 * The rows worth counting after the write to judge `touch`: one past the
 * rows it put in. Counting stops there (`LIMIT`); a table with more rows
 * kept a row the write did not touch.
 */
export function rowsToCount(touch: Touch): number {
  return touch.inserted + touch.updated + 1;
}

/**
 * Whether the write changed every row `touch`'s table had before it, from
 * `now`, its rows after the write counted up to {@linkcode rowsToCount}:
 * the rows before are `now - inserted + deleted`, the rows touched
 * `updated + deleted`. A row updated twice counts twice: the judgment errs
 * towards asking.
 */
export function judgeTouch(touch: Touch, now: number): EveryRow | null {
  const before = now - touch.inserted + touch.deleted;
  const touched = touch.updated + touch.deleted;
  // Rows inserted and undone (a subtransaction rolled back) count as
  // inserted, and make the rows before look fewer than two (outsider stop
  // 61: ten rows inserted and undone, then every row deleted).
  if (
    before < EVERY_ROW_MIN && touch.inserted > 0 && touched >= EVERY_ROW_MIN
  ) {
    return {
      table: null,
      rows: null,
      how: "unjudged",
      why:
        `it inserted rows into ${touch.table} and deleted or changed ${touched}: whether they were every row it had cannot be told`,
    };
  }
  if (before < EVERY_ROW_MIN || touched < before) return null;
  return {
    table: touch.table,
    rows: before,
    how: touch.updated === 0 ? "deleted" : "changed",
  };
}

/**
 * The same judgment where the engine counts a statement's rows but not how
 * many rows it replaced (SQLite's `INSERT OR REPLACE`, an upsert, MariaDB's
 * `REPLACE ... SELECT`): the table had at least two rows before (`before`,
 * counted up to 2) and has no more after than the statement wrote
 * (`written`; `now` counted up to `written + 1`), so each row it had was
 * replaced or updated.
 */
export function judgeWritten(
  table: string,
  before: number,
  written: number,
  now: number,
): EveryRow | null {
  if (before < EVERY_ROW_MIN || now > written) return null;
  return { table, rows: null, how: "changed" };
}

/** One line for the user: what the write did, table by table. */
export function everyRowReason(found: readonly EveryRow[]): string {
  const parts = found.map((entry) => {
    if (entry.how === "unjudged") {
      return `dbport cannot count which rows it changes (${
        entry.why ?? "the engine does not say"
      })`;
    }
    const rows = entry.rows === null ? "" : ` (${entry.rows} rows)`;
    return `it ${
      entry.how === "deleted" ? "deletes" : "changes"
    } every row of ${entry.table}${rows}`;
  });
  return `${parts.join("; ")}: tried and rolled back, not committed`;
}

/**
 * How a MariaDB or SQLite write is judged, from its words: which table it
 * changes and how its rows are counted. These engines count a statement's
 * own rows, not its triggers' (docs/security.md "Every row, by effect").
 */
export type StatementJudgment =
  /** Nothing it does can change a row it did not add (a plain INSERT, DDL). */
  | { kind: "none" }
  /** DELETE or UPDATE of one table: its own row count, the rows after. */
  | { kind: "delete"; table: QualifiedName }
  /**
   * UPDATE of one table; `replacing`: SQLite's UPDATE OR REPLACE, whose
   * conflicts delete rows its count leaves out (counted before, then).
   */
  | { kind: "update"; table: QualifiedName; replacing?: boolean }
  /**
   * An INSERT that may replace rows (an upsert, REPLACE): rows before and
   * after; `replaces`: conflicting rows are deleted (their cascades too).
   */
  | { kind: "written"; table: QualifiedName; replaces: boolean }
  /** Its rows cannot be counted per table: it may change every row. */
  | { kind: "unjudged"; why: string };

/** A judgment made by counting its table's rows. */
export type CountedJudgment = Exclude<
  StatementJudgment,
  { kind: "none" } | { kind: "unjudged" }
>;

/** A table as a statement names it. */
export type QualifiedName = { schema: string | null; name: string };

/**
 * The judgment of `text`, a write in `dialect`. MariaDB's SELECT, CALL, DO
 * or SET can run stored code that writes, whose rows no count attributes.
 */
export function statementJudgment(
  text: string,
  dialect: Dialect,
): StatementJudgment {
  const shape = dmlShape(text, dialect);
  const routines = dialect === "mysql";
  const first = firstWord(text, dialect);
  const callsCode = routines && ROUTINE_WORDS.has(first);
  // DDL (CREATE TRIGGER ... AFTER DELETE ON t) changes no row it is judged by.
  if (!DML_WORDS.has(first) && !callsCode) return { kind: "none" };
  if (shape.keyword === null) {
    return callsCode
      ? {
        kind: "unjudged",
        why: "stored code it calls changes rows no count names",
      }
      : { kind: "none" };
  }
  if (shape.multiTable) {
    return {
      kind: "unjudged",
      why: "a multi-table UPDATE or DELETE counts its rows together",
    };
  }
  if (shape.target === null) {
    return { kind: "unjudged", why: "its table is not one plain name" };
  }
  if (shape.keyword === "DELETE") {
    return { kind: "delete", table: shape.target };
  }
  if (shape.keyword === "UPDATE") {
    return shape.replaces
      ? { kind: "update", table: shape.target, replacing: true }
      : { kind: "update", table: shape.target };
  }
  // An upsert or REPLACE may overwrite every row, VALUES or not; on SQLite
  // a plain INSERT too, where a key says ON CONFLICT REPLACE.
  return shape.upsert || shape.replaces || dialect === "sqlite"
    ? { kind: "written", table: shape.target, replaces: shape.replaces }
    : { kind: "none" };
}

/** The statement's first word, upper-cased ("" when none). */
function firstWord(text: string, dialect: Dialect): string {
  return tokenize(text, dialect).find((t) => t.kind === "word")?.text ?? "";
}

/** Whether `text` begins as a statement that writes rows (no DDL). */
export function writesRows(text: string, dialect: Dialect): boolean {
  return DML_WORDS.has(firstWord(text, dialect));
}

/** Words that begin a statement that writes rows. */
const DML_WORDS = new Set(["INSERT", "UPDATE", "DELETE", "REPLACE", "WITH"]);

/** Words that begin a MariaDB statement that can call stored code. */
const ROUTINE_WORDS = new Set([
  "SELECT",
  "CALL",
  "DO",
  "EXECUTE",
  "WITH",
  "SET",
  "VALUES",
]);

/**
 * A bounded count of `table`'s rows (at most `limit`; those where `where`
 * holds), as `dbport_n`; `locking` (MariaDB): read as a locking read does,
 * the rows committed now rather than the transaction's snapshot, waiting
 * at most 2 s for another session's lock.
 */
export function boundedCount(
  table: QualifiedName,
  limit: number,
  dialect: Dialect,
  where?: string,
  locking = false,
): string {
  const name =
    (table.schema === null ? "" : `${quoteIdent(table.schema, dialect)}.`) +
    quoteIdent(table.name, dialect);
  return `SELECT count(*) AS dbport_n FROM (SELECT 1 FROM ${name}${
    where === undefined ? "" : ` WHERE ${where}`
  } LIMIT ${limit}${locking ? " LOCK IN SHARE MODE WAIT 2" : ""}) dbport_rows`;
}

/**
 * Judge a MariaDB or SQLite write: `count(limit)` counts its table's rows
 * now (at most `limit`), `changes` is the statement's own row count, and
 * `before` the rows counted before it (at most 2; `written` only; null:
 * they could not be counted).
 */
export async function judgeStatement(
  judgment: CountedJudgment,
  changes: number,
  before: number | null,
  counted: (limit: number) => Promise<number>,
): Promise<EveryRow[]> {
  // A session the statement left odd (MariaDB's sql_select_limit = 0)
  // answers no number: the write may have changed every row.
  const count = async (limit: number) => {
    const n = await counted(limit);
    if (!Number.isSafeInteger(n) || n < 0) throw new Error("no count");
    return n;
  };
  const table = tableName(judgment.table);
  try {
    if (judgment.kind === "written") {
      if (before === null) throw new Error("not counted before");
      if (before < EVERY_ROW_MIN) return [];
      const now = await count(changes + 1);
      const found = judgeWritten(table, before, changes, now);
      return found === null ? [] : [found];
    }
    if (judgment.kind === "update" && before !== null) {
      // A replacing UPDATE: the rows its conflicts deleted are the rows
      // before less the rows now (a table past the count's cap: none). An
      // UPDATE adds no row: counting stops at the rows before.
      if (before >= REPLACING_CAP) return [];
      const now = await count(before);
      const found = judgeTouch({
        table,
        inserted: 0,
        updated: changes,
        deleted: Math.max(0, before - now),
      }, now);
      return found === null ? [] : [found];
    }
    const touch: Touch = {
      table,
      inserted: 0,
      updated: judgment.kind === "update" ? changes : 0,
      deleted: judgment.kind === "delete" ? changes : 0,
    };
    if (!mayCoverTable(touch)) return [];
    const found = judgeTouch(touch, await count(rowsToCount(touch)));
    return found === null ? [] : [found];
  } catch {
    return [{
      table: null,
      rows: null,
      how: "unjudged",
      why: `the rows of ${table} could not be counted`,
    }];
  }
}

/**
 * The most rows counted before a replacing UPDATE (SQLite's, in-process):
 * a larger table is not judged (docs/security.md "Every row, by effect").
 */
export const REPLACING_CAP = 100_001;

/** Counts a table's rows, at most `limit`, in the write's transaction. */
export type CountRows = (
  table: QualifiedName,
  limit: number,
) => Promise<number>;

/**
 * Begin judging a MariaDB or SQLite write ({@linkcode statementJudgment})
 * in its transaction, before the statement runs. A write that cannot be counted is judged now, before
 * anything runs (`hook` throws to stop it; a MariaDB CALL commits nothing
 * that could be rolled back when it does DDL, and a MyISAM table none at
 * all); `check` may find more such reasons in the catalog. An upsert's
 * rows before it are counted now. Returns the judgment to make once the
 * statement ran, given its own row count.
 */
export async function startJudgment(
  judgment: StatementJudgment,
  countRows: CountRows,
  hook: (found: EveryRow[]) => void,
  catalog: {
    /** Why a write to the table cannot be tried (MariaDB's MyISAM). */
    check?: (table: QualifiedName) => Promise<string | null>;
    /** Whether a key of the table says ON CONFLICT REPLACE (SQLite). */
    replaces?: (table: QualifiedName) => Promise<boolean>;
  } = {},
): Promise<(changes: number) => Promise<EveryRow[]>> {
  const { check } = catalog;
  if (judgment.kind === "unjudged") {
    hook([{ table: null, rows: null, how: "unjudged", why: judgment.why }]);
  }
  if (judgment.kind === "none" || judgment.kind === "unjudged") {
    return () => Promise.resolve([]);
  }
  const why = check === undefined ? null : await check(judgment.table);
  if (why !== null) hook([{ table: null, rows: null, how: "unjudged", why }]);
  const count = (limit: number) => countRows(judgment.table, limit);
  const replacing = judgment.kind === "update" &&
    (judgment.replacing === true ||
      await (catalog.replaces?.(judgment.table) ?? false));
  const before = judgment.kind === "written"
    ? await count(EVERY_ROW_MIN).catch(() => null)
    : replacing
    ? await count(REPLACING_CAP).catch(() => REPLACING_CAP)
    : null;
  return (changes) => judgeStatement(judgment, changes, before, count);
}
