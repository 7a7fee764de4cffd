/**
 * SQLite catalog queries through the pragma table-valued functions, across
 * `main` and any attached database; the DDL is what `sqlite_schema` stores.
 *
 * @module
 */

import { ambiguousTable } from "../errors.ts";
import { quoteIdent } from "../sql/identifiers.ts";
import { assembleOverview, type ColumnRow, digest } from "../overview.ts";
import { runSearch } from "../schema_search.ts";
import type {
  CallOptions,
  Driver,
  SchemaList,
  SchemaOverview,
  SchemaSearch,
  SchemaSummary,
  SearchResult,
  TableDetail,
  TablePage,
  TableQuery,
  TableSummary,
} from "../types.ts";

type Row = Record<string, unknown>;
/** Runs one catalog statement with parameters. */
export type Exec = (text: string, params?: unknown[]) => Promise<Row[]>;

/** A driver's catalog calls (Driver), all through these catalog queries. */
export type SqliteCatalog = Pick<
  Driver,
  | "listSchemas"
  | "listTables"
  | "searchSchema"
  | "describeTable"
  | "overview"
  | "fingerprint"
>;

/**
 * The catalog calls of a SQLite driver, local or remote, over `exec` (the
 * call's statements with its options), in `only` where the database has
 * nothing but it (remote libSQL: `main`).
 */
export function sqliteCatalog(
  exec: (options: CallOptions) => Exec,
  only?: string,
): SqliteCatalog {
  return {
    listSchemas: (options) => listSqliteSchemas(exec(options), only),
    listTables: (options) => listSqliteTables(exec(options), options, only),
    searchSchema: (options) => searchSqlite(exec(options), options, only),
    describeTable: (table, options) =>
      describeSqliteTable(exec(options), table, options.schema),
    overview: (options) => sqliteOverview(exec(options), options, only),
    fingerprint: async (options) =>
      digest(await sqliteSchemaText(exec(options))),
  };
}

async function schemas(exec: Exec, only?: string): Promise<string[]> {
  const rows = await exec("select name from pragma_database_list order by seq");
  const names = rows.map((row) => String(row.name)).filter((name) =>
    name !== "temp"
  );
  return only === undefined ? names : names.filter((name) => name === only);
}

/** The databases (`main`, then attached ones), with their table and view counts. */
export async function listSqliteSchemas(
  exec: Exec,
  only?: string,
): Promise<SchemaList> {
  const names = await schemas(exec, only);
  const list: SchemaSummary[] = [];
  for (const schema of names) {
    const [row] = await exec(
      `select count(case when type = 'table' then 1 end) as tables,
              count(case when type = 'view' then 1 end) as views
         from ${quoteIdent(schema, "sqlite")}.sqlite_schema
        where type in ('table', 'view') and ${NOT_INTERNAL}`,
    );
    list.push({
      name: schema,
      tables: Number(row?.tables ?? 0),
      views: Number(row?.views ?? 0),
    });
  }
  return { current: names.includes("main") ? "main" : null, schemas: list };
}

const NOT_INTERNAL = "name not like 'sqlite\\_%' escape '\\'";

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/**
 * A page of the tables and views, in attach order, then by name; SQLite
 * counts rows exactly (it keeps no statistics), so only the page's tables
 * are counted. The names are read in-process, which costs no round trip.
 */
export async function listSqliteTables(
  exec: Exec,
  options: TableQuery,
  only?: string,
): Promise<TablePage> {
  const pattern = options.pattern?.toLowerCase();
  const matched: TableSummary[] = [];
  const order = await schemas(exec, options.schema ?? only);
  for (const schema of order) {
    const rows = await exec(
      `select name, type from ${quoteIdent(schema, "sqlite")}.sqlite_schema
        where type in ('table', 'view') and ${NOT_INTERNAL}`,
    );
    const names = rows.map((row): TableSummary => ({
      name: String(row.name),
      schema,
      type: row.type === "view" ? "view" : "table",
    })).filter((table) =>
      pattern === undefined || table.name.toLowerCase().includes(pattern)
    ).sort((x, y) => compare(x.name, y.name));
    matched.push(...names);
  }
  const after = options.after;
  const rank = (schema: string) => {
    const index = order.indexOf(schema);
    return index < 0 ? order.length : index;
  };
  const start = after === undefined
    ? 0
    : matched.findIndex((table) =>
      (rank(table.schema) - rank(after.schema) ||
        compare(table.name, after.name)) > 0
    );
  const from = start < 0 ? matched.length : start;
  const end = options.limit === undefined
    ? matched.length
    : Math.min(matched.length, from + options.limit);
  const tables = matched.slice(from, end);
  if (options.rowCounts) {
    for (const table of tables) {
      if (table.type !== "table") continue;
      const [count] = await exec(
        `select count(*) as n from ${quoteIdent(table.schema, "sqlite")}.${
          quoteIdent(table.name, "sqlite")
        }`,
      );
      table.rowCount = Number(count?.n ?? 0);
    }
  }
  return { tables, total: matched.length, more: end < matched.length };
}

