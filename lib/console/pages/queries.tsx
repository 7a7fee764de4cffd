/**
 * The Queries page (read-only): the user's saved queries, each with the tool
 * it is for AI clients (`q_<name>`), its connection, its typed parameters
 * and its statement. They are added and changed with `dbport queries`
 * (docs/queries.md); this page only shows them (`GET /queries`, app.tsx).
 *
 * @module
 */

import type { SavedConnection } from "../../app/connections.ts";
import type { QueryParam, SavedQuery } from "../../app/queries.ts";
import { type Column, Table } from "./table.tsx";

function paramText(param: QueryParam): string {
  return `:${param.name} ${param.type}${
    param.default === undefined ? "" : ` = ${JSON.stringify(param.default)}`
  }`;
}

/** The saved queries, as a table. */
export function QueriesTable(props: {
  queries: readonly SavedQuery[];
  connections: readonly SavedConnection[];
}) {
  const nameOf = (id: string) =>
    props.connections.find((c) => c.id === id)?.name ?? `(gone: ${id})`;
  if (props.queries.length === 0) {
    return (
      <p class="empty">
        No saved query. Add one: dbport queries add --help
      </p>
    );
  }
  return (
    <>
      <p>
        Each saved query is a tool for the AI clients allowed on its connection.
        Change them with{" "}
        <code>dbport queries edit</code>; clients see changes at their next
        tools/list.
      </p>
      <Table
        stack
        rows={props.queries}
        row={(query) => ({ "data-query": query.name })}
        columns={queryColumns(nameOf)}
      />
    </>
  );
}

/** The list's columns. */
function queryColumns(
  nameOf: (id: string) => string,
): Column<SavedQuery>[] {
  return [
    { label: "Tool", cell: (query) => <code>q_{query.name}</code> },
    { label: "Connection", cell: (query) => nameOf(query.connectionId) },
    {
      label: "Parameters",
      cell: (query) =>
        query.params.length === 0 ? "-" : query.params.map((param) => (
          <div>
            <code>{paramText(param)}</code>
          </div>
        )),
    },
    {
      label: "Statement",
      cell: (query) => <pre class="sql">{query.sql}</pre>,
    },
    { label: "Description", cell: (query) => query.description || "-" },
  ];
}
