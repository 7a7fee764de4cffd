/**
 * The History page: the statements AI clients ran, searchable by text and
 * connection, each with its outcome, rows and duration; exported as CSV or
 * JSON lines.
 *
 * @module
 */

import type { HistoryRow } from "../../app/query_history.ts";
import { isOwnerEntry } from "../../features/owner_query.ts";
import { visibleStatement } from "../../app/visible_text.ts";
import { at, Choice, Time } from "./layout.tsx";
import { type Column, Older, Table } from "./table.tsx";

/** What the search holds. */
export interface HistoryFilter {
  q?: string;
  connection?: string;
}

/** The search form and the export links. */
export function HistorySearch(props: {
  filter: HistoryFilter;
  connections: readonly { id: string; name: string }[];
  recording: boolean;
}) {
  const { filter } = props;
  const query = new URLSearchParams();
  if (filter.q) query.set("q", filter.q);
  if (filter.connection) query.set("connection", filter.connection);
  const exportHref = (format: string) => {
    const q = new URLSearchParams(query);
    q.set("format", format);
    return at(`/history/export?${q}`);
  };
  return (
    <>
      {props.recording ? null : (
        <p class="notice">
          The query history is off ("queryHistory": false in settings.json): new
          statements are not kept.
        </p>
      )}
      <form class="filters" method="get" action={at("/history")} data-live>
        <label>
          Text
          <input
            type="search"
            name="q"
            value={filter.q ?? ""}
            placeholder="orders"
          />
        </label>
        <Choice
          label="Connection"
          name="connection"
          options={props.connections.map((c) => [c.id, c.name] as const)}
          current={filter.connection}
          any
        />
        <noscript>
          <button type="submit">Search</button>
        </noscript>
        <a href={exportHref("csv")} download>Export CSV</a>
        <a href={exportHref("json")} download>Export JSON</a>
      </form>
    </>
  );
}

/** The live part: the matching statements. */
export function HistoryTable(props: {
  rows: readonly HistoryRow[];
  nameOf: (id: string) => string;
  /** The address of the next (older) page; null on the last. */
  older: string | null;
}) {
  return (
    <>
      <Table
        stack
        id="history-table"
        rows={props.rows}
        row={(row) => ({ "data-history": String(row.id) })}
        columns={historyColumns(props.nameOf)}
        empty={<p class="empty">No statement matches.</p>}
      />
      <Older href={props.older} />
    </>
  );
}

/** The history's columns. */
function historyColumns(
  nameOf: (id: string) => string,
): Column<HistoryRow>[] {
  return [
    { label: "Time", class: "time", cell: (row) => <Time ms={row.time} /> },
    { label: "Connection", cell: (row) => nameOf(row.connectionId) },
    {
      label: "Client",
      cell: (row) =>
        isOwnerEntry(row) ? "you (console)" : row.clientName ?? "—",
    },
    {
      label: "Outcome",
      class: (row) => `outcome-${row.outcome}`,
      cell: (row) => (
        <>
          {row.outcome}
          {row.approvedAt
            ? (
              <span class="approved">
                approved by you at <Time ms={row.approvedAt} />
              </span>
            )
            : null}
        </>
      ),
    },
    {
      label: "Rows",
      class: "num",
      cell: (row) =>
        row.statementType === "read"
          ? `${row.rowCount} read`
          : `${row.rowsAffected} changed`,
    },
    { label: "ms", class: "num", cell: (row) => row.durationMs },
    {
      label: "Statement",
      cell: (row) => (
        <>
          {/* Shown as an approval shows it: no character hides. */}
          <pre>{visibleStatement(row.sql)}</pre>
          {row.error === null
            ? null
            : <span class="outcome-error">{row.error}</span>}
        </>
      ),
    },
  ];
}
