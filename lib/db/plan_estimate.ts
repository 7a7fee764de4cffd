/**
 * What a read's plan estimates, on each engine, for the plan guard
 * (features/tools/plan_guard.ts; docs/security.md "Reads refused by their
 * plan"): which statements are planned at all, which metadata reads pass
 * unplanned, and the estimate itself from the plan statements `run` answers.
 * The arithmetic over plans is plan_limits.ts's; this module runs them.
 *
 * @module
 */

import { DIALECTS } from "./dialect.ts";
import type { Engine } from "./engines.ts";
import { PLAN_STATEMENTS } from "./explain.ts";
import { quoteIdent } from "./sql/identifiers.ts";
import { tokenize } from "./sql/lexer.ts";
import {
  aliasPairs,
  mysqlRowEstimate,
  type PlanEstimate,
  type PlanLimits,
  sqliteScans,
  statRows,
  trailingLimit,
} from "./plan_limits.ts";

/** Runs one plan or catalog statement on the read's connection. */
export type PlanRunner = (sql: string) => Promise<{ rows: unknown[][] }>;

/** Statements a plan estimates. */
export const PLANNED = new Set(["SELECT", "WITH", "VALUES", "TABLE"]);

/** Reads of the server's own settings and catalog: nothing to estimate. */
export const METADATA = new Set(["SHOW", "DESCRIBE", "DESC", "PRAGMA"]);

/**
 * SQLite PRAGMAs that read the schema or a setting, never a table's rows:
 * the ones that pass unplanned while a limit is set, as a statement or as a
 * `pragma_…` table. Others (`integrity_check`, `quick_check`,
 * `foreign_key_check` read every row of the file) are refused then.
 */
const CATALOG_PRAGMAS = new Set([
  "application_id",
  "auto_vacuum",
  "automatic_index",
  "busy_timeout",
  "cache_size",
  "collation_list",
  "compile_options",
  "data_version",
  "database_list",
  "encoding",
  "foreign_key_list",
  "foreign_keys",
  "freelist_count",
  "function_list",
  "index_info",
  "index_list",
  "index_xinfo",
  "journal_mode",
  "module_list",
  "page_count",
  "page_size",
  "pragma_list",
  "query_only",
  "schema_version",
  "synchronous",
  "table_info",
  "table_list",
  "table_xinfo",
  "temp_store",
  "user_version",
]);

/** Words that make `DESC`/`DESCRIBE` explain a statement, not a table. */
const EXPLAINED = new Set([
  "SELECT",
  "WITH",
  "VALUES",
  "TABLE",
  "ANALYZE",
  "FORMAT",
  "EXTENDED",
  "PARTITIONS",
  "INSERT",
  "UPDATE",
  "DELETE",
  "REPLACE",
  "FOR",
]);

/**
 * Why a metadata read may not pass unplanned while a limit is set, or null:
 * `DESC`/`DESCRIBE` followed by a statement explains it (and MySQL 8's
 * `DESCRIBE ANALYZE SELECT …` runs it); a SQLite PRAGMA off
 * {@linkcode CATALOG_PRAGMAS} may read every row.
 */
