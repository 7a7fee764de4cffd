/**
 * Which tables a PostgreSQL write changed every row of (every_row.ts), from
 * the engine's own counts: `pg_stat_xact_user_tables` before and after the
 * statement (so rows a function, trigger, rule, data-modifying CTE, MERGE or
 * upsert changed count on their own tables), each table judged on its own
 * and with the tables under it (a partition emptied; an inheritance parent
 * whose rows its children hold), each counted after the write only as far
 * as the judgment needs.
 *
 * @module
 */

import {
  judgeTouch,
  mayCoverTable,
  rowsToCount,
  type Touch,
} from "../every_row.ts";
import type { EveryRow } from "../types.ts";
import type { PgExec } from "./pg_changes.ts";
import { parsePostgres } from "./pg_parse.ts";

/**
 * The transaction's rows inserted, updated and deleted so far, per table. A
 * session's counts of earlier transactions linger until flushed: a write's
 * own are a difference. Every name is qualified: the statement before it
 * may have set a search_path that puts a view or function of the same name
 * first.
 */
export const PG_TOUCHES = `SELECT s.relid::pg_catalog.int8 AS rel,
  s.n_tup_ins AS ins, s.n_tup_upd AS upd, s.n_tup_del AS del
  FROM pg_catalog.pg_stat_xact_user_tables s
 WHERE s.n_tup_ins OPERATOR(pg_catalog.+) s.n_tup_upd
       OPERATOR(pg_catalog.+) s.n_tup_del OPERATOR(pg_catalog.>) 0`;

/**
 * Each table of $1 with itself and every table it inherits from or is a
 * partition of (each level is judged: a partition emptied, a parent whose
 * rows its children hold), named schema-qualified and quoted.
 */
const PG_LEVELS = `WITH RECURSIVE up(rel, anc) AS (
  SELECT r, r FROM pg_catalog.unnest($1::pg_catalog.oid[]) r
  UNION
  SELECT up.rel, i.inhparent FROM up JOIN pg_catalog.pg_inherits i
    ON i.inhrelid OPERATOR(pg_catalog.=) up.anc)
SELECT up.rel::pg_catalog.int8 AS rel, up.anc::pg_catalog.int8 AS anc,
  pg_catalog.format('%I.%I', n.nspname, c.relname) AS name
  FROM up JOIN pg_catalog.pg_class c ON c.oid OPERATOR(pg_catalog.=) up.anc
  JOIN pg_catalog.pg_namespace n
    ON n.oid OPERATOR(pg_catalog.=) c.relnamespace`;

/**
 * The tables this session holds an ACCESS EXCLUSIVE lock on: what DROP,
 * TRUNCATE, ALTER TABLE or CREATE took, which no row count shows (a
 * function's `TRUNCATE` counts no deleted rows). A dropped table has no
 * name any more.
 */
const PG_EXCLUSIVE = `SELECT l.relation::pg_catalog.int8 AS oid,
  (SELECT pg_catalog.format('%I.%I', n.nspname, c.relname)
     FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n
       ON n.oid OPERATOR(pg_catalog.=) c.relnamespace
    WHERE c.oid OPERATOR(pg_catalog.=) l.relation) AS name,
  (SELECT c.relkind::pg_catalog.text FROM pg_catalog.pg_class c
    WHERE c.oid OPERATOR(pg_catalog.=) l.relation) AS kind
  FROM pg_catalog.pg_locks l
 WHERE l.pid OPERATOR(pg_catalog.=) pg_catalog.pg_backend_pid()
   AND l.locktype OPERATOR(pg_catalog.=) 'relation'
   AND l.mode OPERATOR(pg_catalog.=) 'AccessExclusiveLock'
   AND l.database OPERATOR(pg_catalog.=) (SELECT d.oid
     FROM pg_catalog.pg_database d
    WHERE d.datname OPERATOR(pg_catalog.=) pg_catalog.current_database())`;

/**
 * Tables the code a DML statement ran dropped, truncated or altered (it
 * holds their ACCESS EXCLUSIVE lock): `unjudged`, as the rows they lost are
 * not counted. Indexes, sequences and views are not tables.
 */
export async function pgExclusive(exec: PgExec): Promise<EveryRow[]> {
  const found: EveryRow[] = [];
  for (const row of await exec(PG_EXCLUSIVE)) {
    const kind = row.kind === null ? null : String(row.kind);
    if (kind !== null && kind !== "r" && kind !== "p") continue;
    found.push({
      table: null,
      rows: null,
      how: "unjudged",
      why: kind === null
        ? `code it runs dropped a table (oid ${row.oid})`
        : `code it runs dropped, truncated or altered ${row.name} (it holds the table's exclusive lock)`,
    });
  }
  return found;
}

/** Counts by table oid. */
export type PgTouches = Map<string, { ins: number; upd: number; del: number }>;

