/**
 * The Approvals page: every approval waiting on the console, live, with all
 * the user needs to decide — who asks (client, token), where (connection,
 * Safe Mode), what (kind, the whole statement, the write's preview) and why.
 * The statement is shown as every way of asking shows it: control and
 * invisible characters made visible, a note on non-ASCII names
 * (docs/security.md "Approvals").
 *
 * @module
 */

import { tokenLabel } from "../../base/identity.ts";
import { statementForApproval } from "../../app/visible_text.ts";
import type { PendingApproval } from "../pending.ts";
import { at, Csrf, Time } from "./layout.tsx";
import { Table } from "./table.tsx";

/** The live part of the Approvals page. */
export function ApprovalsList(props: {
  approvals: readonly PendingApproval[];
  csrf: string;
  timeoutMs: number;
  notice?: string | undefined;
}) {
  return (
    <>
      <span data-pending={String(props.approvals.length)} hidden />
      {props.notice ? <p class="notice">{props.notice}</p> : null}
      {props.approvals.length === 0 ? null : (
        <p class="muted keys">
          Keys: a approves, d denies the focused card (or the only one); Tab
          moves between cards.
        </p>
      )}
      {props.approvals.length === 0
        ? (
          <p class="empty">
            Nothing waits for your approval. Requests that need it appear here
            as they arrive.
          </p>
        )
        : props.approvals.map((approval) => (
          <ApprovalCard
            key={approval.id}
            approval={approval}
            csrf={props.csrf}
            endsAt={approval.askedAt + props.timeoutMs}
          />
        ))}
    </>
  );
}

function ApprovalCard(
  props: { approval: PendingApproval; csrf: string; endsAt: number },
) {
  const { id, request, askedAt } = props.approval;
  const kind = request.tier ?? request.kind;
  return (
    <section
      class={`card approval ${kind}`}
      tabindex={0}
      data-approval={id}
      aria-label={request.message}
    >
      <h2>{request.message}</h2>
      <dl class="facts">
        <dt>Client</dt>
        <dd>{request.client}</dd>
        <dt>Token</dt>
        <dd>{tokenLabel(request.token)}</dd>
        <dt>Connection</dt>
        <dd>{request.connection.name}</dd>
        <dt>Safe Mode</dt>
        <dd>{request.safeMode}</dd>
        <dt>Kind</dt>
        <dd>{kind}</dd>
        <dt>Why asked</dt>
        <dd>
          {request.reasons.length === 0 ? "—" : request.reasons.join("; ")}
        </dd>
        <dt>Asked</dt>
        <dd>
          <Time ms={askedAt} /> · ends unanswered in{" "}
          <span data-ends-at={String(props.endsAt)}>
            {Math.max(0, Math.round((props.endsAt - Date.now()) / 1000))} s
          </span>
        </dd>
      </dl>
      {request.previewLine
        ? <p class="preview">{request.previewLine}</p>
        : null}
      <PreviewRows preview={request.preview} />
      {request.statement === null
        ? null
        : <pre class="sql">{statementForApproval(request.statement)}</pre>}
      <form class="actions" method="post" action={at(`/approvals/${id}`)}>
        <Csrf token={props.csrf} />
        <button class="approve" name="decision" value="approve" type="submit">
          Approve
        </button>
        <button class="deny" name="decision" value="deny" type="submit">
          Deny
        </button>
      </form>
    </section>
  );
}

/** The preview's sample of changed rows, when it has one. */
export function PreviewRows(
  props: { preview: Record<string, unknown> | undefined },
) {
  const columns = props.preview?.columns;
  const rows = props.preview?.rows;
  if (!Array.isArray(columns) || !Array.isArray(rows) || rows.length === 0) {
    return null;
  }
  const note = props.preview?.note;
  return (
    <>
      <Table
        class="preview-rows"
        rows={rows.map((row) => cellsOf(row, columns))}
        columns={columns.map((column, i) => ({
          label: String(column),
          cell: (cells: unknown[]) => <code>{cellText(cells[i])}</code>,
        }))}
      />
      {typeof note === "string" ? <p class="muted">{note}</p> : null}
    </>
  );
}

/** A sample row's cells in the columns' order (an array, or an object). */
function cellsOf(row: unknown, columns: unknown[]): unknown[] {
  if (Array.isArray(row)) return row;
  if (row !== null && typeof row === "object") {
    return columns.map((column) =>
      (row as Record<string, unknown>)[String(column)]
    );
  }
  return [];
}

function cellText(cell: unknown): string {
  if (cell === null || cell === undefined) return "NULL";
  return typeof cell === "object" ? JSON.stringify(cell) : String(cell);
}
