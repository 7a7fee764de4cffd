/**
 * The Activity page: the activity log, newest first, live, with client and
 * connection names, filtered by client, connection and outcome.
 *
 * @module
 */

import { type ActivityRow, OUTCOMES } from "../../app/activity_log.ts";
import {
  BRIDGE_ITSELF,
  BRIDGE_TOKEN_NAME,
  isBridgeItself,
} from "../../base/identity.ts";
import { at, Choice, Time } from "./layout.tsx";

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
    <form class="filters" method="get" action={at("/activity")} data-live>
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
      <noscript>
        <button type="submit">Filter</button>
      </noscript>
    </form>
  );
}

/** The live part: the log's rows, a page at a time. */
export function ActivityTable(props: {
  rows: readonly ActivityRow[];
  nameOf: (id: string) => string;
  /** The address of the next (older) page; null on the last. */
  older: string | null;
}) {
  if (props.rows.length === 0) {
    return <p class="empty">No activity matches yet.</p>;
  }
  return (
    <>
      <table class="stack" id="activity-table">
        <thead>
          <tr>
            <th>Time</th>
            <th>Client</th>
            <th>Token</th>
            <th>Method</th>
            <th>Tool or resource</th>
            <th>Connection</th>
            <th>Outcome</th>
            <th>Detail</th>
            <th>ms</th>
          </tr>
        </thead>
        <tbody>
          {props.rows.map((row) => (
            <tr data-activity={String(row.id)}>
              <td class="time" data-label="Time">
                <Time ms={row.time} />
              </td>
              <td data-label="Client" class="client">
                {isBridgeItself(row.tokenName, row.clientName)
                  ? BRIDGE_ITSELF
                  : row.clientName ?? "—"}
                {row.clientVersion
                  ? <span class="muted">{` ${row.clientVersion}`}</span>
                  : null}
              </td>
              <td data-label="Token" class="token">{tokenOf(row)}</td>
              <td data-label="Method" class="method">
                <code>{row.method ?? "—"}</code>
              </td>
              <td data-label="Tool or resource" class="target">
                {row.target ? <code>{row.target}</code> : "—"}
              </td>
              <td data-label="Connection">
                {row.connectionId === null
                  ? "—"
                  : props.nameOf(row.connectionId)}
              </td>
              <td data-label="Outcome" class={`outcome-${row.outcome}`}>
                {row.outcome}
                {row.detail?.includes("approved by you")
                  ? <span class="approved">approved by you</span>
                  : null}
              </td>
              <td data-label="Detail">{row.detail ?? ""}</td>
              <td data-label="ms" class="num">{row.durationMs}</td>
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

/** Who the token is, in words: the bridge's own token is no name to show. */
function tokenOf(row: ActivityRow): string {
  if (row.principalKind === "bridge" || row.tokenName === BRIDGE_TOKEN_NAME) {
    return "stdio bridge";
  }
  return row.tokenName ?? row.principalKind;
}
