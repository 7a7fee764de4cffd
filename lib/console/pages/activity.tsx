/**
 * The Activity page: the activity log, newest first, live, with client and
 * connection names, filtered by client, connection and outcome.
 *
 * @module
 */

import { type ActivityRow, OUTCOMES } from "../../app/activity_log.ts";
import { at, Choice, when } from "./layout.tsx";

/** What the filters hold. */
export interface ActivityFilter {
  client?: string;
  connection?: string;
  outcome?: string;
}

/** The filter form (outside the live part: typing is never interrupted). */
export function ActivityFilters(props: {
  filter: ActivityFilter;
  clients: readonly string[];
  connections: readonly { id: string; name: string }[];
}) {
  const { filter } = props;
  return (
    <form class="filters" method="get" action={at("/activity")}>
      <Choice
        label="Client"
        name="client"
        options={props.clients}
        current={filter.client}
        any
      />
      <Choice
        label="Connection"
        name="connection"
        options={props.connections.map((c) => [c.id, c.name] as const)}
        current={filter.connection}
        any
      />
      <Choice
        label="Outcome"
        name="outcome"
        options={OUTCOMES}
        current={filter.outcome}
        any
      />
      <button type="submit">Filter</button>
    </form>
  );
}

/** The live part: the log's rows. */
export function ActivityTable(props: {
  rows: readonly ActivityRow[];
  nameOf: (id: string) => string;
}) {
  if (props.rows.length === 0) {
    return <p class="empty">No activity matches yet.</p>;
  }
  return (
    <table>
      <thead>
        <tr>
          <th>Time</th>
          <th>Client</th>
          <th>Token</th>
          <th>Request</th>
          <th>Connection</th>
          <th>Outcome</th>
          <th>Detail</th>
          <th>ms</th>
        </tr>
      </thead>
      <tbody>
        {props.rows.map((row) => (
          <tr data-activity={String(row.id)}>
            <td class="time">{when(row.time)}</td>
            <td>
              {row.clientName ?? "—"}
              {row.clientVersion
                ? <span class="muted">{row.clientVersion}</span>
                : null}
            </td>
            <td>{row.tokenName ?? row.principalKind}</td>
            <td>
              <code>{row.method ?? "—"}</code>
              {row.target ? <code>{row.target}</code> : null}
            </td>
            <td>
              {row.connectionId === null ? "—" : props.nameOf(row.connectionId)}
            </td>
            <td class={`outcome-${row.outcome}`}>{row.outcome}</td>
            <td>{row.detail ?? ""}</td>
            <td class="num">{row.durationMs}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
