/**
 * The Query page (docs/console.md "Query"): a connection, a statement in a
 * monospace box (Ctrl/Cmd+Enter runs it), and its result as a grid — each
 * column's name and type, NULL told apart from text, long cells cut with a
 * way to see the rest, the row count and time, and what the budget left
 * out. A write first shows the preview an AI client's approval would show,
 * and runs only on the owner's Confirm. The statement is always posted,
 * never put in a URL.
 *
 * @module
 */

import type { SavedConnection } from "../../app/connections.ts";
import { statementForApproval } from "../../app/visible_text.ts";
import type { Cell } from "../../db/types.ts";
import type { JsonObject } from "../../protocol/jsonrpc.ts";
import { PreviewRows } from "./approvals.tsx";
import { at, Csrf } from "./layout.tsx";
import { Table } from "./table.tsx";

/** Cells longer than this are cut in the grid, the rest behind a click. */
export const CELL_SHOWN = 120;

/** What the page was asked, to show again. */
export interface QueryInput {
  connection: string;
  sql: string;
}

/** A write waiting for the owner's Confirm. */
export interface QueryConfirm {
  plan: string;
  why: string;
  previewLine: string | null;
  preview: Record<string, unknown> | undefined;
  statement: string;
}

/** The form: a connection, the statement, Run and Export CSV. */
export function QueryForm(props: {
  connections: readonly SavedConnection[];
  input: QueryInput;
  csrf: string;
}) {
  return (
    <form
      id="query-form"
      class="query"
      method="post"
      action={at("/query")}
    >
      <Csrf token={props.csrf} />
      <label>
        Connection
        <select name="connection" id="query-connection">
          {props.connections.map((connection) => (
            <option
              value={connection.id}
              selected={connection.id === props.input.connection}
            >
              {connection.name} ({connection.engine})
            </option>
          ))}
        </select>
      </label>
      <label>
        Statement
        <textarea
          id="query-sql"
          name="sql"
          rows={8}
          spellcheck={false}
          autocomplete="off"
          placeholder="select * from …"
        >
          {/* A textarea drops one leading newline: this one, not the SQL's. */}
          {`\n${props.input.sql}`}
        </textarea>
      </label>
      <div class="actions">
        <button class="primary" type="submit" id="query-run">
          Run
        </button>
        <button
          type="submit"
          id="query-export"
          formaction={at("/query/export")}
        >
          Export CSV
        </button>
        <span class="muted">
          Ctrl+Enter (⌘+Enter) runs it. Reads run read-only with the saved
          login; a write shows its preview and waits for your Confirm.
        </span>
      </div>
    </form>
  );
}

/** The owner's confirmation of a write, with the approval's preview. */
export function ConfirmWrite(props: {
  confirm: QueryConfirm;
  input: QueryInput;
  connectionName: string;
  csrf: string;
}) {
  const { confirm } = props;
  return (
    <section class="card approval write" id="query-confirm">
      <h2>
        {`Run this on ${props.connectionName}? ${
          confirm.why.charAt(0).toUpperCase()
        }${confirm.why.slice(1)}.`}
      </h2>
      {confirm.previewLine
        ? <p class="preview" id="query-preview">{confirm.previewLine}</p>
        : null}
      <PreviewRows preview={confirm.preview} />
      <pre class="sql">{statementForApproval(confirm.statement)}</pre>
      <form class="actions" method="post" action={at("/query/confirm")}>
        <Csrf token={props.csrf} />
        <input type="hidden" name="plan" value={confirm.plan} />
        <button class="approve" type="submit" id="query-confirm-run">
          Confirm and run
        </button>
        <button
          class="deny"
          type="submit"
          formaction={at("/query/cancel")}
          id="query-cancel"
        >
          Cancel
        </button>
      </form>
    </section>
  );
}

/** A result set as a grid. */
export function ResultGrid(props: {
  answer: JsonObject;
  types: readonly (string | null)[];
  write: boolean;
  /** The history keeps it (`queryHistory` on). */
  recorded?: boolean;
}) {
  const columns = (props.answer.columns ?? []) as string[];
  const rows = (props.answer.rows ?? []) as Cell[][];
  const count = Number(props.answer.row_count ?? rows.length);
  const affected = Number(props.answer.rows_affected ?? 0);
  const ms = Number(props.answer.execution_time_ms ?? 0);
  const truncation = props.answer.truncation as
    | { message?: string }
    | undefined;
  return (
    <section id="query-result">
      <p class="result-facts">
        <span id="query-count">
          {props.write
            ? `${affected} row${affected === 1 ? "" : "s"} changed`
            : `${count} row${count === 1 ? "" : "s"}`}
          {props.write && columns.length > 0 ? `, ${count} returned` : ""}
        </span>{" "}
        · <span id="query-ms">{ms} ms</span>
        {props.write && props.recorded !== false
          ? " · recorded in History as yours"
          : ""}
      </p>
      {truncation?.message
        ? <p class="notice" id="query-truncation">{truncation.message}</p>
        : null}
      {columns.length === 0 ? null : (
        <div class="grid-scroll">
          <Table
            class="grid"
            id="query-grid"
            rows={rows}
            columns={columns.map((name, i) => ({
              label: name,
              head: (
                <>
                  {name}
                  <span class="type">{props.types[i] ?? ""}</span>
                </>
              ),
              cell: (row: readonly Cell[]) => cellView(row[i] ?? null),
            }))}
          />
        </div>
      )}
    </section>
  );
}

/** NULL distinct from any text; a long cell cut, the rest behind a click. */
function cellView(cell: Cell) {
  if (cell === null) return <span class="null">NULL</span>;
  const text = typeof cell === "object" ? JSON.stringify(cell) : String(cell);
  if (text.length <= CELL_SHOWN) return <code>{text}</code>;
  return (
    <details class="long">
      <summary>
        <code>{text.slice(0, CELL_SHOWN)}</code>… ({text.length} characters)
      </summary>
      <code>{text}</code>
    </details>
  );
}
