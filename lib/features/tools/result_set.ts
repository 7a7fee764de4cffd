/**
 * A read's answer sized for a model's context: its rows within the answer
 * budget (answer_budget.ts), and when anything was left out — rows past
 * max_rows, rows past the budget, characters of long cells — `is_truncated`
 * and a `truncation` naming the rows returned, the total when the engine
 * counts it cheaply (else `has_more`), and the way to the rest
 * (docs/wire.md "Results").
 *
 * @module
 */

import type * as s from "../../base/schema.ts";
import type { Settings } from "../../app/settings.ts";
import type { Truncation } from "../../db/budget.ts";
import type {
  BindValue,
  Cell,
  QueryOptions,
  QueryResult,
} from "../../db/types.ts";
import type { JsonObject } from "../../protocol/jsonrpc.ts";
import type { CallContext } from "../context.ts";
import type { Resolved } from "./access.ts";
import { answerBudget } from "./answer_budget.ts";
import { classifyQuery } from "./classify.ts";
import type { TRUNCATION_SCHEMA } from "./result_schema.ts";
import { invalidArgument } from "./failure.ts";

/** What the answer's envelope (columns, truncation) may take beside rows. */
const ENVELOPE_CHARS = 1_500;

/** How long counting the whole result may take: it must be cheap. */
export const COUNT_TIMEOUT_MS = 2_000;

/** The driver limits of a read answered to a model. */
export function answerLimits(
  settings: Settings,
): Pick<QueryOptions, "maxBytes" | "maxCellChars"> {
  const room = Math.max(1_000, answerBudget(settings) - ENVELOPE_CHARS);
  return {
    maxBytes: Math.min(settings.maxResultBytes, room),
    maxCellChars: Math.min(settings.maxCellChars, room),
  };
}

/**
 * The rows a result set keeps once its whole text is measured: the columns'
 * names, the cut markers of long cells and a long message count too, so
 * trailing rows are dropped until the answer fits — the first row too when
 * it alone is wider than the budget (1,600 cut cells of a wide join), which
 * the truncation then says.
 */
export function fitRows(
  answer: JsonObject & { rows: Cell[][] },
  budget: number,
): number {
  const over = JSON.stringify(answer).length - budget;
  if (over <= 0) return answer.rows.length;
  let freed = 0;
  let keep = answer.rows.length;
  while (keep > 0 && freed < over) {
    keep--;
    freed += JSON.stringify(answer.rows[keep]).length + 1;
  }
  return keep;
}

/** The characters a list of column names takes in an answer. */
function namesChars(columns: readonly string[]): number {
  let chars = 2;
  for (const name of columns) chars += name.length + 3;
  return chars;
}

/**
 * Refuse a read whose column names alone would take more than half the
 * answer budget (1,600 names of 1,000 characters answered 160 MB): no row
 * could be shown beside them. Measured by their lengths, not by building
 * their text.
 */
export function checkColumnNames(
  columns: readonly string[],
  budget: number,
): void {
  const chars = namesChars(columns);
  if (chars <= budget / 2) return;
  throw invalidArgument(
    `the result's ${columns.length} column names alone take ${chars} characters, more than half the answer budget of ${budget}; nothing was returned: select fewer columns, or give long names a short alias (AS)`,
  );
}

/**
 * A write's result whose RETURNING column names alone pass half the budget:
 * the write has run, so it is not refused; its answer keeps the counts and
 * leaves out the returned rows, its names cut (said as cut at the budget).
 * Changes `result` in place.
 */
export function narrowWrite(result: QueryResult, budget: number): void {
  if (namesChars(result.columns) <= budget / 2) return;
  result.columns = namesWithin(result.columns, budget / 4).columns;
  result.rows = [];
  result.truncation.bytes = true;
}

/** The longest column name an answer lists whole. */
const NAME_CHARS = 200;

/**
 * Column names as an answer lists them within `chars` characters: each cut
 * to {@linkcode NAME_CHARS}, and those past the room left out — both said
 * in `columns_cut` (the export's file has them all).
 */