export function metadataRefusal(text: string, engine: Engine): string | null {
  const tokens = tokenize(text, engine).filter((token) =>
    token.kind !== "semicolon"
  );
  const [first, second] = tokens;
  const keyword = first?.text ?? "";
  if (keyword === "DESC" || keyword === "DESCRIBE") {
    const table = tokens.length > 1 && tokens.slice(1).every((token) =>
      token.kind === "word" || token.kind === "quoted" ||
      token.kind === "string" || (token.kind === "punct" && token.text === ".")
    ) && !(second?.kind === "word" && EXPLAINED.has(second.text));
    return table ? null : `${keyword} of anything but a table`;
  }
  if (keyword === "PRAGMA") {
    // PRAGMA [schema.]name[(arg) | = arg]
    const name = tokens[2]?.kind === "punct" && tokens[2].text === "."
      ? tokens[3]
      : second;
    const pragma = name === undefined
      ? ""
      : text.slice(name.start, name.end).replace(/^["`[]|["`\]]$/g, "")
        .toLowerCase();
    return CATALOG_PRAGMAS.has(pragma)
      ? null
      : `PRAGMA ${pragma}, which may read every row`;
  }
  return null;
}

/** A `pragma_…` table a SQLite read names that may read every row, or null. */
function rowReadingPragma(text: string): string | null {
  for (const token of tokenize(text, "sqlite")) {
    if (token.kind !== "word" && token.kind !== "quoted") continue;
    const name = text.slice(token.start, token.end)
      .replace(/^["`[]|["`\]]$/g, "").toLowerCase();
    if (
      name.startsWith("pragma_") && !CATALOG_PRAGMAS.has(name.slice(7))
    ) return name;
  }
  return null;
}

/**
 * The estimate of a read (already classified, vetted and one of
 * {@linkcode PLANNED}) from its plan: PostgreSQL's top node, MySQL/MariaDB's
 * rows examined, SQLite's largest table read whole; on the engines whose
 * plans do not count a `LIMIT`, a literal one ending the read caps it.
 */
export async function estimateRead(
  engine: Engine,
  run: PlanRunner,
  text: string,
  limits: PlanLimits,
): Promise<PlanEstimate> {
  let estimate: PlanEstimate;
  if (engine === "sqlite") {
    estimate = await sqliteEstimate(run, text, limits);
  } else {
    const planText = PLAN_STATEMENTS[engine](text, {
      analyze: false,
      mariadb: false,
    });
    const plan = DIALECTS[engine].planOf((await run(planText)).rows as never);
    const summary = DIALECTS[engine].summarize(plan);
    if (engine === "postgres") {
      estimate = {
        rows: summary.estimatedRows,
        cost: summary.estimatedCost,
        how: `the plan's top node, ${summary.topNode ?? "?"}`,
      };
    } else {
      const examined = mysqlRowEstimate(plan);
      estimate = {
        rows: examined.rows,
        cost: summary.estimatedCost,
        how: examined.fullScans.length > 0
          ? `rows examined, reading ${examined.fullScans.join(", ")} whole`
          : "rows examined",
      };
    }
  }
  if (engine !== "postgres") {
    // These plans do not count a LIMIT: a literal one ending the read caps it.
    const cap = trailingLimit(text, engine);
    if (cap !== null && estimate.rows !== null && cap < estimate.rows) {
      estimate = { ...estimate, rows: cap, atLeast: false, how: "its LIMIT" };
    }
  }
  return estimate;
}

/**
 * SQLite: the largest table its plan reads whole (`SCAN`; an alias traced
 * to its table through the statement's and its views' text), sized by
 * `sqlite_stat1` (ANALYZE's count), else counted up to one row past the
 * limit (so counting a huge table stops early).
 */
async function sqliteEstimate(
  run: (sql: string) => Promise<{ rows: unknown[][] }>,
  text: string,
  limits: PlanLimits,
): Promise<PlanEstimate> {
  const pragma = rowReadingPragma(text);
  if (pragma !== null) {
    return {
      rows: null,
      cost: null,
      how: pragma,
      unsized: `${pragma}, which may read every row of the file`,
    };
  }
  const lines = DIALECTS.sqlite.planOf(
    (await run(
      PLAN_STATEMENTS.sqlite(text, { analyze: false, mariadb: false }),
    ))
      .rows as never,
  ) as string[];
  if (lines.some((line) => line.trim() === "RECURSIVE STEP")) {
    // Unsure is refused: a recursive CTE makes rows from nothing the plan
    // sizes (`WITH RECURSIVE r … n < 100000000`), read by no table scan.
    return {
      rows: null,
      cost: null,
      how: "a recursive CTE",
      unsized: "a recursive CTE, whose rows SQLite's plan does not size",
    };
  }
  let largest: PlanEstimate = {
    rows: 0,
    cost: null,
    how: "no table read whole",
  };
  if (!lines.some((line) => /^\s*(SCAN|SEARCH) /.test(line))) return largest;
  const tables = (await run(
    "SELECT schema, name FROM pragma_table_list WHERE type IN ('table', 'shadow')",
  )).rows.map(([schema, name]) => ({
    schema: String(schema),
    name: String(name),
  }));
  const views = await run("SELECT sql FROM sqlite_schema WHERE type = 'view'");
  const aliases = aliasPairs(
    [text, ...views.rows.map((row) => String(row[0] ?? ""))].join(";\n"),
    "sqlite",
  );
  // Every name a plan line may print: a table, schema.table, or an alias.
  const candidates = new Set(aliases.keys());
  for (const table of tables) {
    candidates.add(table.name.toLowerCase());
    candidates.add(`${table.schema}.${table.name}`.toLowerCase());
  }
  const scanned = sqliteScans(lines, candidates);
  const cap = limits.maxEstimatedRows ?? Number.MAX_SAFE_INTEGER;
  const sized = new Set<string>();
  for (const name of scanned) {
    const names = new Set([name, ...(aliases.get(name) ?? [])]);
    for (const table of tables) {
      const key = `${table.schema}.${table.name}`;
      if (
        sized.has(key) ||
        !(names.has(table.name.toLowerCase()) || names.has(key.toLowerCase()))
      ) continue;
      sized.add(key);
      const size = await sqliteTableRows(run, table.schema, table.name, cap);
      if (size.rows > (largest.rows ?? 0)) {
        largest = { ...size, cost: null };
      }
    }
  }
  return largest;
}

/** One table's rows: `sqlite_stat1`'s, else counted up to `cap + 1`. */
async function sqliteTableRows(
  run: (sql: string) => Promise<{ rows: unknown[][] }>,
  schema: string,
  table: string,
  cap: number,
): Promise<{ rows: number; how: string; atLeast: boolean }> {
  const database = quoteIdent(schema, "sqlite");
  const catalog = schema === "temp"
    ? "sqlite_temp_schema"
    : `${database}.sqlite_schema`;
  const hasStat = await run(
    `SELECT 1 FROM ${catalog} WHERE name = 'sqlite_stat1'`,
  );
  if (hasStat.rows.length > 0) {
    // Every row of the table: a partial index's row counts only the rows
    // it indexes, so the largest first number is the table's.
    const stat = await run(
      `SELECT stat FROM ${database}.sqlite_stat1 WHERE tbl = '${
        table.replaceAll("'", "''")
      }'`,
    );
    const counts = stat.rows.map((row) => statRows(row[0] as never))
      .filter((rows) => rows !== null);
    const rows = counts.length === 0 ? null : Math.max(...counts);
    if (rows !== null) {
      return {
        rows,
        how: `the whole table ${table}, from sqlite_stat1`,
        atLeast: false,
      };
    }
  }
  const counted = await run(
    `SELECT count(*) FROM (SELECT 1 FROM ${database}.${
      quoteIdent(table, "sqlite")
    } LIMIT ${cap + 1})`,
  );
  const rows = Number(counted.rows[0]?.[0] ?? 0);
  const atLeast = rows > cap;
  return {
    rows,
    how: `the whole table ${table}, counted${
      atLeast ? " up to the limit" : ""
    }`,
    atLeast,
  };
}
