/**
 * What a MariaDB or SQLite write sets off beyond its own rows, judged like
 * its own (docs/security.md "Every row, by effect"): the foreign keys of
 * other tables whose ON DELETE or ON UPDATE rule deletes or changes their
 * rows (followed table by table, CASCADE after CASCADE), and the triggers
 * of the written table whose bodies DELETE from other tables. Each table
 * reached is counted before and after the write; what no count can tell
 * (a trigger's UPDATE of another table, a CALL, ON UPDATE CASCADE, a trigger
 * set off by another) is asked about before the write runs, naming why.
 *
 * A table with no such foreign keys and no triggers costs one catalog query
 * (`EffectsCatalog.look`).
 *
 * @module
 */

import { dmlShape } from "./sql/dml_shape.ts";
import { quoteIdent } from "./sql/identifiers.ts";
import { type Dialect, tokenize } from "./sql/lexer.ts";
import type { Token } from "./token.ts";
import { tableName } from "./tracked_write.ts";
import type { EveryRow } from "./types.ts";
import { EVERY_ROW_MIN, type QualifiedName } from "./every_row.ts";

/** The most tables followed from one write before it is asked about. */
export const EFFECT_TABLES_MAX = 20;

/** What sets a trigger off. */
export type TriggerEvent = "INSERT" | "UPDATE" | "DELETE";

/** A foreign key of `child` that references the table looked at. */
export interface Reference {
  child: QualifiedName;
  /** The constraint's name. */
  name: string;
  /** Its rule for the event looked at: CASCADE, SET NULL, SET DEFAULT. */
  rule: string;
  /** The child's key columns. */
  columns: string[];
  /** The referenced columns; null when the catalog does not name them. */
  referenced: string[] | null;
}

/** A trigger of the table looked at. */
export interface TriggerBody {
  name: string;
  /** Where the names its body uses unqualified resolve. */
  schema: string | null;
  /** Its body (statements after BEGIN, or the one statement). */
  body: string;
}

/** What the catalog says of one table. */
export interface Look {
  references: Reference[];
  triggers: TriggerBody[];
}

/** The engine's side of the judgment, on the write's own session. */
export interface EffectsCatalog {
  dialect: Dialect;
  /**
   * The foreign keys referencing `table` whose `rule` (ON DELETE or ON
   * UPDATE; none: null) is CASCADE, SET NULL or SET DEFAULT, and its
   * triggers set off by one of `events`: one query.
   */
  look(
    table: QualifiedName,
    rule: "DELETE" | "UPDATE" | null,
    events: TriggerEvent[],
  ): Promise<Look>;
  /** Whether a foreign key's action sets off the child's triggers. */
  actionsFireTriggers: boolean;
  /** The rows of `table` (at most `limit`) where `where` holds (or all). */
  count(table: QualifiedName, limit: number, where?: string): Promise<number>;
  /** Why a trigger body runs code no count names (MariaDB: a stored function). */
  callsCode?(body: string): string | null;
}

/** The write whose effects are judged. */
export interface EffectsRoot {
  table: QualifiedName;
  /** Its foreign keys' rule that the write sets off. */
  rule: "DELETE" | "UPDATE" | null;
  /** The triggers it sets off. */
  events: TriggerEvent[];
  /** UPDATE: the columns it sets; null: unknown (any). */
  sets: string[] | null;
}

/**
 * What a MariaDB or SQLite write `text` sets off on its table: its foreign
 * keys' rule and its triggers' events; null for no write of one table. A
 * REPLACE, or SQLite's INSERT|UPDATE OR REPLACE (a syntax error on
 * MariaDB), deletes the rows it conflicts with: rule DELETE, and DELETE
 * triggers beside its own event's.
 */
export function effectsRoot(
  text: string,
  dialect: "mysql" | "sqlite",
): EffectsRoot | null {
  const shape = dmlShape(text, dialect);
  if (shape.target === null || shape.multiTable) return null;
  const table = shape.target;
  const deletes: TriggerEvent[] = shape.replaces ? ["DELETE"] : [];
  switch (shape.keyword) {
    case "DELETE":
      return { table, rule: "DELETE", events: ["DELETE"], sets: null };
    case "UPDATE":
      return {
        table,
        rule: "UPDATE",
        events: ["UPDATE", ...deletes],
        sets: setColumns(text, dialect),
      };
    case "INSERT":
    case "REPLACE":
      return shape.replaces
        ? { table, rule: "DELETE", events: ["INSERT", ...deletes], sets: null }
        : shape.upsert
        ? {
          table,
          rule: "UPDATE",
          events: ["INSERT", "UPDATE"],
          sets: setColumns(text, dialect),
        }
        : { table, rule: null, events: ["INSERT"], sets: null };
    default:
      return null;
  }
}

