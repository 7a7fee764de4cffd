/**
 * Judging whether a MariaDB write changed every row of a table
 * (every_row.ts), with what the catalog says of its table: a write to a
 * table whose engine cannot roll back (MyISAM, MEMORY, Aria) cannot be
 * tried first, so it is judged before it runs; a child table a DELETE's
 * foreign keys cascade to is counted before and after, as its rows are not
 * among the statement's own.
 *
 * @module
 */

import {
  boundedCount,
  type CountRows,
  EVERY_ROW_MIN,
  type QualifiedName,
  startJudgment,
  type StatementJudgment,
  statementJudgment,
  writesRows,
} from "../every_row.ts";
import { storedCall } from "./mysql_check.ts";
import type { EveryRow } from "../types.ts";
import { type MysqlRows, untriable } from "./mysql_changes.ts";
import { tableName } from "../tracked_write.ts";

/** The tables whose foreign keys to `table` delete their rows with it. */
async function cascadingChildren(
  table: QualifiedName,
  rows: MysqlRows,
): Promise<QualifiedName[]> {
  const found = await rows(
    `SELECT CONSTRAINT_SCHEMA AS s, TABLE_NAME AS t
       FROM information_schema.REFERENTIAL_CONSTRAINTS
      WHERE UNIQUE_CONSTRAINT_SCHEMA = COALESCE(?, DATABASE())
        AND REFERENCED_TABLE_NAME = ? AND DELETE_RULE = 'CASCADE'`,
    [table.schema, table.name],
  );
  return found.map((row) => ({ schema: String(row.s), name: String(row.t) }));
}

/**
 * Start judging `text` on its session (`rows`): `hook` is called before it
 * runs when it cannot be tried; the judgment once it ran, given its count.
 */
export async function startMysqlJudgment(
  text: string,
  rows: MysqlRows,
  hook: (found: EveryRow[]) => void,
): Promise<(changes: number) => Promise<EveryRow[]>> {
  const count: CountRows = async (table, limit) => {
    const [row] = await rows(boundedCount(table, limit, "mysql"), []);
    return Number(row?.dbport_n);
  };
  const called = writesRows(text, "mysql") ? storedCall(text) : null;
  // A stored function a write calls changes rows no count names: asked
  // before it runs (`insert into log values (wipe())`, outsider stop 60).
  const judgment: StatementJudgment = called === null
    ? statementJudgment(text, "mysql")
    : {
      kind: "unjudged",
      why:
        `it calls ${called.toLowerCase()}(), which may change rows no count names`,
    };
  const judge = await startJudgment(judgment, count, hook, {
    check: (table) => untriable(table, rows),
  });
  // A DELETE or REPLACE's cascades: each child with rows now, counted again.
  const deletes = judgment.kind === "delete" ||
    (judgment.kind === "written" && judgment.replaces);
  const children = deletes ? await cascadingChildren(judgment.table, rows) : [];
  const before = await Promise.all(children.map((child) => count(child, 2)));
  return async (changes) => {
    const found = await judge(changes);
    for (const [i, child] of children.entries()) {
      if (before[i]! < EVERY_ROW_MIN || await count(child, 1) > 0) continue;
      found.push({ table: tableName(child), rows: null, how: "deleted" });
    }
    return found;
  };
}
