/**
 * Reads refused by their planned cost: what a plan's estimate is on each
 * engine, and the refusal when it is over a connection's limit
 * (docs/security.md "Reads refused by their plan"). Pure: the caller runs the
 * plan statements; nothing here touches a driver.
 *
 * - PostgreSQL: the top node's `Plan Rows` and `Total Cost` of
 *   `EXPLAIN (FORMAT JSON)`, which already count a `LIMIT`.
 * - MySQL/MariaDB: `EXPLAIN FORMAT=JSON`: the rows each table access examines
 *   (times its `filtered` share), multiplied along the plan as the engine's
 *   nested loops do; the cost where the plan has one (MySQL, MariaDB 11+).
 * - SQLite: its plans carry no estimate, so each table `EXPLAIN QUERY PLAN`
 *   scans (an alias traced to its table through the text) is sized by
 *   `sqlite_stat1`, or else counted up to one past the limit. (Its bytecode
 *   was no help: a range `id < 100` rewinds the cursor like a whole read.)
 *
 * On MySQL/MariaDB and SQLite, whose plans do not count a `LIMIT`, a literal
 * `LIMIT n [OFFSET m]` ending the statement caps the row estimate at n + m.
 *
 * @module
 */

import type { Cell } from "./types.ts";
import type { Engine } from "./engines.ts";
import { tokenize } from "./sql/lexer.ts";
import { isNode, numberOf } from "./explain.ts";

/** A connection's plan limits (absent: off). */
export interface PlanLimits {
  maxEstimatedRows?: number;
  maxEstimatedCost?: number;
}

/** What a plan estimates, and how that was read (said in a refusal). */
export interface PlanEstimate {
  rows: number | null;
  cost: number | null;
  /** `"the top node (Seq Scan)"`, `"the whole table big (sqlite_stat1)"`. */
  how: string;
  /** The row estimate is a floor: counting stopped past the limit. */
  atLeast?: boolean;
  /** Why there is no row estimate (said in the refusal). */
  unsized?: string;
}

/** Whether any limit is set. */
export function hasPlanLimits(limits: PlanLimits): boolean {
  return limits.maxEstimatedRows !== undefined ||
    limits.maxEstimatedCost !== undefined;
}

/**
 * The rows a literal `LIMIT` ending the statement outside any parentheses
 * lets the engine step through (`LIMIT n`: n; `LIMIT n OFFSET m` and
 * `LIMIT m, n`: n + m, since the skipped rows are read too), or null.
 */
export function trailingLimit(text: string, engine: Engine): number | null {
  const tokens = tokenize(text, engine);
  let depth = 0;
  let at = -1;
  tokens.forEach((token, i) => {
    if (token.kind === "punct" && token.text === "(") depth++;
    else if (token.kind === "punct" && token.text === ")") depth--;
    else if (depth === 0 && token.kind === "word" && token.text === "LIMIT") {
      at = i;
    }
  });
  if (at < 0) return null;
  const rest = tokens.slice(at + 1);
  const number = (i: number) =>
    rest[i]?.kind === "number" && /^\d+$/.test(rest[i]!.text)
      ? Number(rest[i]!.text)
      : null;
  const sum = (a: number | null, b: number | null) =>
    a === null || b === null ? null : a + b;
  if (rest.length === 1) return number(0);
  if (rest.length !== 3) return null;
  if (rest[1]?.kind === "punct" && rest[1].text === ",") {
    return sum(number(0), number(2));
  }
  return rest[1]?.kind === "word" && rest[1].text === "OFFSET"
    ? sum(number(0), number(2))
    : null;
}

/**
 * MySQL/MariaDB: the rows a JSON plan examines, multiplied along its table
 * accesses (a join's nested loops); the tables read whole are named.
 */
export function mysqlRowEstimate(
  plan: Cell,
): { rows: number | null; fullScans: string[] } {
  let rows: number | null = null;
  const fullScans: string[] = [];
  const walk = (value: Cell | undefined) => {
    if (Array.isArray(value)) {
      for (const item of value) walk(item);
      return;
    }
    if (!isNode(value)) return;
    for (const [key, child] of Object.entries(value)) {
      if (key === "table" && isNode(child) && "table_name" in child) {
        const examined = numberOf(child.rows ?? child.rows_examined_per_scan);
        const filtered = numberOf(child.filtered) ?? 100;
        if (examined !== null) {
          rows = (rows ?? 1) * Math.max(1, examined * filtered / 100);
        }
        if (child.access_type === "ALL") {
          fullScans.push(String(child.table_name));
        }
      }
      walk(child);
    }
  };
  walk(plan);
  return { rows: rows === null ? null : Math.round(rows), fullScans };
}

