/**
 * The Schema page (docs/console.md "Schema"): a connection's schemas, the
 * tables and views of one (filtered as you type, paged like `list_tables`,
 * with approximate row counts), and a table's columns, types, nullability,
 * defaults, comments, enum values, indexes and foreign keys — each foreign
 * key a link to the table it references — with a "Query" button that opens
 * the Query page on `SELECT * FROM … LIMIT 100` (posted, never in a URL).
 *
 * @module
 */

import type { SavedConnection } from "../../app/connections.ts";
import type {
  SchemaList,
  TableDetail,
  TableKey,
  TablePage,
} from "../../db/types.ts";
import { at, Choice, Csrf } from "./layout.tsx";
import { type Column, Table } from "./table.tsx";

/** Where the page is. */
export interface SchemaPlace {
  connection: string;
  schema?: string;
  q?: string;
  after?: TableKey | undefined;
}

/** The page's address for a place (identifiers only, never SQL). */
export function schemaHref(place: SchemaPlace, path = "/schema"): string {
  const query = new URLSearchParams();
  query.set("connection", place.connection);
  if (place.schema !== undefined) query.set("schema", place.schema);
  if (place.q) query.set("q", place.q);
  if (place.after) {
    query.set("after_schema", place.after.schema);
    query.set("after", place.after.name);
  }
  return at(`${path}?${query}`);
}

/** The connection and filter (live: the list follows the typing). */
export function SchemaFilters(props: {
  connections: readonly SavedConnection[];
  place: SchemaPlace;
}) {
  return (
    <form class="filters" method="get" action={at("/schema")} data-live>
      <Choice
        label="Connection"
        name="connection"
        options={props.connections.map((c) => [c.id, c.name] as const)}
        current={props.place.connection}
      />
      {props.place.schema === undefined
        ? null
        : <input type="hidden" name="schema" value={props.place.schema} />}
      <label>
        Filter tables
        <input
          type="search"
          name="q"
          id="schema-filter"
          value={props.place.q ?? ""}
          placeholder="orders"
          autocomplete="off"
        />
      </label>
      <noscript>
        <button type="submit">Filter</button>
      </noscript>
    </form>
  );
}

/** The schemas, the chosen one's tables, a page at a time. */
export function SchemaBrowser(props: {
  place: SchemaPlace;
  schemas: SchemaList;
  page: TablePage | null;
  pageSize: number;
}) {
  const { place } = props;
  return (
    <div class="schema-browser">
      <nav class="schemas" aria-label="Schemas">
        <h2>Schemas</h2>
        <ul>
          {props.schemas.schemas.map((schema) => (
            <li>
              <a
                href={schemaHref({
                  connection: place.connection,
                  schema: schema.name,
                  ...(place.q ? { q: place.q } : {}),
                })}
                aria-current={schema.name === place.schema ? "true" : undefined}
              >
                {schema.name}
              </a>{" "}
              <span class="muted">
                {schema.tables} tables, {schema.views} views
              </span>
            </li>
          ))}
        </ul>
      </nav>
      <section class="tables">
        {props.page === null ? <p class="empty">Pick a schema.</p> : (
          <TableList
            place={place}
            page={props.page}
            pageSize={props.pageSize}
          />
        )}
      </section>
    </div>
  );
}

function TableList(
  props: { place: SchemaPlace; page: TablePage; pageSize: number },
) {
  const { place, page } = props;
  const last = page.tables.at(-1);
  return (
    <>
      <h2>
        {place.schema}{" "}
        <span class="muted" id="schema-total">
          {page.total} {place.q ? "matching" : ""} tables and views
        </span>
      </h2>
      {page.tables.length === 0
        ? <p class="empty">No table or view matches.</p>
        : (
          <Table
            id="schema-tables"
            rows={page.tables}
            row={(table) => ({ "data-table": table.name })}
            columns={[
              {
                label: "Name",
                cell: (table) => (
                  <a
                    href={schemaHref({
                      connection: place.connection,
                      schema: table.schema,
                    }, "/schema/table") +
                      `&table=${encodeURIComponent(table.name)}`}
                  >
                    {table.name}
                  </a>
                ),
              },
              {
                label: "Kind",
                cell: (table) => table.type.replace("_", " "),
              },
              {
                label: "Rows (approx.)",
                headClass: "num",
                class: "num",
                cell: (table) =>
                  table.rowCount === undefined
                    ? "—"
                    : `~${table.rowCount.toLocaleString("en-US")}`,
              },
            ]}
          />
        )}
      <p class="pager">
        {place.after
          ? (
            <a href={schemaHref({ ...place, after: undefined })}>
              First page
            </a>
          )
          : null}
        {page.more && last
          ? (
            <>
              {" "}
              <a
                id="schema-next"
                href={schemaHref({
                  ...place,
                  after: { schema: last.schema, name: last.name },
                })}
              >
                Next {props.pageSize}
              </a>
            </>
          )
          : null}
      </p>
    </>
  );
}

