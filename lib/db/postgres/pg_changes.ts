/**
 * What a PostgreSQL write changed, read from the engine before COMMIT
 * (docs/security.md "What the hold compares"): per table, the rows the whole
 * transaction inserted, updated and deleted (`pg_stat_xact_user_tables`, so
 * data-modifying CTEs, rules, triggers and foreign-key actions count), and
 * the primary keys of the rows an UPDATE or DELETE changed (the statement
 * made a data-modifying CTE that returns them). Which rows a statement
 * chooses may depend on the moment or on chance; the parse tree says so.
 *
 * @module
 */

import { parseSync } from "libpg-query";
import { loadPgParser } from "./pg_parse.ts";
import { thrown } from "../../base/thrown.ts";
import {
  OWN_RETURNING,
  UPSERT_UNKEYED,
  VARYING_KEY,
} from "../tracked_write.ts";
import {
  type Changes,
  KEY_LIMIT,
  type QueryResult,
  type TableChange,
} from "../types.ts";

type Node = Record<string, unknown>;

function isNode(value: unknown): value is Node {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** What the tree says of one write, for tracking it. */
export interface PgWriteShape {
  /** The statement made to return its changed rows, when it can be. */
  wrappable: boolean;
  /** An INSERT, UPDATE, DELETE or MERGE at the top. */
  write: boolean;
  /** UPDATE/DELETE: its target (as the parser names it) and the alias rows are named by. */
  keyed: { schema: string | null; name: string; ref: string } | null;
  /** Why keys are not bound, when `keyed` is null. */
  unbound: string | null;
  /** Why the row choice may differ from run to run, or null. */
  choice: string | null;
  /** UPDATE: the columns it sets when its new values vary from run to run. */
  varyingSet: string[];
}

const NOT_A_WRITE: PgWriteShape = {
  varyingSet: [],
  wrappable: false,
  write: false,
  keyed: null,
  unbound: null,
  choice: null,
};

/** Read the shape of `sql`'s one statement (none: not a plain write). */
export async function pgWriteShape(sql: string): Promise<PgWriteShape> {
  await loadPgParser();
  let tree: unknown;
  try {
    tree = parseSync(sql);
  } catch {
    return NOT_A_WRITE;
  }
  const stmts = isNode(tree) && Array.isArray(tree.stmts) ? tree.stmts : [];
  const only = stmts.length === 1 && isNode(stmts[0]) ? stmts[0].stmt : null;
  if (!isNode(only)) return NOT_A_WRITE;
  const [kind = "", value] = Object.entries(only)[0] ?? [];
  if (!isNode(value)) return NOT_A_WRITE;
  const choice = rowChoice(kind, value);
  if (!["InsertStmt", "UpdateStmt", "DeleteStmt"].includes(kind)) {
    return {
      ...NOT_A_WRITE,
      write: kind === "MergeStmt",
      choice,
      unbound: kind === "MergeStmt"
        ? "MERGE returns no rows here, so only its counts are bound"
        : null,
    };
  }
  const returning = value.returningList ?? value.returningClause;
  const modifyingCte = hasModifyingCte(value);
  const wrappable = returning === undefined && !modifyingCte;
  if (kind === "InsertStmt") {
    const conflict = isNode(value.onConflictClause)
      ? value.onConflictClause
      : {};
    return {
      ...NOT_A_WRITE,
      wrappable,
      write: true,
      keyed: null,
      choice,
      unbound: conflict.action === "ONCONFLICT_UPDATE" ? UPSERT_UNKEYED : null,
    };
  }
  if (!wrappable) {
    return {
      ...NOT_A_WRITE,
      wrappable,
      write: true,
      keyed: null,
      choice,
      unbound: modifyingCte
        ? "a statement with data-modifying WITH returns no keys, so only its counts are bound"
        : OWN_RETURNING,
    };
  }
  const relation = isNode(value.relation) ? value.relation : {};
  const alias = isNode(relation.alias) ? relation.alias.aliasname : undefined;
  const name = String(relation.relname ?? "");
  return {
    wrappable,
    write: true,
    varyingSet: kind === "UpdateStmt" ? varyingSet(value.targetList) : [],
    keyed: {
      schema: typeof relation.schemaname === "string"
        ? relation.schemaname
        : null,
      name,
      ref: quoteIdent(typeof alias === "string" ? alias : name),
    },
    unbound: null,
    choice,
  };
}

/** The columns an UPDATE's SET list assigns, when a new value varies. */
function varyingSet(targets: unknown): string[] {
  if (rowChoice("", { targets }) === null || !Array.isArray(targets)) return [];
  return targets.map((entry) =>
    isNode(entry) && isNode(entry.ResTarget) ? String(entry.ResTarget.name) : ""
  );
}

function hasModifyingCte(statement: Node): boolean {
  const withClause = isNode(statement.withClause) ? statement.withClause : {};
  const ctes = Array.isArray(withClause.ctes) ? withClause.ctes : [];
  return ctes.some((entry) => {
    const cte = isNode(entry) ? entry.CommonTableExpr : null;
    const query = isNode(cte) ? cte.ctequery : null;
    return isNode(query) && !("SelectStmt" in query);
  });
}

/** Functions whose result differs from call to call or moment to moment. */
const CHANCE = new Set([
  "random",
  "random_normal",
  "gen_random_uuid",
  "uuid_generate_v1",
  "uuid_generate_v1mc",
  "uuid_generate_v4",
  "now",
  "clock_timestamp",
  "statement_timestamp",
  "transaction_timestamp",
  "timeofday",
]);

/**
 * Why the statement's choice of rows may differ between the preview and the
 * approved run: chance or the clock anywhere but an UPDATE's new values or an
 * INSERT's VALUES, TABLESAMPLE, LIMIT/FETCH without ORDER BY.
 */
function rowChoice(kind: string, statement: Node): string | null {
  const found = new Set<string>();
  const skip = new Set<unknown>();
  if (kind === "UpdateStmt") skip.add(statement.targetList);
  if (kind === "InsertStmt" && isNode(statement.selectStmt)) {
    const select = statement.selectStmt.SelectStmt;
    if (isNode(select)) skip.add(select.valuesLists);
  }
  const visit = (value: unknown): void => {
    if (skip.has(value)) return;
    if (Array.isArray(value)) {
      for (const item of value) visit(item);
      return;
    }
    if (!isNode(value)) return;
    const call = value.FuncCall;
    if (isNode(call) && Array.isArray(call.funcname)) {
      const last = call.funcname.at(-1);
      const name = isNode(last) && isNode(last.String)
        ? String(last.String.sval ?? "")
        : "";
      if (CHANCE.has(name)) found.add(`${name}()`);
    }
    const clock = value.SQLValueFunction;
    if (isNode(clock) && /TIME|DATE/.test(String(clock.op ?? ""))) {
      found.add(
        String(clock.op).replace(/^SVFOP_/, "").toLowerCase(),
      );
    }
    if (isNode(value.RangeTableSample)) found.add("TABLESAMPLE");
    const select = value.SelectStmt;
    if (
      isNode(select) && select.limitCount !== undefined &&
      select.sortClause === undefined
    ) {
      found.add("LIMIT without ORDER BY");
    }
    for (const item of Object.values(value)) visit(item);
  };
  visit(statement);
  return found.size === 0
    ? null
    : `which rows it changes may differ from run to run (${
      [...found].join(", ")
    })`;
}

function quoteIdent(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}

/** The table's name for PG_COUNTS_AND_KEY's $1. */
export function regclassName(
  keyed: { schema: string | null; name: string },
): string {
  return (keyed.schema === null ? "" : `${quoteIdent(keyed.schema)}.`) +
    quoteIdent(keyed.name);
}

/**
 * The transaction's pending table counts: each table, schema-qualified
 * outside the current schema, with its rows inserted, updated (HOT updates
 * are among them) and deleted. A session's counts of earlier transactions
 * linger until they are flushed, so a write's own are the difference of two
 * snapshots, one after BEGIN and one before COMMIT.
 */
export const PG_TABLE_COUNTS = `SELECT 'n' AS kind,
  CASE WHEN schemaname OPERATOR(pg_catalog.=) pg_catalog.current_schema()
       THEN pg_catalog.quote_ident(relname)
       ELSE pg_catalog.concat(pg_catalog.quote_ident(schemaname), '.',
         pg_catalog.quote_ident(relname)) END AS name,
  n_tup_ins OPERATOR(pg_catalog.+) n_tup_upd OPERATOR(pg_catalog.+) n_tup_del
    AS n
  FROM pg_catalog.pg_stat_xact_user_tables
 WHERE n_tup_ins OPERATOR(pg_catalog.+) n_tup_upd OPERATOR(pg_catalog.+)
       n_tup_del OPERATOR(pg_catalog.>) 0`;

/**
 * PG_TABLE_COUNTS, then (kind `k`) the primary key columns of the table
 * named by $1 (null: none), in key order. Every name is qualified: a
 * statement run before it in the transaction may have set a search_path
 * that puts a view or function of the same name first.
 */
export const PG_COUNTS_AND_KEY = `${PG_TABLE_COUNTS}
UNION ALL
SELECT 'k', name, n FROM (
  SELECT a.attname::pg_catalog.text AS name,
         pg_catalog.array_position(i.indkey::pg_catalog.int2[], a.attnum)
           ::pg_catalog.int8 AS n
    FROM pg_catalog.pg_index i
    JOIN pg_catalog.pg_attribute a
      ON a.attrelid OPERATOR(pg_catalog.=) i.indrelid
     AND a.attnum OPERATOR(pg_catalog.=) ANY (i.indkey)
   WHERE $1::pg_catalog.text IS NOT NULL
     AND i.indrelid OPERATOR(pg_catalog.=) pg_catalog.to_regclass($1::pg_catalog.text)
     AND i.indisprimary
  ) k`;

/** The per-table changes between two PG_TABLE_COUNTS snapshots. */
export function tableChanges(
  before: Map<string, number>,
  after: Map<string, number>,
): TableChange[] {
  const changed: TableChange[] = [];
  for (const [table, rows] of after) {
    const delta = rows - (before.get(table) ?? 0);
    if (delta > 0) changed.push({ table, rows: delta });
  }
  return changed.sort((a, b) => a.table < b.table ? -1 : 1);
}

/**
 * The statement as a data-modifying CTE that answers its row count, the
 * digest of its changed rows' keys (none past KEY_LIMIT) and `sample` of its
 * changed rows: columns `dbport_rows`, `dbport_keys`, then the rows' own
 * (and `dbport_key`, dropped by {@linkcode fromWrapped}).
 */
export function wrapped(
  text: string,
  keyColumns: string[],
  ref: string | null,
  sample: number,
): string {
  const key = keyColumns.length === 0 || ref === null
    ? "NULL::text"
    : `ROW(${
      keyColumns.map((c) => `${ref}.${quoteIdent(c)}`).join(", ")
    })::text`;
  // One row even when nothing changed or no sample is asked for: the count.
  // No sample: only the key is kept (an UPDATE of millions holds no rows).
  return `WITH dbport_changed AS (${text}
RETURNING ${sample > 0 ? "*, " : ""}${key} AS dbport_key)
SELECT k.dbport_rows, k.dbport_keys, s.*
  FROM (SELECT (SELECT count(*) FROM dbport_changed) AS dbport_rows,
    (SELECT CASE WHEN count(*) <= ${KEY_LIMIT} AND count(k) = count(*)
      THEN encode(sha256(convert_to(string_agg(k, E'\\n' ORDER BY k), 'UTF8')), 'hex') END
       FROM (SELECT dbport_key AS k FROM dbport_changed LIMIT ${
    KEY_LIMIT + 1
  }) l) AS dbport_keys) k
  LEFT JOIN (SELECT * FROM dbport_changed LIMIT ${sample}) s ON true`;
}

/** What {@linkcode wrapped} answered: the count, the key digest, the rows. */
export function fromWrapped(
  columns: string[],
  rows: unknown[][],
): {
  rows: number;
  keys: string | null;
  columns: string[];
  sample: unknown[][];
} {
  const first = rows[0];
  const count = Number(first?.[0] ?? 0);
  return {
    rows: count,
    keys: count === 0 ? null : (first?.[1] as string | null) ?? null,
    columns: columns.slice(2, -1),
    // Nothing changed: the one row carries the count alone.
    sample: count === 0 ? [] : rows.map((row) => row.slice(2, -1)),
  };
}

/** The Changes of a tracked write, once the keys are known. */
export function pgChanges(
  shape: PgWriteShape,
  tables: TableChange[],
  keys:
    | { digest: string | null; columns: number; rows: number; varying: boolean }
    | null,
): Changes {
  let unbound = shape.unbound;
  let digest: string | null = null;
  if (shape.keyed !== null && keys !== null) {
    if (keys.varying) {
      unbound = VARYING_KEY;
    } else if (keys.columns === 0) {
      unbound = "the table has no primary key, so only its counts are bound";
    } else if (keys.rows > KEY_LIMIT) {
      unbound = `past ${
        KEY_LIMIT.toLocaleString("en-US")
      } rows only the counts are bound`;
    } else {
      digest = keys.digest;
    }
  }
  return { tables, keys: digest, unbound, choice: shape.choice };
}

/** Run one of dbport's own queries in the write's transaction. */
export type PgExec = (
  sql: string,
  params?: unknown[],
) => Promise<Record<string, unknown>[]>;

/**
 * Run `text` in the open transaction and read what it changed: the tables'
 * counts around it and, for an UPDATE or DELETE of a table with a primary
 * key, its rows' keys. When the engine refuses the statement as a CTE (a
 * view's DO INSTEAD rule), it runs as written and only its counts are bound.
 */
export async function trackedPgWrite(
  text: string,
  track: { sampleRows: number },
  exec: PgExec,
  run: (text: string, whole?: boolean) => Promise<QueryResult>,
): Promise<QueryResult> {
  const shape = await pgWriteShape(text);
  const counts = (rows: Record<string, unknown>[]) =>
    new Map(
      rows.filter((row) => row.kind === "n").map((row) => [
        String(row.name),
        Number(row.n),
      ]),
    );
  const snapshot = async () => counts(await exec(PG_TABLE_COUNTS));
  // The counts before, and the target's key columns, in one round trip.
  const first = await exec(PG_COUNTS_AND_KEY, [
    shape.wrappable && shape.keyed !== null ? regclassName(shape.keyed) : null,
  ]);
  let before = counts(first);
  if (!shape.wrappable) {
    // A WITH … UPDATE is read whole, for its command's count.
    const result = await run(text, shape.write);
    const tables = tableChanges(before, await snapshot());
    return { ...result, changes: pgChanges(shape, tables, null) };
  }
  const keyColumns = first.filter((row) => row.kind === "k")
    .sort((a, b) => Number(a.n) - Number(b.n))
    .map((row) => String(row.name));
  let result: QueryResult;
  await exec("SAVEPOINT dbport_tracked");
  try {
    result = await run(
      wrapped(text, keyColumns, shape.keyed?.ref ?? null, track.sampleRows),
    );
  } catch (error) {
    // Only the CTE form refused (0A000 feature not supported, 42xxx):
    // anything else the statement as written would meet too.
    if (!/^(0A|42)/.test(thrown(error).code ?? "")) throw error;
    // A rolled-back attempt's rows still count in the statistics: the
    // counts start again from here.
    await exec("ROLLBACK TO SAVEPOINT dbport_tracked");
    before = await snapshot();
    const plain = await run(text, true);
    const tables = tableChanges(before, await snapshot());
    return {
      ...plain,
      changes: {
        ...pgChanges({ ...shape, keyed: null }, tables, null),
        ...(shape.keyed === null ? {} : {
          unbound:
            "the statement returns no keys here, so only its counts are bound",
        }),
      },
    };
  }
  const tables = tableChanges(before, await snapshot());
  const read = fromWrapped(result.columns, result.rows);
  return {
    ...result,
    rowsAffected: read.rows,
    columns: track.sampleRows === 0 ? [] : read.columns,
    rows: read.sample as QueryResult["rows"],
    changes: pgChanges(shape, tables, {
      digest: read.keys,
      columns: keyColumns.length,
      rows: read.rows,
      varying: keyColumns.some((column) => shape.varyingSet.includes(column)),
    }),
  };
}
