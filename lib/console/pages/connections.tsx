/**
 * The Connections page: each saved connection with where it goes (host,
 * port, database — never a user or password), whether its database answered
 * recently, and its `externalAccess`, `aiPolicy` and `safeMode`, changed with
 * a click (written to connections.json, in force at the next call).
 *
 * @module
 */

import {
  AI_POLICIES,
  EXTERNAL_ACCESS,
  SAFE_MODES,
  type SavedConnection,
} from "../../app/connections.ts";
import { ENGINES } from "../../db/engines.ts";
import { describeTarget, urlProblem } from "../../db/target.ts";
import type { ConnectionFailure } from "../../db/pool.ts";
import {
  AddForm,
  type AddValues,
  type TestReport,
  TestReportView,
} from "./connection_forms.tsx";
import { HardenButton } from "./harden.tsx";
import { at, Choice, Csrf, Time } from "./layout.tsx";
import { type Column, Table } from "./table.tsx";

/** A connection's database, as the page shows it. */
export interface ConnectionStatus {
  connected: boolean;
  /** Its last failure to connect (a call or a test), until it answers again. */
  failure: ConnectionFailure | null;
  /** What its reading login may do beyond reading, once known. */
  risks: readonly string[] | null;
}

/** The list of connections with their policy forms. */
export function ConnectionsTable(props: {
  connections: readonly SavedConnection[];
  status: (id: string) => ConnectionStatus;
  csrf: string;
  notice?: string | undefined;
  add?: { values: AddValues; error: string; report?: TestReport };
  report?: TestReport;
}) {
  const report = props.report ?? props.add?.report;
  return (
    <>
      {props.notice ? <p class="notice" id="notice">{props.notice}</p> : null}
      {report ? <TestReportView report={report} /> : null}
      <AddForm
        csrf={props.csrf}
        {...(props.add
          ? { values: props.add.values, error: props.add.error }
          : {})}
      />
      <Table
        stack
        rows={props.connections}
        row={(connection) => ({ "data-connection": connection.id })}
        columns={connectionColumns(props.status, props.csrf)}
        empty={
          <p class="empty">
            No saved connection yet: add one above, or with dbport connections
            add.
          </p>
        }
      />
    </>
  );
}

/** The list's columns. */
function connectionColumns(
  status: (id: string) => ConnectionStatus,
  csrf: string,
): Column<SavedConnection>[] {
  return [
    { label: "Name", cell: (connection) => connection.name },
    { label: "Engine", cell: (connection) => connection.engine },
    {
      label: "Where",
      cell: (connection) => <code>{where(connection)}</code>,
    },
    {
      label: "Status",
      cell: (connection) => (
        <StatusCell
          connection={connection}
          status={status(connection.id)}
          csrf={csrf}
        />
      ),
    },
    {
      label: "Policy",
      cell: (connection) => <PolicyForm connection={connection} csrf={csrf} />,
    },
  ];
}

/** Whether its database answers, its login's risks and its actions. */
function StatusCell(
  props: {
    connection: SavedConnection;
    status: ConnectionStatus;
    csrf: string;
  },
) {
  const { connection, status } = props;
  return (
    <>
      {status.connected
        ? <span class="state status-connected">connected</span>
        : status.failure
        ? (
          <span class="state outcome-error">
            {`error: ${status.failure.message} `}(<Time
              ms={status.failure.at}
            />)
          </span>
        )
        : <span class="state muted">idle</span>}
      {status.risks !== null && status.risks.length > 0
        ? <p class="outcome-error">Its login {status.risks.join(", ")}.</p>
        : null}
      {connection.aiLogin
        ? <p class="muted">AI reads use a least-privilege login</p>
        : null}
      {ENGINES[connection.engine].logins
        ? (
          <HardenButton
            id={connection.id}
            again={connection.aiLogin !== undefined}
            csrf={props.csrf}
          />
        )
        : null}
      <div class="row-actions">
        <form
          class="inline"
          method="post"
          action={at(`/connections/${connection.id}/test`)}
        >
          <Csrf token={props.csrf} />
          <button type="submit" class="test">Test</button>
        </form>
        <a
          class="button query"
          href={at(`/query?connection=${connection.id}`)}
        >
          Query
        </a>
        <a
          class="button schema"
          href={at(`/schema?connection=${connection.id}`)}
        >
          Schema
        </a>
        <a
          class="button edit"
          href={at(`/connections/${connection.id}/edit`)}
        >
          Edit
        </a>
        <form
          class="inline"
          method="post"
          action={at(`/connections/${connection.id}/remove`)}
        >
          <Csrf token={props.csrf} />
          <button type="submit" class="remove revoke">Remove</button>
        </form>
      </div>
    </>
  );
}

/** Its externalAccess, aiPolicy and safeMode, saved with a click. */
function PolicyForm(props: { connection: SavedConnection; csrf: string }) {
  const { connection } = props;
  return (
    <form
      class="create"
      method="post"
      action={at(`/connections/${connection.id}`)}
    >
      <Csrf token={props.csrf} />
      <Choice
        label="External access"
        name="externalAccess"
        options={EXTERNAL_ACCESS}
        current={connection.externalAccess}
      />
      <Choice
        label="AI policy"
        name="aiPolicy"
        options={AI_POLICIES}
        current={connection.aiPolicy}
      />
      <Choice
        label="Safe Mode"
        name="safeMode"
        options={SAFE_MODES}
        current={connection.safeMode}
      />
      <button type="submit">Save</button>
    </form>
  );
}

/** Host, port and database; a file's name for SQLite. */
function where(connection: SavedConnection): string {
  const target = describeTarget(connection.engine, connection.url);
  if (target === null) {
    // Kept by the server, failing when used: what is wrong with it.
    const problem = urlProblem(connection.engine, connection.url);
    return `(its URL ${problem ?? "cannot be read"})`;
  }
  if (target.host === null) return target.database ?? "";
  // Several hosts with a port each: the list as written.
  const port = target.port === null ? "" : `:${target.port}`;
  return `${target.host}${port}/${target.database ?? ""}`;
}
