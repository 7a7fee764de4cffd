/**
 * What a SQLite write sets off beyond its own rows (every_row_effects.ts):
 * the triggers of its table (read from `sqlite_master`), and, where the
 * session enforces foreign keys (`PRAGMA foreign_keys`, off unless the
 * library was built with it on), the foreign keys of other tables whose
 * ON DELETE or ON UPDATE action changes their rows. One query for a table
 * with neither. Shared by the local worker and the remote client.
 *
 * @module
 */

import { quoteIdent } from "../sql/identifiers.ts";
import { tokenize } from "../sql/lexer.ts";
import { boundedCount, type QualifiedName } from "../every_row.ts";
import {
  effectsRoot,
  type Look,
  startEffects,
  type TriggerEvent,
} from "../every_row_effects.ts";
import type { EveryRow } from "../types.ts";

/** One query of dbport's own in the write's transaction: its rows. */
export type SqliteRows = (
  sql: string,
  params: string[],
) => Promise<unknown[][]>;

/** The event a trigger's text says it fires on, and its body. */
function triggerParts(
  sql: string,
): { event: string | null; body: string } {
  const tokens = tokenize(sql, "sqlite");
  const event = tokens.find((token) =>
    token.kind === "word" && ["DELETE", "INSERT", "UPDATE"].includes(token.text)
  );
  const begin = tokens.find((token) =>
    token.kind === "word" && token.text === "BEGIN"
  );
  return {
    event: event?.text ?? null,
    body: begin === undefined ? sql : sql.slice(begin.end),
  };
}

/** `table`'s triggers on `events`, and the foreign keys acting on `rule`. */
async function look(
  rows: SqliteRows,
  table: QualifiedName,
  rule: "DELETE" | "UPDATE" | null,
  events: TriggerEvent[],
): Promise<Look> {
  const schema = table.schema ?? "main";
  const master = `${quoteIdent(schema, "sqlite")}.sqlite_master`;
  const found = await rows(
    `SELECT 'tr', name, sql, NULL, NULL, NULL, NULL
       FROM ${master} WHERE type = 'trigger' AND tbl_name = ? COLLATE NOCASE
     UNION ALL
     SELECT 'fk', m.name, f.id, f.on_delete, f.on_update,
            group_concat(f."from", char(10)),
            group_concat(coalesce(f."to", ''), char(10))
       FROM ${master} m JOIN pragma_foreign_key_list(m.name, ?) f
      WHERE (SELECT foreign_keys FROM pragma_foreign_keys) = 1
        AND m.type = 'table' AND f."table" = ? COLLATE NOCASE
      GROUP BY m.name, f.id`,
    [table.name, schema, table.name],
  );
  const result: Look = { references: [], triggers: [] };
  for (const row of found) {
    const [kind, name, third, onDelete, onUpdate, from, to] = row.map((
      value,
    ) => value === null || value === undefined ? null : String(value));
    if (kind === "tr") {
      const parts = triggerParts(third ?? "");
      if (events.includes(parts.event as TriggerEvent)) {
        result.triggers.push({
          name: name!,
          schema: table.schema,
          body: parts.body,
        });
      }
      continue;
    }
    const action = (rule === "DELETE" ? onDelete : onUpdate)?.toUpperCase();
    if (rule === null || !ACTIONS.has(action ?? "")) continue;
    const referenced = (to ?? "").split("\n");
    result.references.push({
      child: { schema: table.schema, name: name! },
      name: `foreign key ${third} of ${name}`,
      rule: action!,
      columns: (from ?? "").split("\n").filter((column) => column !== ""),
      referenced: referenced.includes("") ? null : referenced,
    });
  }
  return result;
}

/** Foreign key actions that change the child's rows. */
const ACTIONS = new Set(["CASCADE", "SET NULL", "SET DEFAULT"]);

/**
 * Start judging what `text` sets off beyond its own table: `hook` gets
 * before it runs what no count can tell; the judgment once it ran.
 */
export async function startSqliteEffects(
  text: string,
  rows: SqliteRows,
  hook: (found: EveryRow[]) => void,
): Promise<() => Promise<EveryRow[]>> {
  const root = effectsRoot(text, "sqlite");
  if (root === null) return () => Promise.resolve([]);
  return await startEffects(
    {
      dialect: "sqlite",
      look: (table, rule, events) => look(rows, table, rule, events),
      // SQLite's actions set off the child's triggers.
      actionsFireTriggers: true,
      count: async (table, limit, where) => {
        const [row] = await rows(
          boundedCount(table, limit, "sqlite", where),
          [],
        );
        return Number(row?.[0]);
      },
    },
    root,
    hook,
  );
}
