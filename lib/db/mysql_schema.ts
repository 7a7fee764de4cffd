/**
 * MySQL/MariaDB catalog queries over information_schema, and the DDL from
 * `SHOW CREATE`.
 *
 * @module
 */

import { ambiguousTable } from "./errors.ts";
import { quoteIdent } from "./identifiers.ts";
import type { ColumnRow } from "./overview.ts";
import type { TableDetail, TableSummary } from "./types.ts";

type Row = Record<string, unknown>;
/** Runs one catalog statement with parameters. */
export type Exec = (text: string, params: unknown[]) => Promise<Row[]>;

const SYSTEM_SCHEMAS =
  "('mysql', 'information_schema', 'performance_schema', 'sys')";

// Without a schema: the connection's database, or every user schema when the
// URL names none.
const SCHEMA_FILTER = `(
  (? is not null and table_schema = ?) or
  (? is null and (table_schema = database() or
    (database() is null and table_schema not in ${SYSTEM_SCHEMAS}))))`;

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function typeOf(tableType: unknown): TableSummary["type"] {
  return /VIEW/.test(String(tableType)) ? "view" : "table";
}

/** Tables and views of one schema (default: the connection's database). */
export async function listMysqlTables(
  exec: Exec,
  options: { schema?: string; rowCounts: boolean },
): Promise<TableSummary[]> {
  const schema = options.schema ?? null;
  const rows = await exec(
    `select table_schema as \`schema\`, table_name as name,
            table_type as type, table_rows as estimate
       from information_schema.tables
      where ${SCHEMA_FILTER}
      order by table_schema, table_name`,
    [schema, schema, schema],
  );
  // information_schema orders by collation; every driver orders by code unit.
  rows.sort((a, b) =>
    compare(String(a.schema), String(b.schema)) ||
    compare(String(a.name), String(b.name))
  );
  return rows.map((row) => {
    const table: TableSummary = {
      name: String(row.name),
      schema: String(row.schema),
      type: typeOf(row.type),
    };
    if (options.rowCounts && row.estimate !== null && table.type === "table") {
      table.rowCount = Number(row.estimate);
    }
    return table;
  });
}

