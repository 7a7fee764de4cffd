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
      <table class="stack">
        <thead>
          <tr>
            <th>Tool</th>
            <th>Connection</th>
            <th>Parameters</th>
            <th>Statement</th>
            <th>Description</th>
          </tr>
        </thead>
        <tbody>
          {props.queries.map((query) => (
            <tr data-query={query.name}>
              <td data-label="Tool">
                <code>q_{query.name}</code>
              </td>
              <td data-label="Connection">{nameOf(query.connectionId)}</td>
              <td data-label="Parameters">
                {query.params.length === 0
                  ? "-"
                  : query.params.map((param) => (
                    <div>
                      <code>{paramText(param)}</code>
                    </div>
                  ))}
              </td>
              <td data-label="Statement">
                <pre class="sql">{query.sql}</pre>
              </td>
              <td data-label="Description">{query.description || "-"}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </>
  );
}