/** A table whose rows the write deletes, or whose keys it sets to NULL. */
type Reached =
  | { how: "deleted"; table: QualifiedName; fromTrigger: boolean }
  | { how: "nulled"; table: QualifiedName; columns: string[] };

/**
 * Begin judging what `root`'s write sets off: `hook` gets, before the write
 * runs, what no count can tell; the judgment once it ran is returned.
 */
export async function startEffects(
  catalog: EffectsCatalog,
  root: EffectsRoot,
  hook: (found: EveryRow[]) => void,
): Promise<() => Promise<EveryRow[]>> {
  const unjudged = (why: string): EveryRow[] => [
    { table: null, rows: null, how: "unjudged", why },
  ];
  let plan: Reached[] | string;
  let before: boolean[];
  try {
    plan = await reach(catalog, root);
    before = typeof plan === "string"
      ? []
      : await Promise.all(plan.map((entry) => countBefore(catalog, entry)));
  } catch {
    plan = `the tables ${tableName(root.table)} acts on could not be read`;
    before = [];
  }
  if (typeof plan === "string") {
    hook(unjudged(plan));
    return () => Promise.resolve([]);
  }
  const reached = plan;
  return async () => {
    const found: EveryRow[] = [];
    for (const [i, entry] of reached.entries()) {
      if (!before[i]) continue;
      const where = entry.how === "nulled"
        ? referencing(entry.columns, catalog.dialect)
        : undefined;
      const left = await catalog.count(entry.table, 1, where).catch(() =>
        Number.NaN
      );
      if (left > 0) continue;
      found.push({
        table: tableName(entry.table),
        rows: null,
        how: entry.how === "deleted" ? "deleted" : "changed",
      });
    }
    return found;
  };
}

/**
 * Whether `entry` may lose (deleted) or have changed (nulled) every row:
 * at least two rows, and (nulled) every one of them referencing.
 */
async function countBefore(
  catalog: EffectsCatalog,
  entry: Reached,
): Promise<boolean> {
  if (await catalog.count(entry.table, EVERY_ROW_MIN) < EVERY_ROW_MIN) {
    return false;
  }
  if (entry.how === "deleted") return true;
  const where = `NOT (${referencing(entry.columns, catalog.dialect)})`;
  return await catalog.count(entry.table, 1, where) === 0;
}

/** A child row that references its parent: every key column not NULL. */
function referencing(columns: string[], dialect: Dialect): string {
  return columns.map((column) => `${quoteIdent(column, dialect)} IS NOT NULL`)
    .join(" AND ");
}

function key(table: QualifiedName): string {
  return `${table.schema ?? ""}\u0000${table.name}`.toLowerCase();
}

/**
 * The tables `root`'s write reaches through foreign keys and triggers, or
 * why it cannot be counted.
 */
async function reach(
  catalog: EffectsCatalog,
  root: EffectsRoot,
): Promise<Reached[] | string> {
  const first = await catalog.look(root.table, root.rule, root.events);
  const found: Reached[] = [];
  // The written table is not seen yet: a trigger may delete its rows too
  // (SQLite's recursive triggers; its own count names only the statement's).
  const seen = new Set<string>();
  const queue: Reached[] = [];
  const add = (entry: Reached): string | null => {
    if (seen.has(key(entry.table))) return null;
    seen.add(key(entry.table));
    if (seen.size > EFFECT_TABLES_MAX) {
      return `its foreign keys and triggers reach more than ${EFFECT_TABLES_MAX} tables, past what dbport follows`;
    }
    found.push(entry);
    queue.push(entry);
    return null;
  };
  // A trigger that sets NEW's columns (MariaDB `SET NEW.id = ...`) may
  // change a key the statement's own SET does not name (outsider stop 62).
  const sets = first.triggers.some((trigger) => setsNew(trigger.body))
    ? null
    : root.sets;
  const rootWhy = actions(first.references, root.rule, sets, add) ??
    await triggered(catalog, first.triggers, tableName(root.table), add);
  if (rootWhy !== null) return rootWhy;
  for (let entry = queue.shift(); entry; entry = queue.shift()) {
    const why = await follow(catalog, entry, add);
    if (why !== null) return why;
  }
  return found;
}