export function namesWithin(
  columns: readonly string[],
  chars: number,
): { columns: string[]; columns_cut?: string } {
  const shown: string[] = [];
  let used = 2;
  let shortened = 0;
  for (const name of columns) {
    const short = name.length <= NAME_CHARS
      ? name
      : `${name.slice(0, NAME_CHARS)}…`;
    used += JSON.stringify(short).length + 1;
    if (used > chars) break;
    if (short !== name) shortened++;
    shown.push(short);
  }
  const left = columns.length - shown.length;
  if (left === 0 && shortened === 0) return { columns: shown };
  const said = [
    ...(left > 0 ? [`${left} of ${columns.length} column names left out`] : []),
    ...(shortened > 0
      ? [`${shortened} names cut to ${NAME_CHARS} characters`]
      : []),
  ];
  return {
    columns: shown,
    columns_cut: `${
      said.join("; ")
    } to keep the answer within its budget; the file has every column`,
  };
}

/**
 * How many rows the whole read gives, when the engine counts them within
 * {@linkcode COUNT_TIMEOUT_MS}: the statement wrapped as a derived table,
 * vetted like any read and run in the same read-only mode. Null when it
 * cannot be counted cheaply (not a SELECT, too slow, refused).
 */
export async function countRows(
  resolved: Resolved,
  ctx: CallContext,
  sql: string,
  params: readonly BindValue[] = [],
): Promise<number | null> {
  const inner = sql.replace(/[\s;]+$/, "");
  if (inner.includes(";")) return null;
  const text = `select count(*) from (\n${inner}\n) dbport_total`;
  try {
    const checked = await classifyQuery(text, resolved, ctx);
    if (checked.tier !== "read") return null;
    const result = await resolved.driver.query(checked.text, {
      // The wrapper adds no placeholder: the values bind as before.
      ...(params.length > 0 ? { params } : {}),
      mode: "read",
      maxRows: 1,
      maxBytes: 10_000,
      maxCellChars: 100,
      timeoutMs: COUNT_TIMEOUT_MS,
      signal: ctx.signal,
    });
    const total = Number(result.rows[0]?.[0]);
    return Number.isSafeInteger(total) && total >= 0 ? total : null;
  } catch {
    return null;
  }
}

/** What was left out of a result, for its answer. */
export interface LeftOut {
  truncation: Truncation;
  rowsReturned: number;
  maxRows: number;
  /** The whole result's row count, when counted. */
  total: number | null;
}

/** Whether anything was left out: rows, bytes or characters of cells. */
export function isCut(truncation: Truncation): boolean {
  return truncation.rows || truncation.bytes || truncation.cells > 0;
}

/** The `truncation` object of an answer that left something out. */
export function truncationOf(
  left: LeftOut,
  settings: Settings,
): s.Infer<typeof TRUNCATION_SCHEMA> {
  const { truncation, rowsReturned } = left;
  const rowsCut = truncation.rows || truncation.bytes;
  const budget = answerBudget(settings);
  const why = [
    ...(truncation.rows ? [`cut at max_rows ${left.maxRows}`] : []),
    ...(truncation.bytes
      ? [`cut at the answer budget of ${budget} characters`]
      : []),
    ...(truncation.bytes && rowsReturned === 0
      ? ["the first row alone is wider than the budget"]
      : []),
    ...(truncation.cells > 0
      ? [`${truncation.cells} long cells cut (…[cut: N more characters])`]
      : []),
  ];
  const returned = left.total === null
    ? `Returned ${rowsReturned} rows${rowsCut ? "; more remain" : ""}`
    : `Returned ${rowsReturned} of ${left.total} rows`;
  const ways = [
    ...(rowsCut
      ? [
        rowsReturned === 0
          ? "select fewer columns, or shorter parts of long values with substr(column, start, length)"
          : `narrow the query (WHERE, fewer columns, LIMIT … OFFSET ${rowsReturned})`,
        ...(truncation.rows && left.maxRows < settings.maxRowLimit
          ? [
            `raise max_rows (at most ${settings.maxRowLimit}; the answer budget still applies)`,
          ]
          : []),
        "export_query to write every row to a file",
      ]
      : []),
    ...(truncation.cells > 0
      ? ["read long values in parts with substr(column, start, length)"]
      : []),
  ];
  return {
    reasons: [
      ...(truncation.rows ? ["max_rows" as const] : []),
      ...(truncation.bytes ? ["bytes" as const] : []),
      ...(truncation.cells > 0 ? ["cells" as const] : []),
    ],
    cut_cells: truncation.cells,
    rows_returned: rowsReturned,
    ...(left.total === null ? {} : { total_rows: left.total }),
    has_more: left.total === null ? rowsCut : left.total > rowsReturned,
    message: `${returned} (${why.join("; ")}). To get the rest: ${
      ways.join("; or ")
    }.`,
  };
}
