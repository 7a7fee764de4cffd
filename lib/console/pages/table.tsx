/**
 * The one table every console page draws its rows with: a header row of
 * labels, a row per item, a cell per column. A `stack` table folds into
 * labelled cards on a narrow screen (each cell carries its column's label
 * as `data-label`, console.css).
 *
 * @example
 * ```tsx
 * import { Table } from "./table.tsx";
 *
 * const rows = [{ id: 1, name: "orders", ms: 12 }];
 * const html = String(
 *   <Table
 *     stack
 *     id="history-table"
 *     rows={rows}
 *     row={(row) => ({ "data-history": String(row.id) })}
 *     columns={[
 *       { label: "Name", cell: (row) => row.name },
 *       { label: "ms", class: "num", cell: (row) => row.ms },
 *     ]}
 *   />,
 * );
 * ```
 *
 * @module
 */

import type { Child } from "hono/jsx";

/** One column: its header and what each row shows in it. */
export interface Column<R> {
  /** The header's text; in a `stack` table each cell's `data-label`. */
  label: string;
  /** The header's content where it is more than the label. */
  head?: Child;
  /** The header cell's class. */
  headClass?: string;
  /** Each cell's class: one for all, or one by row. */
  class?: string | ((row: R) => string);
  /** Other attributes of each cell (`data-calls`, say). */
  attrs?: Record<string, string | boolean>;
  /** What the row shows in this column. */
  cell: (row: R) => Child;
}

/** The table's rows under its columns; `empty` in its place when none. */
export function Table<R>(props: {
  columns: readonly Column<R>[];
  rows: readonly R[];
  /** The row's own attributes (`data-activity`, say). */
  row?: (row: R) => Record<string, string>;
  id?: string;
  class?: string;
  /** Folds into labelled cards on a narrow screen. */
  stack?: boolean;
  /** Shown instead of the table when there is no row. */
  empty?: Child;
}) {
  if (props.rows.length === 0 && props.empty !== undefined) {
    return <>{props.empty}</>;
  }
  const tableClass = props.stack ? "stack" : props.class;
  return (
    <table class={tableClass} id={props.id}>
      <thead>
        <tr>
          {props.columns.map((column) => (
            <th class={column.headClass}>{column.head ?? column.label}</th>
          ))}
        </tr>
      </thead>
      <tbody>
        {props.rows.map((row) => (
          <tr {...(props.row?.(row) ?? {})}>
            {props.columns.map((column) => (
              <td
                data-label={props.stack && column.label !== ""
                  ? column.label
                  : undefined}
                class={typeof column.class === "function"
                  ? column.class(row)
                  : column.class}
                {...(column.attrs ?? {})}
              >
                {column.cell(row)}
              </td>
            ))}
          </tr>
        ))}
      </tbody>
    </table>
  );
}

/** The link to the next (older) page of a log's rows; none on the last. */
export function Older(props: { href: string | null }) {
  if (props.href === null) return null;
  return (
    <p class="pager">
      <a href={props.href} id="older">Older</a>
    </p>
  );
}