/** What the write reaching `entry` sets off in turn. */
async function follow(
  catalog: EffectsCatalog,
  entry: Reached,
  add: (entry: Reached) => string | null,
): Promise<string | null> {
  const name = tableName(entry.table);
  const fires = catalog.actionsFireTriggers ||
    (entry.how === "deleted" && entry.fromTrigger);
  if (entry.how === "deleted") {
    const look = await catalog.look(
      entry.table,
      "DELETE",
      fires ? ["DELETE"] : [],
    );
    if (look.triggers.length > 0) {
      return `rows it deletes in ${name} set off trigger ${
        look.triggers[0]!.name
      }, which dbport does not follow`;
    }
    return actions(look.references, "DELETE", null, add);
  }
  const look = await catalog.look(
    entry.table,
    "UPDATE",
    fires ? ["UPDATE"] : [],
  );
  if (look.triggers.length > 0) {
    return `the keys it sets to NULL in ${name} set off trigger ${
      look.triggers[0]!.name
    }, which dbport does not follow`;
  }
  return actions(look.references, "UPDATE", entry.columns, add);
}

/** The children `references` act on, or why no count can tell. */
function actions(
  references: Reference[],
  rule: "DELETE" | "UPDATE" | null,
  sets: string[] | null,
  add: (entry: Reached) => string | null,
): string | null {
  if (rule === null) return null;
  for (const reference of references) {
    if (rule === "UPDATE" && !touches(reference, sets)) continue;
    const child = tableName(reference.child);
    const on = `ON ${rule} ${reference.rule} of ${child} (${reference.name})`;
    if (reference.rule === "CASCADE" && rule === "DELETE") {
      const why = add({
        how: "deleted",
        table: reference.child,
        fromTrigger: false,
      });
      if (why !== null) return why;
    } else if (reference.rule === "SET NULL" && reference.columns.length > 0) {
      const why = add({
        how: "nulled",
        table: reference.child,
        columns: reference.columns,
      });
      if (why !== null) return why;
    } else {
      return `${on} changes rows of ${child} that no count tells apart`;
    }
  }
  return null;
}

/** Whether an UPDATE setting `sets` changes what `reference` references. */
function touches(reference: Reference, sets: string[] | null): boolean {
  if (sets === null || reference.referenced === null) return true;
  const set = new Set(sets.map((column) => column.toLowerCase()));
  return reference.referenced.some((column) => set.has(column.toLowerCase()));
}

/** The tables `triggers` delete from, or why no count can tell. */
async function triggered(
  catalog: EffectsCatalog,
  triggers: TriggerBody[],
  table: string,
  add: (entry: Reached) => string | null,
): Promise<string | null> {
  for (const trigger of triggers) {
    const named = `trigger ${trigger.name} on ${table}`;
    const code = catalog.callsCode?.(trigger.body) ?? null;
    if (code !== null) return `${named} ${code}`;
    const writes = bodyWrites(trigger.body, catalog.dialect, trigger.schema);
    if (typeof writes === "string") return `${named} ${writes}`;
    for (const target of writes.deletes) {
      const why = add({ how: "deleted", table: target, fromTrigger: true });
      if (why !== null) return why;
    }
    for (const target of writes.inserts) {
      const look = await catalog.look(target, null, ["INSERT"]);
      if (look.triggers.length > 0) {
        return `${named} inserts into ${tableName(target)}, whose trigger ${
          look.triggers[0]!.name
        } dbport does not follow`;
      }
    }
  }
  return null;
}

/** The tables a trigger body deletes from and inserts into. */
interface BodyWrites {
  deletes: QualifiedName[];
  inserts: QualifiedName[];
}

/** Words in a body after which no count can tell what changed. */
const UNCOUNTED: Record<string, string> = {
  UPDATE: "updates rows of another table, which no count tells apart",
  REPLACE: "replaces rows, which no count tells apart",
  CALL: "calls a stored procedure, which may change rows no count names",
  EXECUTE: "runs a prepared statement",
  PREPARE: "prepares a statement",
  MERGE: "merges rows, which no count tells apart",
};

/** Modifiers between INSERT or DELETE and their table. */
const MODIFIERS = new Set([
  "LOW_PRIORITY",
  "QUICK",
  "IGNORE",
  "DELAYED",
  "HIGH_PRIORITY",
  "OR",
  "ABORT",
  "FAIL",
  "ROLLBACK",
]);

/**
 * What a trigger body writes, read from its words (an allowlist: a DELETE
 * of one named table, an INSERT into one), or why no count can tell.
 */
