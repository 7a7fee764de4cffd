/**
 * Judging whether a MariaDB write changed every row of a table
 * (every_row.ts), with what the catalog says of its table: a write to a
 * table whose engine cannot roll back (MyISAM, MEMORY, Aria) cannot be
 * tried first, so it is judged before it runs; the tables its foreign keys'
 * actions and its table's triggers reach are counted before and after, as
 * their rows are not among the statement's own (every_row_effects.ts).
 *
 * @module
 */

import {
  boundedCount,
  type CountRows,
  type QualifiedName,
  startJudgment,
  type StatementJudgment,
  statementJudgment,
  writesRows,
} from "../every_row.ts";
import {
  type EffectsCatalog,
  effectsRoot,
  type Look,
  startEffects,
  type TriggerEvent,
} from "../every_row_effects.ts";
import { storedCall } from "./mysql_check.ts";
import type { EveryRow } from "../types.ts";
import { type MysqlRows, untriable } from "./mysql_changes.ts";

/**
 * The foreign keys referencing `table` whose `rule` acts on their rows,
 * and `table`'s triggers on `events`: one query.
 */
async function look(
  rows: MysqlRows,
  table: QualifiedName,
  rule: "DELETE" | "UPDATE" | null,
  events: TriggerEvent[],
): Promise<Look> {
  const column = rule === "UPDATE" ? "UPDATE_RULE" : "DELETE_RULE";
  const columns = (name: string) =>
    `(SELECT GROUP_CONCAT(u.${name} ORDER BY u.ORDINAL_POSITION SEPARATOR '\\n')
        FROM information_schema.KEY_COLUMN_USAGE u
       WHERE u.CONSTRAINT_SCHEMA = r.CONSTRAINT_SCHEMA
         AND u.TABLE_NAME = r.TABLE_NAME
         AND u.CONSTRAINT_NAME = r.CONSTRAINT_NAME)`;
  // No rule (a plain INSERT): the triggers only, no scan of the keys.
  const keys = rule === null ? "" : `
    SELECT 'fk' AS k, r.CONSTRAINT_SCHEMA AS s, r.TABLE_NAME AS t,
           r.CONSTRAINT_NAME AS c, r.${column} AS rule,
           ${columns("COLUMN_NAME")} AS cols,
           ${columns("REFERENCED_COLUMN_NAME")} AS refs
      FROM information_schema.REFERENTIAL_CONSTRAINTS r
     WHERE r.UNIQUE_CONSTRAINT_SCHEMA = COALESCE(?, DATABASE())
       AND r.REFERENCED_TABLE_NAME = ?
       AND r.${column} IN ('CASCADE', 'SET NULL', 'SET DEFAULT')
    UNION ALL`;
  const found = await rows(
    `${keys}
     SELECT 'tr' AS k, TRIGGER_SCHEMA AS s, TRIGGER_NAME AS t, NULL AS c,
            NULL AS rule, NULL AS cols, ACTION_STATEMENT AS refs
       FROM information_schema.TRIGGERS
      WHERE EVENT_OBJECT_SCHEMA = COALESCE(?, DATABASE())
        AND EVENT_OBJECT_TABLE = ? AND FIND_IN_SET(EVENT_MANIPULATION, ?)`,
    [
      ...(rule === null ? [] : [table.schema, table.name]),
      table.schema,
      table.name,
      events.join(","),
    ],
  );
  const lines = (value: unknown) =>
    value === null || value === undefined
      ? []
      : String(value).split("\n").filter((line) => line !== "");
  return {
    references: found.filter((row) => row.k === "fk").map((row) => ({
      child: { schema: String(row.s), name: String(row.t) },
      name: String(row.c),
      rule: String(row.rule),
      columns: lines(row.cols),
      referenced: lines(row.refs).length === 0 ? null : lines(row.refs),
    })),
    triggers: found.filter((row) => row.k === "tr").map((row) => ({
      name: String(row.t),
      schema: String(row.s),
      body: String(row.refs ?? ""),
    })),
  };
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
  // Once the write ran, a count is the fewer of two views: the
  // transaction's snapshot, taken as it started (mysql_write.ts: a row
  // another session inserted meanwhile is not in it), and the rows
  // committed now, as the write's own locking reads saw them (a row
  // another session re-keyed meanwhile is gone from it, outsider stop 61).
  let ran = false;
  const counted = async (
    table: QualifiedName,
    limit: number,
    where?: string,
  ) => {
    const one = async (locking: boolean) => {
      const [row] = await rows(
        boundedCount(table, limit, "mysql", where, locking),
        [],
      );
      return Number(row?.dbport_n);
    };
    return ran ? Math.min(await one(false), await one(true)) : one(false);
  };
  const count: CountRows = (table, limit) => counted(table, limit);
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
  // Its foreign keys' actions and its table's triggers. MariaDB's actions
  // set off no trigger; a trigger's own DELETE does.
  const root = judgment.kind === "unjudged" ? null : effectsRoot(text, "mysql");
  const catalog: EffectsCatalog = {
    dialect: "mysql",
    look: (table, rule, events) => look(rows, table, rule, events),
    actionsFireTriggers: false,
    count: counted,
    callsCode: (body) => {
      const name = storedCall(body);
      return name === null
        ? null
        : `calls ${name.toLowerCase()}(), which may change rows no count names`;
    },
  };
  const effects = root === null
    ? null
    : await startEffects(catalog, root, hook);
  return async (changes) => {
    ran = true;
    return [
      ...await judge(changes),
      ...(effects === null ? [] : await effects()),
    ];
  };
}
