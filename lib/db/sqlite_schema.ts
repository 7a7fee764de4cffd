/**
 * SQLite catalog queries through the pragma table-valued functions, across
 * `main` and any attached database; the DDL is what `sqlite_schema` stores.
 *
 * @module
 */

import { quoteIdent } from "./identifiers.ts";
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
  for (const name of await schemas(exec, schema)) {
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