/**
 * Tables, views and columns matching a search, best first: one statement
 * over every database's `sqlite_schema` and `pragma_table_xinfo`.
 */
export async function searchSqlite(
  exec: Exec,
  search: SchemaSearch,
  only?: string,
): Promise<SearchResult> {
  const names = await schemas(exec, search.schema ?? only);
  if (names.length === 0) return { matches: [], total: 0 };
  const placeholder = () => "?";
  return await runSearch(exec, search, {
    word: placeholder,
    plain: placeholder,
  }, (p) =>
    names.map((schema) => {
      const quoted = quoteIdent(schema, "sqlite");
      return `select ${p(schema)} as schema_name, m.name as table_name,
           null as column_name, m.type as kind, null as data_type,
           null as comment
      from ${quoted}.sqlite_schema m
     where m.type in ('table', 'view') and m.${NOT_INTERNAL}
    union all
    select ${p(schema)}, m.name, c.name, 'column', c.type, null
      from ${quoted}.sqlite_schema m
      join pragma_table_xinfo(m.name, ${p(schema)}) c
     where m.type in ('table', 'view') and m.${NOT_INTERNAL} and c.hidden != 1`;
    }).join(" union all "), (hay, needle) => `instr(lower(${hay}), ${needle})`);
}

/** One table or view, in `schema` or the first database that has it. */
export async function describeSqliteTable(
  exec: Exec,
  table: string,
  schema: string | undefined,
): Promise<TableDetail | null> {
  const searched = await schemas(exec, schema);
  if (schema === undefined && searched.length > 1) {
    const holding: string[] = [];
    for (const name of searched) {
      const [hit] = await exec(
        `select 1 as hit from ${
          quoteIdent(name, "sqlite")
        }.sqlite_schema where name = ? and type in ('table', 'view')`,
        [table],
      );
      if (hit !== undefined) holding.push(name);
    }
    if (holding.length > 1) throw ambiguousTable(table, holding);
  }
  for (const name of searched) {
    const detail = await describeIn(exec, table, name);
    if (detail !== null) return detail;
  }
  return null;
}

/** `table` in the database `name`, or null when it has none. */
async function describeIn(
  exec: Exec,
  table: string,
  name: string,
): Promise<TableDetail | null> {
  const quoted = quoteIdent(name, "sqlite");
  const [head] = await exec(
    `select type, sql from ${quoted}.sqlite_schema
      where name = ? and type in ('table', 'view')`,
    [table],
  );
  if (head === undefined) return null;
  const columns = await exec(
    "select * from pragma_table_xinfo(?, ?) order by cid",
    [table, name],
  );
  const indexSql = await exec(
    `select sql from ${quoted}.sqlite_schema
      where type in ('index', 'trigger') and tbl_name = ? and sql is not null
      order by type, name`,
    [table],
  );
  return {
    name: table,
    schema: name,
    type: head.type === "view" ? "view" : "table",
    columns: columns
      .filter((column) => Number(column.hidden) !== 1)
      .map(columnOf),
    indexes: await indexesOf(exec, table, name, columns),
    comment: null,
    foreignKeys: await foreignKeysOf(exec, table, name),
    ddl: [head.sql, ...indexSql.map((row) => row.sql)]
      .filter((sql) => sql !== null && sql !== undefined)
      .map((sql) => `${String(sql)};`)
      .join("\n"),
  };
}

function columnOf(column: Row): TableDetail["columns"][number] {
  return {
    name: String(column.name),
    dataType: String(column.type ?? ""),
    nullable: Number(column.notnull) === 0 && Number(column.pk) === 0,
    defaultValue: column.dflt_value === null ? null : String(column.dflt_value),
    primaryKey: Number(column.pk) > 0,
    // SQLite keeps no comments, and has no enum type.
    comment: null,
    enumValues: null,
  };
}

