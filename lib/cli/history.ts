/**
 * `dbport history`: the statements AI clients ran, read from `state.db`,
 * newest first, with the connection's name, the outcome, rows and duration;
 * as lines, JSON lines or CSV.
 *
 * @module
 */

import { cliCommand } from "../app/cli_command.ts";
import type { SavedConnection } from "../app/connections.ts";
import {
  HISTORY_CSV_HEADER,
  historyCsvLine,
  historyJsonLine,
} from "../app/history_export.ts";
import { type HistoryRow, QueryHistory } from "../app/query_history.ts";
import type { StateDb } from "../app/state_db.ts";
import { formatTime, integerFlag, parseFlags, stringFlag } from "./args.ts";
import { type CliIO, UsageError } from "./io.ts";

/** How `history` is used. */
export const HISTORY_USAGE = `Usage:
  dbport history [--connection NAME|ID] [--grep TEXT] [--limit N] [--json|--csv]

The statements AI clients ran (while the query history is on), newest first.
  --connection   only this saved connection (its name or id)
  --grep TEXT    only statements containing TEXT (case-insensitive)
  --limit N      at most N entries (default 50)
  --json         one JSON object per line
  --csv          CSV with a header row`;

/** Run `history`; `connections` names the saved connections. */
export async function historyCommand(
  db: StateDb,
  connections: readonly SavedConnection[],
  args: string[],
  io: CliIO,
): Promise<number> {
  const parsed = parseFlags("history", args, {
    connection: { type: "string" },
    grep: { type: "string" },
    limit: { type: "string" },
    json: { type: "boolean" },
    csv: { type: "boolean" },
  });
  if (parsed.positionals.length > 0) {
    throw new UsageError(
      `history: unexpected argument "${
        parsed.positionals[0]
      }"\n\n${HISTORY_USAGE}`,
    );
  }
  if (parsed.flags.json === true && parsed.flags.csv === true) {
    throw new UsageError("history: give --json or --csv, not both");
  }
  const named = stringFlag(parsed, "connection");
  let connectionId: string | undefined;
  if (named !== undefined) {
    const found = connections.find((c) =>
      c.id === named.toLowerCase() ||
      c.name.toLowerCase() === named.toLowerCase()
    );
    if (found === undefined) {
      throw new UsageError(
        `history: no saved connection is named or has the id ${
          JSON.stringify(named)
        } (${cliCommand()} connections list)`,
      );
    }
    connectionId = found.id;
  }
  const grep = stringFlag(parsed, "grep");
  const rows = await new QueryHistory(db).search({
    ...(connectionId === undefined ? {} : { connectionId }),
    ...(grep === undefined ? {} : { grep }),
    limit: integerFlag(parsed, "limit", 50, 100_000),
  });
  const nameOf = (id: string) =>
    connections.find((c) => c.id === id)?.name ?? id;
  if (parsed.flags.csv === true) {
    io.out(HISTORY_CSV_HEADER);
    for (const row of rows) io.out(historyCsvLine(row, nameOf));
  } else if (parsed.flags.json === true) {
    for (const row of rows) io.out(historyJsonLine(row, nameOf));
  } else if (rows.length === 0) {
    io.out("No statements recorded yet.");
  } else {
    for (const row of rows) io.out(line(row, nameOf));
  }
  return 0;
}

function line(row: HistoryRow, nameOf: (id: string) => string): string {
  const rows = row.statementType === "read"
    ? `${row.rowCount} ${row.rowCount === 1 ? "row" : "rows"}`
    : `${row.rowsAffected} affected`;
  const parts = [
    formatTime(row.time),
    row.outcome.padEnd(9),
    nameOf(row.connectionId),
    row.clientName ?? "-",
    rows,
    `${row.durationMs} ms`,
    // One line per entry: the statement's own line breaks are shown as ⏎.
    row.sql.replace(/\r?\n/g, " ⏎ "),
  ];
  if (row.error !== null) parts.push(`(${row.error})`);
  // As the console's History says it.
  if (row.approvedAt) {
    parts.push(`approved by you at ${formatTime(row.approvedAt)}`);
  }
  return parts.join("  ");
}
