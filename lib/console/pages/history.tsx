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
  if (props.rows.length === 0) {
    return <p class="empty">No statement matches.</p>;
  }
  return (
    <>
      <table class="stack" id="history-table">
        <thead>
          <tr>
            <th>Time</th>
            <th>Connection</th>
            <th>Client</th>
            <th>Outcome</th>
            <th>Rows</th>
            <th>ms</th>
            <th>Statement</th>
          </tr>
        </thead>
        <tbody>
          {props.rows.map((row) => (
            <tr data-history={String(row.id)}>
              <td class="time" data-label="Time">
                <Time ms={row.time} />
              </td>
              <td data-label="Connection">{props.nameOf(row.connectionId)}</td>
              <td data-label="Client">
                {isOwnerEntry(row) ? "you (console)" : row.clientName ?? "—"}
              </td>
              <td data-label="Outcome" class={`outcome-${row.outcome}`}>
                {row.outcome}
                {row.approvedAt
                  ? (
                    <span class="approved">
                      approved by you at <Time ms={row.approvedAt} />
                    </span>
                  )
                  : null}
              </td>
              <td data-label="Rows" class="num">
                {row.statementType === "read"
                  ? `${row.rowCount} read`
                  : `${row.rowsAffected} changed`}
              </td>
              <td data-label="ms" class="num">{row.durationMs}</td>
              <td data-label="Statement">
                {/* Shown as an approval shows it: no character hides. */}
                <pre>{visibleStatement(row.sql)}</pre>
                {row.error === null
                  ? null
                  : <span class="outcome-error">{row.error}</span>}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      {props.older === null ? null : (
        <p class="pager">
          <a href={props.older} id="older">Older</a>
        </p>
      )}
    </>
  );
}