/** The table's indexes, the rowid first where the primary key is the rowid. */
async function indexesOf(
  exec: Exec,
  table: string,
  name: string,
  columns: readonly Row[],
): Promise<TableDetail["indexes"]> {
  const indexList = await exec("select * from pragma_index_list(?, ?)", [
    table,
    name,
  ]);
  const indexes: TableDetail["indexes"] = [];
  for (const index of indexList) {
    const parts = await exec(
      "select name from pragma_index_info(?, ?) order by seqno",
      [index.name, name],
    );
    indexes.push({
      name: String(index.name),
      columns: parts.map((part) => String(part.name)),
      unique: Number(index.unique) === 1,
      primary: index.origin === "pk",
      method: "btree",
    });
  }
  const primaryColumns = columns
    .filter((column) => Number(column.pk) > 0)
    .sort((a, b) => Number(a.pk) - Number(b.pk))
    .map((column) => String(column.name));
  if (primaryColumns.length > 0 && !indexes.some((index) => index.primary)) {
    // INTEGER PRIMARY KEY is the rowid itself: no separate index.
    indexes.unshift({
      name: "PRIMARY KEY (rowid)",
      columns: primaryColumns,
      unique: true,
      primary: true,
      method: "rowid",
    });
  }
  return indexes;
}

/** The table's foreign keys, a key of several columns as one entry. */
async function foreignKeysOf(
  exec: Exec,
  table: string,
  name: string,
): Promise<TableDetail["foreignKeys"]> {
  const keys = await exec(
    "select * from pragma_foreign_key_list(?, ?) order by id, seq",
    [table, name],
  );
  const byId = new Map<number, TableDetail["foreignKeys"][number]>();
  for (const key of keys) {
    const id = Number(key.id);
    const entry = byId.get(id) ?? {
      name: `fk_${table}_${id}`,
      columns: [],
      referencedSchema: name,
      referencedTable: String(key.table),
      referencedColumns: [],
      onUpdate: String(key.on_update),
      onDelete: String(key.on_delete),
    };
    entry.columns.push(String(key.from));
    entry.referencedColumns.push(key.to === null ? "" : String(key.to));
    byId.set(id, entry);
  }
  return [...byId.values()];
}

/** The columns of every table and view of the given databases (`main`, attached). */
export async function sqliteColumns(
  exec: Exec,
  only?: string,
): Promise<ColumnRow[]> {
  const columns: ColumnRow[] = [];
  for (const schema of await schemas(exec, only)) {
    const rows = await exec(
      `select m.name as tbl, p.name, p.type, p."notnull" as not_null, p.pk
         from ${quoteIdent(schema, "sqlite")}.sqlite_schema m
         join pragma_table_xinfo(m.name, ?) p
        where m.type in ('table', 'view')
          and m.name not like 'sqlite\\_%' escape '\\' and p.hidden != 1
        order by m.name, p.cid`,
      [schema],
    );
    for (const row of rows) {
      columns.push({
        schema,
        table: String(row.tbl),
        name: String(row.name),
        dataType: String(row.type ?? ""),
        nullable: Number(row.not_null) === 0 && Number(row.pk) === 0,
        primaryKey: Number(row.pk) > 0,
      });
    }
  }
  return columns;
}

/**
 * The first `maxTables` tables with their columns (Driver.overview), in
 * `only` where the database has nothing but it (remote libSQL: `main`).
 */
export async function sqliteOverview(
  exec: Exec,
  options: { schema?: string; maxTables: number },
  only?: string,
): Promise<SchemaOverview> {
  const page = await listSqliteTables(exec, {
    rowCounts: false,
    limit: options.maxTables,
    ...(options.schema === undefined ? {} : { schema: options.schema }),
  }, only);
  const columns = await sqliteColumns(exec, only ?? options.schema);
  return assembleOverview(page, options.maxTables, columns);
}

/**
 * What every database's `sqlite_schema` says, as one text: SQLite keeps each
 * object's CREATE statement there, so any change to a table shows in it.
 */
export async function sqliteSchemaText(exec: Exec): Promise<string> {
  const parts: string[] = [];
  for (const schema of await schemas(exec)) {
    const rows = await exec(
      `select type, name, sql from ${quoteIdent(schema, "sqlite")}.sqlite_schema
        order by type, name`,
    );
    parts.push(
      schema,
      ...rows.map((row) => `${row.type}\u001f${row.name}\u001f${row.sql}`),
    );
  }
  return parts.join("\u001e");
}