/** One table or view, all its catalog says. */
export function TableView(props: {
  connection: SavedConnection;
  table: TableDetail;
  rowCount: number | undefined;
  csrf: string;
}) {
  const { table, connection } = props;
  const link = (schema: string, name: string) =>
    schemaHref({ connection: connection.id, schema }, "/schema/table") +
    `&table=${encodeURIComponent(name)}`;
  return (
    <>
      <p>
        <a
          href={schemaHref({ connection: connection.id, schema: table.schema })}
        >
          {connection.name} · {table.schema}
        </a>{" "}
        › <strong id="table-name">{table.name}</strong>{" "}
        <span class="muted">
          {table.type.replace("_", " ")}
          {props.rowCount === undefined
            ? ""
            : ` · ~${props.rowCount.toLocaleString("en-US")} rows`}
        </span>
      </p>
      {table.comment ? <p class="muted">{table.comment}</p> : null}
      <form method="post" action={at("/query/open")} class="inline">
        <Csrf token={props.csrf} />
        <input type="hidden" name="connection" value={connection.id} />
        <input type="hidden" name="schema" value={table.schema} />
        <input type="hidden" name="table" value={table.name} />
        <button type="submit" class="primary" id="table-query">
          Query
        </button>
      </form>
      <h2>Columns</h2>
      <div class="wide">
        <Table
          id="table-columns"
          rows={table.columns}
          row={(column) => ({ "data-column": column.name })}
          columns={COLUMN_COLUMNS}
        />
      </div>
      <h2>Indexes</h2>
      {table.indexes.length === 0
        ? <p class="muted">None.</p>
        : (
          <ul id="table-indexes">
            {table.indexes.map((index) => (
              <li>
                <code>{index.name}</code> ({index.columns.join(", ")})
                {index.primary ? " primary key" : index.unique ? " unique" : ""}
                {index.method ? ` · ${index.method}` : ""}
              </li>
            ))}
          </ul>
        )}
      <h2>Foreign keys</h2>
      {table.foreignKeys.length === 0
        ? <p class="muted">None.</p>
        : (
          <ul id="table-foreign-keys">
            {table.foreignKeys.map((key) => (
              <li>
                ({key.columns.join(", ")}) →{" "}
                <a
                  class="fk"
                  href={link(key.referencedSchema, key.referencedTable)}
                >
                  {key.referencedSchema}.{key.referencedTable}
                </a>{" "}
                ({key.referencedColumns.join(", ")})
                <span class="muted">
                  {` on delete ${key.onDelete.toLowerCase()}, on update ${key.onUpdate.toLowerCase()}`}
                </span>
              </li>
            ))}
          </ul>
        )}
    </>
  );
}

/** The Columns table's columns. */
const COLUMN_COLUMNS: Column<TableDetail["columns"][number]>[] = [
  {
    label: "Name",
    cell: (column) => (
      <>
        <code>{column.name}</code>
        {column.primaryKey ? <span class="tag">PK</span> : null}
      </>
    ),
  },
  {
    label: "Type",
    cell: (column) => (
      <>
        <code>{column.dataType}</code>
        {column.enumValues
          ? (
            <span class="muted enum">
              {` one of ${column.enumValues.join(", ")}`}
            </span>
          )
          : null}
      </>
    ),
  },
  {
    label: "Null",
    cell: (column) => column.nullable ? "null" : "not null",
  },
  {
    label: "Default",
    cell: (column) =>
      column.defaultValue === null
        ? <span class="muted">—</span>
        : <code>{column.defaultValue}</code>,
  },
  { label: "Comment", cell: (column) => column.comment ?? "" },
];
