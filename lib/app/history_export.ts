/**
 * The query history as a file: CSV (RFC 4180, with a header row) or JSON
 * lines, each entry with its connection's name. Shared by `dbport history`
 * and the console's export.
 *
 * @module
 */

import { csvCell } from "./csv.ts";
import type { HistoryRow } from "./query_history.ts";

/** The CSV's columns, in order. */
export const HISTORY_CSV_COLUMNS = [
  "time",
  "connection",
  "outcome",
  "statement_type",
  "row_count",
  "rows_affected",
  "duration_ms",
  "client",
  "token",
  "error",
  "approved_at",
  "sql",
] as const;

/** The CSV's header line. */
export const HISTORY_CSV_HEADER = HISTORY_CSV_COLUMNS.join(",");

/** One entry as a CSV line. */
export function historyCsvLine(
  row: HistoryRow,
  nameOf: (id: string) => string,
): string {
  const cells: Record<
    typeof HISTORY_CSV_COLUMNS[number],
    string | number | null
  > = {
    time: new Date(row.time).toISOString(),
    connection: nameOf(row.connectionId),
    outcome: row.outcome,
    statement_type: row.statementType,
    row_count: row.rowCount,
    rows_affected: row.rowsAffected,
    duration_ms: row.durationMs,
    client: row.clientName,
    token: row.tokenName,
    error: row.error,
    approved_at: row.approvedAt ? new Date(row.approvedAt).toISOString() : null,
    sql: row.sql,
  };
  return HISTORY_CSV_COLUMNS.map((column) => csvCell(cells[column])).join(",");
}

/** One entry as a JSON line, its time in ISO 8601. */
export function historyJsonLine(
  row: HistoryRow,
  nameOf: (id: string) => string,
): string {
  return JSON.stringify({
    ...row,
    time: new Date(row.time).toISOString(),
    approvedAt: row.approvedAt ? new Date(row.approvedAt).toISOString() : null,
    connectionName: nameOf(row.connectionId),
  });
}
