/**
 * Query plans: the statement that asks each engine for one, and a summary a
 * model can act on — the top node's estimated (and, analyzed, actual) rows
 * and cost, and every full scan of a table. Pure: no driver here.
 *
 * @module
 */

import type { Cell } from "./types.ts";
import type { Engine } from "./engines.ts";

/** How a plan is asked for. */
export interface PlanRequest {
  /** Run the statement too (reads only: the caller checks). */
  analyze: boolean;
  /** A MySQL-protocol server is MariaDB (its ANALYZE FORMAT=JSON). */
  mariadb: boolean;
}

/** What a plan says, for a model. */
export interface PlanSummary {
  /** The top node: the plan's root operation, in the engine's words. */
  topNode: string | null;
  estimatedRows: number | null;
  estimatedCost: number | null;
  /** With analyze. */
  actualRows: number | null;
  actualTimeMs: number | null;
  /** Tables read whole, with the rows the planner expects there. */
  fullScans: { table: string; estimatedRows: number | null }[];
}

/** The plan statement for `text` (one statement, already checked). */
export const PLAN_STATEMENTS: {
  readonly [E in Engine]: (text: string, request: PlanRequest) => string;
} = {
  postgres: (text, { analyze }) =>
    `EXPLAIN (FORMAT JSON${analyze ? ", ANALYZE, BUFFERS" : ""}) ${text}`,
  mysql: (text, { analyze, mariadb }) =>
    analyze
      ? mariadb ? `ANALYZE FORMAT=JSON ${text}` : `EXPLAIN ANALYZE ${text}`
      : `EXPLAIN FORMAT=JSON ${text}`,
  // SQLite has no analyzing EXPLAIN: the caller counts the rows itself.
  sqlite: (text) => `EXPLAIN QUERY PLAN ${text}`,
};

/** The plan as the engine gave it: JSON, or lines of text. */
export type Plan = Cell;

/** An empty summary, to be filled as far as the plan's shape is known. */
export function emptySummary(): PlanSummary {
  return {
    topNode: null,
    estimatedRows: null,
    estimatedCost: null,
    actualRows: null,
    actualTimeMs: null,
    fullScans: [],
  };
}

/**
 * A plan returned as one JSON document (PostgreSQL, MySQL), or one text
 * (MySQL's EXPLAIN ANALYZE tree).
 */
export function documentPlan(rows: readonly Cell[][]): Plan {
  const first = rows[0]?.[0] ?? null;
  if (typeof first === "string") {
    try {
      return JSON.parse(first);
    } catch {
      return first;
    }
  }
  return first;
}

/** SQLite's `EXPLAIN QUERY PLAN` rows (id, parent, …, detail) as indented lines. */
export function sqlitePlan(rows: readonly Cell[][]): Plan {
  const depth = new Map<number, number>();
  return rows.map((row) => {
    const id = Number(row[0]);
    const level = (depth.get(Number(row[1])) ?? -1) + 1;
    depth.set(id, level);
    return `${"  ".repeat(level)}${String(row[3] ?? "")}`;
  });
}

/** A JSON plan's node: an object of cells. */
export type Node = { readonly [key: string]: Cell };