/**
 * SQLite: which of `names` (tables, `schema.table`s and aliases, lower-cased)
 * `EXPLAIN QUERY PLAN` reads whole: a `SCAN x` line (a table, or a whole
 * index of it), or a `SEARCH x USING AUTOMATIC …` line (SQLite builds that
 * index by reading all of `x` first). `x` is the alias when the table has
 * one, and an alias is any text the statement quotes (`"CONSTANT ROW"`,
 * `"q.r"`, `"t USING INDEX i"`): so a line is matched against the names the
 * statement and the schema hold, never parsed on its own. A line matching
 * none (constant rows, subqueries, CTEs, virtual tables) reads no table.
 */
export function sqliteScans(
  lines: readonly string[],
  names: Iterable<string>,
): string[] {
  const candidates = new Set(names);
  const read = new Set<string>();
  for (const line of lines) {
    const text = line.trim();
    const scan = text.startsWith("SCAN ");
    if (!scan && !text.startsWith("SEARCH ")) continue;
    const subject = text.slice(scan ? 5 : 7).toLowerCase();
    // Each prefix ending before a space or at the end may be the name: a
    // set lookup each, never a pass over every name.
    for (let end = 0; end <= subject.length; end++) {
      if (end < subject.length && subject[end] !== " ") continue;
      const name = subject.slice(0, end);
      if (!candidates.has(name)) continue;
      if (scan || subject.startsWith(" using automatic ", end)) read.add(name);
    }
  }
  return [...read];
}

/**
 * Every `name [AS] alias` pair of a statement's text (lower-cased), so that
 * an alias a plan line names can be traced to its table. Pairs that are not
 * a table and its alias (a column and its label) are harmless: only names of
 * real tables are kept by the caller.
 */
export function aliasPairs(
  text: string,
  engine: Engine,
): Map<string, Set<string>> {
  const names = tokenize(text, engine).map((token) =>
    token.kind === "word"
      ? text.slice(token.start, token.end).toLowerCase()
      : token.kind === "quoted"
      ? token.text.slice(1, -1).replace(/""|``|]]/g, (q) => q[0]!)
        .toLowerCase()
      : null
  );
  const pairs = new Map<string, Set<string>>();
  names.forEach((name, i) => {
    if (name === null || name === "as") return;
    const next = names[i + 1] === "as" ? names[i + 2] : names[i + 1];
    if (next === null || next === undefined) return;
    const set = pairs.get(next) ?? new Set<string>();
    set.add(name);
    pairs.set(next, set);
  });
  return pairs;
}

/** The first number of a `sqlite_stat1.stat`: the rows of its table. */
export function statRows(stat: Cell | undefined): number | null {
  const first = /^\s*(\d+)/.exec(String(stat ?? ""))?.[1];
  return first === undefined ? null : Number(first);
}

const count = (n: number) => Math.round(n).toLocaleString("en-US");

/**
 * The refusal of a read whose estimate is over a limit (a sentence for a
 * tool error `denied`), or null when it is within them. `where` names the
 * connection (`"Shop"`); `command` is how the user raises a limit.
 */
export function planLimitRefusal(
  estimate: PlanEstimate,
  limits: PlanLimits,
  where: string,
  command: string,
): string | null {
  const over: string[] = [];
  const flags: string[] = [];
  const { maxEstimatedRows: rows, maxEstimatedCost: cost } = limits;
  if (rows !== undefined && estimate.rows !== null && estimate.rows > rows) {
    over.push(
      `${estimate.atLeast ? "more than" : "about"} ${
        count(estimate.atLeast ? rows : estimate.rows)
      } rows (${estimate.how}), over the limit of ${
        count(rows)
      } rows (maxEstimatedRows)`,
    );
    flags.push("--max-estimated-rows N");
  }
  if (cost !== undefined && estimate.cost !== null && estimate.cost > cost) {
    over.push(
      `a cost of ${count(estimate.cost)}, over the limit of ${
        count(cost)
      } (maxEstimatedCost)`,
    );
    flags.push("--max-estimated-cost N");
  }
  if (over.length === 0) return null;
  return `the plan of this read expects ${
    over.join(" and ")
  } on ${where}; nothing was run. Narrow it with a WHERE on an indexed column or a LIMIT, use export_query to write every row to a file, or ask the user to raise the limit (${command} connections set ${where} ${
    flags.join(" ")
  })`;
}