/**
 * The transaction's counts now ({@linkcode PG_TOUCHES}). Before a write,
 * run in REPEATABLE READ (postgres.ts), this query takes the transaction's
 * snapshot, so the statement and the counts after it see the same rows,
 * and a row another session commits meanwhile is not a row the write kept
 * (outsider stop 59: `delete from t where id > 0 and pg_sleep(0.4) is not
 * null`, with `insert into t values (100)` committed meanwhile, deleted
 * every row t had unasked; a filter on `xmin` tried first took another
 * session's subtransaction for a row committed before, outsider stop 61).
 */
export async function pgTouches(exec: PgExec): Promise<PgTouches> {
  const touches: PgTouches = new Map();
  for (const row of await exec(PG_TOUCHES)) {
    touches.set(String(row.rel), {
      ins: Number(row.ins),
      upd: Number(row.upd),
      del: Number(row.del),
    });
  }
  return touches;
}

/**
 * The tables the statement run since `before` changed every row of. A
 * count the login may not read (a table it may only write) leaves its
 * table `unjudged`: the write may have.
 */
export async function pgEveryRow(
  exec: PgExec,
  before: PgTouches,
  plain: boolean,
): Promise<EveryRow[]> {
  // DDL takes its own table's exclusive lock; DML takes none but through
  // code it runs.
  const exclusive = plain ? await pgExclusive(exec) : [];
  return [...exclusive, ...await counted(exec, before)];
}

/**
 * Whether `text` is one plain SELECT, INSERT, UPDATE, DELETE, MERGE or
 * CALL: it takes no ACCESS EXCLUSIVE lock of its own.
 */
export async function plainDml(text: string): Promise<boolean> {
  const parsed = await parsePostgres(text);
  const kind = parsed.ok ? parsed.analysis?.kinds[0] : undefined;
  return kind !== undefined && DML.has(kind);
}

const DML = new Set([
  "SelectStmt",
  "InsertStmt",
  "UpdateStmt",
  "DeleteStmt",
  "MergeStmt",
  "CallStmt",
]);

/** The tables the rows counted since `before` say were changed whole. */
async function counted(
  exec: PgExec,
  before: PgTouches,
): Promise<EveryRow[]> {
  // A function may turn the counts off for the transaction (outsider stop
  // 61: `set_config('track_counts', 'off', true)`, as a superuser login).
  const [setting] = await exec(
    "SELECT pg_catalog.current_setting('track_counts') AS on",
  );
  if (setting?.on !== "on") {
    return [{
      table: null,
      rows: null,
      how: "unjudged",
      why: "the engine's row counts were turned off (track_counts) as it ran",
    }];
  }
  const after = await pgTouches(exec);
  const deltas = new Map<string, Omit<Touch, "table">>();
  for (const [rel, now] of after) {
    const was = before.get(rel) ?? { ins: 0, upd: 0, del: 0 };
    deltas.set(rel, {
      inserted: now.ins - was.ins,
      updated: now.upd - was.upd,
      deleted: now.del - was.del,
    });
  }
  if (![...deltas.values()].some((d) => d.updated + d.deleted > 0)) return [];
  // Each level sums the counts of the tables under it.
  const levels = new Map<string, Touch>();
  for (const row of await exec(PG_LEVELS, [[...deltas.keys()]])) {
    const delta = deltas.get(String(row.rel))!;
    const level = levels.get(String(row.anc)) ??
      { table: String(row.name), inserted: 0, updated: 0, deleted: 0 };
    level.inserted += delta.inserted;
    level.updated += delta.updated;
    level.deleted += delta.deleted;
    levels.set(String(row.anc), level);
  }
  const tables = [...levels.values()].filter(mayCoverTable);
  if (tables.length === 0) return [];
  // A table counted with the tables under it, as far as needed, in the
  // write's own snapshot.
  const counts = tables.map((touch, i) =>
    `(SELECT pg_catalog.count(*) FROM (SELECT 1 FROM ${touch.table} LIMIT ${
      rowsToCount(touch)
    }) s${i})::pg_catalog.int8 AS c${i}`
  );
  await exec("SAVEPOINT dbport_every_row");
  let row: Record<string, unknown>;
  try {
    row = (await exec(`SELECT ${counts.join(",\n")}`))[0] ?? {};
  } catch {
    await exec("ROLLBACK TO SAVEPOINT dbport_every_row");
    return tables.map((touch) => ({
      table: null,
      rows: null,
      how: "unjudged",
      why: `the rows of ${touch.table} could not be counted as the saved login`,
    }));
  }
  await exec("RELEASE SAVEPOINT dbport_every_row");
  const found: EveryRow[] = [];
  tables.forEach((touch, i) => {
    const judged = judgeTouch(touch, Number(row[`c${i}`]));
    if (judged !== null) found.push(judged);
  });
  return found;
}
