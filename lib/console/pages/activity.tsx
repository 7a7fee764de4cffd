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
import { type Column, Older, Table } from "./table.tsx";

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
  return (
    <>
      <Table
        stack
        id="activity-table"
        rows={props.rows}
        row={(row) => ({ "data-activity": String(row.id) })}
        columns={activityColumns(props.nameOf)}
        empty={<p class="empty">No activity matches yet.</p>}
      />
      <Older href={props.older} />
    </>
  );
}

/** The log's columns. */
function activityColumns(
  nameOf: (id: string) => string,
): Column<ActivityRow>[] {
  return [
    { label: "Time", class: "time", cell: (row) => <Time ms={row.time} /> },
    {
      label: "Client",
      class: "client",
      cell: (row) => (
        <>
          {isBridgeItself(row.tokenName, row.clientName)
            ? BRIDGE_ITSELF
            : row.clientName ?? "—"}
          {row.clientVersion
            ? <span class="muted">{` ${row.clientVersion}`}</span>
            : null}
        </>
      ),
    },
    { label: "Token", class: "token", cell: tokenOf },
    {
      label: "Method",
      class: "method",
      cell: (row) => <code>{row.method ?? "—"}</code>,
    },
    {
      label: "Tool or resource",
      class: "target",
      cell: (row) => row.target ? <code>{row.target}</code> : "—",
    },
    {
      label: "Connection",
      cell: (row) => row.connectionId === null ? "—" : nameOf(row.connectionId),
    },
    {
      label: "Outcome",
      class: (row) => `outcome-${row.outcome}`,
      cell: (row) => (
        <>
          {row.outcome}
          {row.detail?.includes("approved by you")
            ? <span class="approved">approved by you</span>
            : null}
        </>
      ),
    },
    { label: "Detail", cell: (row) => row.detail ?? "" },
    { label: "ms", class: "num", cell: (row) => row.durationMs },
  ];
}

/** Who the token is, in words: the bridge's own token is no name to show. */
function tokenOf(row: ActivityRow): string {
  if (row.principalKind === "bridge" || row.tokenName === BRIDGE_TOKEN_NAME) {
    return "stdio bridge";
  }
  return row.tokenName ?? row.principalKind;
}