export function bodyWrites(
  body: string,
  dialect: Dialect,
  schema: string | null,
): BodyWrites | string {
  const tokens = tokenize(body, dialect);
  const writes: BodyWrites = { deletes: [], inserts: [] };
  for (let k = 0; k < tokens.length; k++) {
    const token = tokens[k]!;
    if (token.kind === "exec_comment") return "runs a versioned comment";
    if (token.kind !== "word" || tokens[k + 1]?.text === "(") continue;
    const uncounted = UNCOUNTED[token.text];
    if (uncounted !== undefined) return uncounted;
    if (token.text !== "DELETE" && token.text !== "INSERT") continue;
    let at = k + 1;
    while (MODIFIERS.has(tokens[at]?.text ?? "")) at++;
    const into = token.text === "DELETE" ? "FROM" : "INTO";
    if (tokens[at]?.text !== into) {
      return `${
        token.text === "DELETE" ? "deletes" : "inserts"
      } in a form dbport does not read`;
    }
    const target = nameAt(tokens, at + 1, body, schema);
    if (target === null) return "writes a table dbport cannot name";
    if (token.text === "DELETE") {
      // `DELETE FROM a, b USING ...`: several tables at once.
      const next = tokens[target.next]?.text;
      if (next === "," || next === "USING" || next === "JOIN") {
        return "deletes from several tables at once";
      }
      writes.deletes.push(target.table);
    } else writes.inserts.push(target.table);
    k = target.next - 1;
  }
  return writes;
}

/** The table named at `tokens[at]` (`name` or `schema.name`), and after. */
function nameAt(
  tokens: Token[],
  at: number,
  text: string,
  schema: string | null,
): { table: QualifiedName; next: number } | null {
  const part = (token: Token | undefined) =>
    token === undefined
      ? null
      : token.kind === "word"
      ? text.slice(token.start, token.end)
      : token.kind === "quoted"
      ? token.text.slice(1, -1).replaceAll(
        token.text[0]! === "[" ? "]]" : token.text[0]!.repeat(2),
        token.text[0]! === "[" ? "]" : token.text[0]!,
      )
      : null;
  const first = part(tokens[at]);
  if (first === null) return null;
  if (tokens[at + 1]?.text !== ".") {
    return { table: { schema, name: first }, next: at + 1 };
  }
  const second = part(tokens[at + 2]);
  if (second === null) return null;
  return { table: { schema: first, name: second }, next: at + 3 };
}

/**
 * The columns an UPDATE (or an upsert's DO UPDATE / ON DUPLICATE KEY
 * UPDATE) sets, read from its words; null when it cannot tell.
 */
export function setColumns(text: string, dialect: Dialect): string[] | null {
  const tokens = tokenize(text, dialect);
  // The statement's own UPDATE (or ON DUPLICATE KEY UPDATE): at the top
  // level, never a locking `FOR UPDATE` (outsider stop 62: a subquery's
  // FOR UPDATE hid the SET of a key).
  let level = 0;
  let at = -1;
  tokens.forEach((token, i) => {
    if (token.text === "(") level++;
    else if (token.text === ")") level--;
    else if (
      level === 0 && token.kind === "word" && token.text === "UPDATE" &&
      !(tokens[i - 1]?.kind === "word" && tokens[i - 1]!.text === "FOR")
    ) at = i;
  });
  const set = at < 0
    ? -1
    : tokens.findIndex((token, i) =>
      i > at && token.kind === "word" && token.text === "SET"
    );
  // MariaDB's ON DUPLICATE KEY UPDATE has no SET.
  const start = set >= 0 ? set : dialect === "mysql" ? at : -1;
  if (start < 0) return null;
  const columns: string[] = [];
  let depth = 0;
  for (let j = start + 1; j < tokens.length; j++) {
    const token = tokens[j]!;
    if (token.text === "(") depth++;
    else if (token.text === ")") depth--;
    if (
      depth === 0 && token.kind === "word" &&
      ["WHERE", "ORDER", "LIMIT", "RETURNING", "FROM"].includes(token.text)
    ) break;
    if (depth !== 0 || tokens[j + 1]?.text !== "=") continue;
    const name = nameAt(tokens, j, text, null);
    if (name === null) return null;
    columns.push(name.table.name);
  }
  // Every UPDATE sets a column: none read is a form not understood.
  return columns.length === 0 ? null : columns;
}

/** Whether a trigger body assigns to NEW's columns (`SET NEW.c = ...`). */
export function setsNew(body: string): boolean {
  const tokens = tokenize(body, "mysql");
  // NEW however written: a word, `new` or "new" (outsider stop 63).
  const isNew = (token: Token) =>
    token.text.replace(/^[`"]|[`"]$/g, "").toUpperCase() === "NEW";
  return tokens.some((token, i) =>
    isNew(token) && tokens[i + 1]?.text === "." &&
    (tokens[i - 1]?.text === "SET" || tokens[i - 1]?.text === ",")
  );
}