/** One table, in `schema` or the connection's database. */
export async function describeMysqlTable(
  exec: Exec,
  table: string,
  schema: string | undefined,
): Promise<TableDetail | null> {
  const found = await exec(
    `select table_schema as \`schema\`, table_type as type
       from information_schema.tables
      where table_name = ? and ${SCHEMA_FILTER}
      order by table_schema`,
    [table, schema ?? null, schema ?? null, schema ?? null],
  );
  const head = found[0];
  if (head === undefined) return null;
  if (schema === undefined && found.length > 1) {
    throw ambiguousTable(table, found.map((row) => String(row.schema)));
  }
  const where = [String(head.schema), table];
  const [columns, indexes, foreignKeys, ddl] = await Promise.all([
    exec(
      `select column_name as name, column_type as type, is_nullable as nullable,
              column_default as default_value, column_key as \`key\`
         from information_schema.columns
        where table_schema = ? and table_name = ?
        order by ordinal_position`,
      where,
    ),
    exec(
      `select index_name as name, non_unique, column_name as \`column\`,
              index_type as method
         from information_schema.statistics
        where table_schema = ? and table_name = ?
        order by index_name, seq_in_index`,
      where,
    ),
    exec(
      `select k.constraint_name as name, k.column_name as \`column\`,
              k.referenced_table_schema as ref_schema,
              k.referenced_table_name as ref_table,
              k.referenced_column_name as ref_column,
              r.update_rule as on_update, r.delete_rule as on_delete
         from information_schema.key_column_usage k
         join information_schema.referential_constraints r
           on r.constraint_schema = k.constraint_schema
          and r.constraint_name = k.constraint_name
          and r.table_name = k.table_name
        where k.table_schema = ? and k.table_name = ?
          and k.referenced_table_name is not null
        order by k.constraint_name, k.ordinal_position`,
      where,
    ),
    exec(
      `show create table ${quoteIdent(where[0]!, "mysql")}.${
        quoteIdent(table, "mysql")
      }`,
      [],
    ),
  ]);
  const byIndex = new Map<string, TableDetail["indexes"][number]>();
  for (const row of indexes) {
    const name = String(row.name);
    const index = byIndex.get(name) ?? {
      name,
      columns: [],
      unique: Number(row.non_unique) === 0,
      primary: name === "PRIMARY",
      method: row.method === null ? null : String(row.method).toLowerCase(),
    };
    index.columns.push(String(row.column));
    byIndex.set(name, index);
  }
  const byKey = new Map<string, TableDetail["foreignKeys"][number]>();
  for (const row of foreignKeys) {
    const name = String(row.name);
    const key = byKey.get(name) ?? {
      name,
      columns: [],
      referencedSchema: String(row.ref_schema),
      referencedTable: String(row.ref_table),
      referencedColumns: [],
      onUpdate: String(row.on_update),
      onDelete: String(row.on_delete),
    };
    key.columns.push(String(row.column));
    key.referencedColumns.push(String(row.ref_column));
    byKey.set(name, key);
  }
  const create = ddl[0];
  return {
    name: table,
    schema: where[0]!,
    type: typeOf(head.type),
    columns: columns.map((row) => ({
      name: String(row.name),
      dataType: String(row.type),
      nullable: row.nullable === "YES",
      // MariaDB spells a NULL default as the text NULL.
      defaultValue: row.default_value === null || row.default_value === "NULL"
        ? null
        : String(row.default_value),
      primaryKey: row.key === "PRI",
    })),
    indexes: [...byIndex.values()],
    foreignKeys: [...byKey.values()],
    ddl: create === undefined
      ? null
      : String(create["Create Table"] ?? create["Create View"] ?? ""),
  };
}

/** The columns of every table of one schema (default: the connection's database). */
export async function mysqlColumns(
  exec: Exec,
  schema: string | undefined,
): Promise<ColumnRow[]> {
  const rows = await exec(
    `select table_schema as \`schema\`, table_name as \`table\`,
            column_name as name, column_type as type,
            is_nullable as nullable, column_key as \`key\`
       from information_schema.columns
      where ${SCHEMA_FILTER}
      order by table_schema, table_name, ordinal_position`,
    [schema ?? null, schema ?? null, schema ?? null],
  );
  return rows.map((row) => ({
    schema: String(row.schema),
    table: String(row.table),
    name: String(row.name),
    dataType: String(row.type),
    nullable: row.nullable === "YES",
    primaryKey: row.key === "PRI",
  }));
}

/**
 * A digest of the connection's tables and columns. information_schema has no
 * change counter and GROUP_CONCAT is cut at `group_concat_max_len`, so the
 * engine sums two CRC32s of every column's description and counts the rows;
 * the tables' kinds are folded in the same way.
 */
export async function mysqlFingerprint(exec: Exec): Promise<string> {
  const none = [null, null, null];
  const [[columns], [tables]] = await Promise.all([
    exec(
      `select count(*) as n,
              coalesce(sum(crc32(concat_ws(0x1f, table_schema, table_name,
                ordinal_position, column_name, column_type, is_nullable, column_key))), 0) as a,
              coalesce(bit_xor(crc32(concat_ws(0x1e, column_key, is_nullable,
                column_type, column_name, ordinal_position, table_name, table_schema))), 0) as b
         from information_schema.columns where ${SCHEMA_FILTER}`,
      none,
    ),
    exec(
      `select count(*) as n,
              coalesce(sum(crc32(concat_ws(0x1f, table_schema, table_name, table_type))), 0) as a
         from information_schema.tables where ${SCHEMA_FILTER}`,
      none,
    ),
  ]);
  return [columns?.n, columns?.a, columns?.b, tables?.n, tables?.a].map(String)
    .join(".");
}
