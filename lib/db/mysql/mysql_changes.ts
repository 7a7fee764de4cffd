/**
 * What a MariaDB write changed (docs/security.md "What the hold compares").
 * MariaDB says only how many rows the statement itself changed: a write
 * that changes rows it does not count — through a trigger, a foreign key's
 * ON DELETE/UPDATE CASCADE or SET NULL, or several tables at once — gets no
 * dry run (`uncounted`, with why). DELETE binds its rows' keys by
 * RETURNING; UPDATE returns no rows, so its count alone is bound.
 *
 * @module
 */

import { type DmlShape, dmlShape } from "../sql/dml_shape.ts";
import { DbError } from "../errors.ts";
import { tableName, trackedWrite, UPSERT_UNKEYED } from "../tracked_write.ts";
import type { QueryOptions, QueryResult, TableChange } from "../types.ts";

/** One query of dbport's own on the write's session. */
export type MysqlRows = (
  sql: string,
  params: unknown[],
) => Promise<Record<string, unknown>[]>;

/** How MariaDB returns and binds a tracked write's rows (tracked_write.ts). */
export const MYSQL_TRACK = {
  // REPLACE and upserts count two per replaced row: no RETURNING there.
  returns: ["INSERT", "DELETE"],
  keyed: ["DELETE"],
  unkeyed: (keyword: string, upsert: boolean) =>
    keyword === "UPDATE"
      ? "MariaDB's UPDATE returns no rows, so only its count is bound"
      : keyword === "REPLACE" || upsert
      ? UPSERT_UNKEYED
      : null,
  keyValue: (columns: string[]) =>
    `JSON_ARRAY(${
      columns.map((column) => `\`${column.replaceAll("`", "``")}\``).join(", ")
    })`,
} as const;

/**
 * Refuse, before anything runs, a write whose changes MariaDB cannot count
 * exactly.
 */
export async function assertCountable(
  shape: DmlShape,
  rows: MysqlRows,
): Promise<void> {
  if (shape.multiTable) {
    throw uncounted(
      "it changes several tables at once, and MariaDB counts their rows together",
    );
  }
  if (shape.keyword === null || shape.target === null) {
    throw uncounted("MariaDB cannot say which table's rows it changes");
  }
  // A MyISAM table's dry run would not be rolled back (outsider stop 59).
  const engine = await untriable(shape.target, rows);
  if (engine !== null) throw uncounted(engine);
  const schema = shape.target.schema;
  // A view's base tables may have triggers or foreign keys of their own.
  const [kind] = await rows(
    `SELECT TABLE_TYPE AS kind FROM information_schema.TABLES
      WHERE TABLE_SCHEMA = COALESCE(?, DATABASE()) AND TABLE_NAME = ?`,
    [schema, shape.target.name],
  );
  if (kind !== undefined && kind.kind !== "BASE TABLE") {
    throw uncounted(
      `${
        tableName(shape.target)
      } is a view, and MariaDB does not count what it changes in its tables`,
    );
  }
  const [triggers] = await rows(
    `SELECT COUNT(*) AS n FROM information_schema.TRIGGERS
      WHERE EVENT_OBJECT_SCHEMA = COALESCE(?, DATABASE()) AND EVENT_OBJECT_TABLE = ?`,
    [schema, shape.target.name],
  );
  if (Number(triggers?.n ?? 0) > 0) {
    throw uncounted(
      `${
        tableName(shape.target)
      } has triggers, and MariaDB does not count the rows they change`,
    );
  }
  // DELETE and REPLACE delete rows, UPDATE and upserts update them; a plain
  // INSERT sets off no action.
  const rule = shape.keyword === "DELETE" || shape.keyword === "REPLACE"
    ? "DELETE_RULE"
    : shape.keyword === "UPDATE" || shape.upsert
    ? "UPDATE_RULE"
    : null;
  if (rule === null) return;
  const [actions] = await rows(
    `SELECT COUNT(*) AS n FROM information_schema.REFERENTIAL_CONSTRAINTS
      WHERE UNIQUE_CONSTRAINT_SCHEMA = COALESCE(?, DATABASE())
        AND REFERENCED_TABLE_NAME = ?
        AND ${rule} IN ('CASCADE', 'SET NULL', 'SET DEFAULT')`,
    [schema, shape.target.name],
  );
  if (Number(actions?.n ?? 0) > 0) {
    throw uncounted(
      `foreign keys of other tables cascade or set null when ${
        tableName(shape.target)
      } changes, and MariaDB does not count those rows`,
    );
  }
}

/** Engines whose writes a ROLLBACK undoes. */
const TRANSACTIONAL = new Set(["InnoDB", "XtraDB", "ROCKSDB", "RocksDB"]);

/**
 * Why a write to `table` cannot be tried and rolled back, or null: an
 * engine that cannot roll back (a view of one, outsider stop 60, so any
 * view).
 */
export async function untriable(
  table: { schema: string | null; name: string },
  rows: MysqlRows,
): Promise<string | null> {
  const [found] = await rows(
    `SELECT TABLE_TYPE AS kind, ENGINE AS engine FROM information_schema.TABLES
      WHERE TABLE_SCHEMA = COALESCE(?, DATABASE()) AND TABLE_NAME = ?`,
    [table.schema, table.name],
  );
  if (found === undefined) return null;
  if (found.kind !== "BASE TABLE") {
    // Its tables may be MyISAM: what a write through it does is not tried.
    return `${
      tableName(table)
    } is a view: dbport cannot tell whether the tables under it roll back`;
  }
  const engine = String(found.engine ?? "");
  return TRANSACTIONAL.has(engine)
    ? null
    : `${
      tableName(table)
    } is a ${engine} table: a write to it cannot be tried and rolled back`;
}

/** The primary key columns of the target, in key order. */
export async function mysqlKeyColumns(
  target: { schema: string | null; name: string },
  rows: MysqlRows,
): Promise<string[]> {
  const found = await rows(
    `SELECT COLUMN_NAME AS name FROM information_schema.KEY_COLUMN_USAGE
      WHERE TABLE_SCHEMA = COALESCE(?, DATABASE()) AND TABLE_NAME = ?
        AND CONSTRAINT_NAME = 'PRIMARY'
      ORDER BY ORDINAL_POSITION`,
    [target.schema, target.name],
  );
  return found.map((row) => String(row.name));
}

/** The statement's own count, on its one table. */
export function mysqlCounts(
  shape: DmlShape,
  result: QueryResult,
): TableChange[] {
  return result.rowsAffected > 0
    ? [{ table: tableName(shape.target), rows: result.rowsAffected }]
    : [];
}

function uncounted(why: string): DbError {
  return new DbError("uncounted", `no dry run: ${why}`);
}

/** A tracked write (QueryOptions.track): refused if MariaDB cannot count it. */
export async function trackedMysqlWrite(
  text: string,
  track: { sampleRows: number },
  fallbackRows: number,
  session: {
    rows: MysqlRows;
    run: (
      text: string,
      limits?: Partial<QueryOptions>,
    ) => Promise<QueryResult>;
  },
): Promise<QueryResult> {
  const shape = dmlShape(text, "mysql");
  await assertCountable(shape, session.rows);
  return await trackedWrite(text, track, fallbackRows, {
    shape,
    ...MYSQL_TRACK,
    keyColumns: (target) => mysqlKeyColumns(target, session.rows),
    run: (text, maxRows, maxBytes) => session.run(text, { maxRows, maxBytes }),
    counted: (result) => Promise.resolve(mysqlCounts(shape, result)),
  });
}