/** Whether a plan cell is a node (an object, not a list). */
export function isNode(value: Cell | undefined): value is Node {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

/** A plan cell read as a finite number (JSON plans give some as text). */
export function numberOf(value: Cell | undefined): number | null {
  const number = typeof value === "string" ? Number(value) : value;
  return typeof number === "number" && Number.isFinite(number) ? number : null;
}

export function postgresSummary(plan: Plan, summary: PlanSummary): void {
  const document = Array.isArray(plan) ? plan[0] : plan;
  if (!isNode(document) || !isNode(document.Plan)) return;
  const top = document.Plan;
  summary.topNode = typeof top["Node Type"] === "string"
    ? top["Node Type"]
    : null;
  summary.estimatedRows = numberOf(top["Plan Rows"]);
  summary.estimatedCost = numberOf(top["Total Cost"]);
  const actual = numberOf(top["Actual Rows"]);
  if (actual !== null) {
    summary.actualRows = actual * (numberOf(top["Actual Loops"]) ?? 1);
  }
  summary.actualTimeMs = numberOf(document["Execution Time"]);
  const walk = (node: Node) => {
    if (node["Node Type"] === "Seq Scan") {
      const schema = typeof node.Schema === "string" ? `${node.Schema}.` : "";
      summary.fullScans.push({
        table: `${schema}${String(node["Relation Name"] ?? "?")}`,
        estimatedRows: numberOf(node["Plan Rows"]),
      });
    }
    const children = node.Plans;
    if (Array.isArray(children)) {
      for (const child of children) if (isNode(child)) walk(child);
    }
  };
  walk(top);
}

export function mysqlSummary(plan: Plan, summary: PlanSummary): void {
  if (typeof plan === "string") {
    mysqlTreeSummary(plan, summary);
    return;
  }
  if (!isNode(plan) || !isNode(plan.query_block)) return;
  const block = plan.query_block;
  summary.topNode = "query_block";
  const costInfo = block.cost_info;
  summary.estimatedCost = numberOf(
    isNode(costInfo) ? costInfo.query_cost : block.cost,
  );
  summary.actualTimeMs = numberOf(block.r_total_time_ms);
  const tables: Node[] = [];
  const walk = (value: Cell | undefined) => {
    if (Array.isArray(value)) {
      for (const item of value) walk(item);
      return;
    }
    if (!isNode(value)) return;
    for (const [key, child] of Object.entries(value)) {
      if (key === "table" && isNode(child) && "table_name" in child) {
        tables.push(child);
      }
      walk(child);
    }
  };
  walk(block);
  for (const table of tables) {
    if (table.access_type === "ALL") {
      summary.fullScans.push({
        table: String(table.table_name),
        estimatedRows: numberOf(table.rows ?? table.rows_examined_per_scan),
      });
    }
  }
  // The rows a single-table plan produces; a join's would be a guess.
  const only = tables.length === 1 ? tables[0] : undefined;
  if (only !== undefined) {
    const rows = numberOf(only.rows ?? only.rows_examined_per_scan);
    const filtered = numberOf(only.filtered) ?? 100;
    summary.estimatedRows = rows === null
      ? null
      : Math.round(rows * filtered / 100);
    const actual = numberOf(only.r_rows);
    const actualFiltered = numberOf(only.r_filtered) ?? 100;
    summary.actualRows = actual === null
      ? null
      : Math.round(actual * actualFiltered / 100);
  }
}

/** MySQL's EXPLAIN ANALYZE tree: `-> Node  (cost=… rows=…) (actual time=…..… rows=… loops=…)`. */
function mysqlTreeSummary(tree: string, summary: PlanSummary): void {
  const lines = tree.split("\n").filter((line) => line.includes("->"));
  const top = lines[0];
  if (top !== undefined) {
    summary.topNode = top.replace(/^\s*->\s*/, "").replace(/\s*\(.*$/, "");
    summary.estimatedCost = numberOf(/cost=([\d.e+]+)/.exec(top)?.[1] ?? null);
    summary.estimatedRows = numberOf(/ rows=([\d.e+]+)/.exec(top)?.[1] ?? null);
    const actual = /actual time=[\d.]+\.\.([\d.]+) rows=([\d.e+]+)/.exec(top);
    summary.actualTimeMs = numberOf(actual?.[1] ?? null);
    summary.actualRows = numberOf(actual?.[2] ?? null);
  }
  for (const line of lines) {
    const scan = /Table scan on (\S+)/.exec(line);
    if (scan !== null) {
      summary.fullScans.push({
        table: scan[1] ?? "?",
        estimatedRows: numberOf(/ rows=([\d.e+]+)/.exec(line)?.[1] ?? null),
      });
    }
  }
}

export function sqliteSummary(plan: Plan, summary: PlanSummary): void {
  if (!Array.isArray(plan)) return;
  const lines = plan.map((line) => String(line).trim());
  summary.topNode = lines[0] ?? null;
  for (const line of lines) {
    // "SCAN t" reads the table whole; "SCAN t USING (COVERING) INDEX i"
    // reads a whole index, "SEARCH" only a range of one.
    const scan = /^SCAN (?:TABLE )?(\S+)(?! USING)/.exec(line);
    if (scan !== null && !/ USING /.test(line)) {
      summary.fullScans.push({ table: scan[1] ?? "?", estimatedRows: null });
    }
  }
}

/** A plan as JSON text or parsed: its first document, or null. */
function firstDocument(plan: unknown): Record<string, unknown> | null {
  const text = typeof plan === "string" ? safeJson(plan) : plan;
  const first = Array.isArray(text) ? text[0] : text;
  return typeof first === "object" && first !== null
    ? first as Record<string, unknown>
    : null;
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
}

/**
 * The rows a PostgreSQL write plan expects to change: ModifyTable estimates
 * 0, so its input (the node under it) is what it changes.
 */
export function postgresWriteRows(plan: unknown): number | null {
  const node = firstDocument(plan)?.Plan;
  if (typeof node !== "object" || node === null) return null;
  const top = node as Record<string, unknown>;
  const child = Array.isArray(top.Plans) ? top.Plans[0] : undefined;
  const rows = (child as Record<string, unknown> | undefined)?.["Plan Rows"] ??
    top["Plan Rows"];
  return typeof rows === "number" ? rows : null;
}

/** The rows a MySQL/MariaDB write plan expects to change: `query_block.table.rows` (or `rows_examined_per_scan`). */
export function mysqlWriteRows(plan: unknown): number | null {
  const block = firstDocument(plan)?.query_block as
    | Record<string, unknown>
    | undefined;
  const table = block?.table as Record<string, unknown> | undefined;
  const rows = table?.rows ?? table?.rows_examined_per_scan;
  return typeof rows === "number" ? rows : null;
}
