/**
 * SQLite catalog queries through the pragma table-valued functions, across
 * `main` and any attached database; the DDL is what `sqlite_schema` stores.
 *
 * @module
 */

import { ambiguousTable } from "./errors.ts";
import { quoteIdent } from "./identifiers.ts";
import type { ColumnRow } from "./overview.ts";
import type { TableDetail, TableSummary } from "./types.ts";

type Row = Record<string, unknown>;
/** Runs one catalog statement with parameters. */
export type Exec = (text: string, params?: unknown[]) => Promise<Row[]>;

async function schemas(exec: Exec, only?: string): Promise<string[]> {
  const rows = await exec("select name from pragma_database_list order by seq");
  const names = rows.map((row) => String(row.name)).filter((name) =>
    name !== "temp"
  );
  return only === undefined ? names : names.filter((name) => name === only);
}

/** Tables and views; SQLite counts rows exactly (it keeps no statistics). */
export async function listSqliteTables(
  exec: Exec,
  options: { schema?: string; rowCounts: boolean },
): Promise<TableSummary[]> {
  const tables: TableSummary[] = [];
  for (const schema of await schemas(exec, options.schema)) {
    const rows = await exec(
      `select name, type from ${quoteIdent(schema, "sqlite")}.sqlite_schema
        where type in ('table', 'view') and name not like 'sqlite\\_%' escape '\\'
        order by name`,
    );
    for (const row of rows) {
      const table: TableSummary = {
        name: String(row.name),
        schema,
        type: row.type === "view" ? "view" : "table",
      };
      if (options.rowCounts && table.type === "table") {
        const [count] = await exec(
          `select count(*) as n from ${quoteIdent(schema, "sqlite")}.${
            quoteIdent(table.name, "sqlite")
          }`,
        );
        table.rowCount = Number(count?.n ?? 0);
      }
      tables.push(table);
    }
  }
  return tables;
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
    const quoted = quoteIdent(name, "sqlite");
    const [head] = await exec(
      `select type, sql from ${quoted}.sqlite_schema
        where name = ? and type in ('table', 'view')`,
      [table],
    );
    if (head === undefined) continue;
    const columns = await exec(
      "select * from pragma_table_xinfo(?, ?) order by cid",
      [table, name],
    );
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
        .map((column) => ({
          name: String(column.name),
          dataType: String(column.type ?? ""),
          nullable: Number(column.notnull) === 0 && Number(column.pk) === 0,
          defaultValue: column.dflt_value === null
            ? null
            : String(column.dflt_value),
          primaryKey: Number(column.pk) > 0,
        })),
      indexes,
      foreignKeys: [...byId.values()],
      ddl: [head.sql, ...indexSql.map((row) => row.sql)]
        .filter((sql) => sql !== null && sql !== undefined)
        .map((sql) => `${String(sql)};`)
        .join("\n"),
    };
  }
  return null;
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
