/**
 * MySQL/MariaDB catalog queries over information_schema, and the DDL from
 * `SHOW CREATE`.
 *
 * @module
 */

import { ambiguousTable } from "../errors.ts";
import { quoteIdent } from "../sql/identifiers.ts";
import type { ColumnRow } from "../overview.ts";
import { runSearch } from "../schema_search.ts";
import type {
  SchemaList,
  SchemaSearch,
  SearchResult,
  TableDetail,
  TablePage,
  TableQuery,
  TableSummary,
} from "../types.ts";

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

function typeOf(tableType: unknown): TableSummary["type"] {
  return /VIEW/.test(String(tableType)) ? "view" : "table";
}

/** The schemas (databases) the login can see, with their table and view counts. */
export async function listMysqlSchemas(exec: Exec): Promise<SchemaList> {
  const rows = await exec(
    `select s.schema_name as name, s.schema_name = database() as current,
            count(case when t.table_type not like '%VIEW%' then 1 end) as tables,
            count(case when t.table_type like '%VIEW%' then 1 end) as views
       from information_schema.schemata s
       left join information_schema.tables t on t.table_schema = s.schema_name
      where s.schema_name not in ${SYSTEM_SCHEMAS}
      group by s.schema_name
      order by binary s.schema_name`,
    [],
  );
  const current = rows.find((row) => Number(row.current) === 1);
  return {
    current: current === undefined ? null : String(current.name),
    schemas: rows.map((row) => ({
      name: String(row.name),
      tables: Number(row.tables),
      views: Number(row.views),
    })),
  };
}

// The tables list_tables shows: SCHEMA_FILTER, then a pattern.
const LISTED = `from information_schema.tables
      where ${SCHEMA_FILTER}
        and (? is null or locate(lower(?), lower(table_name)) > 0)`;

/**
 * A page of the tables and views of one schema (default: the connection's
 * database), ordered by code point (binary), and how many match.
 */
export async function listMysqlTables(
  exec: Exec,
  options: TableQuery,
): Promise<TablePage> {
  const schema = options.schema ?? null;
  const pattern = options.pattern ?? null;
  const filter = [schema, schema, schema, pattern, pattern];
  const after = options.after ?? null;
  const [rows, [count]] = await Promise.all([
    exec(
      `select table_schema as \`schema\`, table_name as name,
              table_type as type, table_rows as estimate
         ${LISTED}
          and (? is null or (binary table_schema, binary table_name) > (binary ?, binary ?))
        order by binary table_schema, binary table_name
        limit ${
        options.limit === undefined ? "18446744073709551615" : options.limit + 1
      }`,
      [
        ...filter,
        after?.schema ?? null,
        after?.schema ?? null,
        after?.name ?? null,
      ],
    ),
    exec(`select count(*) as n ${LISTED}`, filter),
  ]);
  const more = options.limit !== undefined && rows.length > options.limit;
  const tables = (more ? rows.slice(0, options.limit) : rows).map((row) => {
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
  return { tables, total: Number(count?.n ?? 0), more };
}

// Compared as utf8mb4 by code point: information_schema's utf8mb3 columns
// and the words' connection collation would otherwise be an illegal mix.
const bin = (column: string) =>
  `convert(${column} using utf8mb4) collate utf8mb4_bin`;

/** Tables, views and columns matching a search, best first: one statement. */
export async function searchMysql(
  exec: Exec,
  search: SchemaSearch,
): Promise<SearchResult> {
  return await runSearch(exec, search, {
    word: () => bin("?"),
    plain: () => "?",
  }, (p) => {
    const filter = () => {
      const schema = search.schema ?? null;
      return SCHEMA_FILTER.replace(/\?/g, () => p(schema));
    };
    const tables = `select ${bin("table_schema")} as schema_name,
           ${bin("table_name")} as table_name, null as column_name,
           case when table_type like '%VIEW%' then 'view' else 'table' end as kind,
           null as data_type,
           case when table_type like '%VIEW%' then null
                else ${bin("nullif(table_comment, '')")} end as comment
      from information_schema.tables where ${filter()}`;
    const columns = `select ${bin("table_schema")}, ${bin("table_name")},
           ${bin("column_name")}, 'column', ${bin("column_type")},
           ${bin("nullif(column_comment, '')")}
      from information_schema.columns where ${filter()}`;
    return `${tables} union all ${columns}`;
  }, (hay, needle) => `locate(${needle}, lower(${hay}))`);
}

/** One table, in `schema` or the connection's database. */
export async function describeMysqlTable(
  exec: Exec,
  table: string,
  schema: string | undefined,
): Promise<TableDetail | null> {
  const found = await exec(
    `select table_schema as \`schema\`, table_type as type,
            table_comment as comment
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
              column_default as default_value, column_key as \`key\`,
              column_comment as comment, data_type as base_type
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
  const create = ddl[0];
  return {
    name: table,
    schema: where[0]!,
    type: typeOf(head.type),
    columns: columns.map(columnOf),
    indexes: indexesOf(indexes),
    // A view's comment is the word VIEW.
    comment: head.comment === null || head.comment === "" ||
        typeOf(head.type) === "view"
      ? null
      : String(head.comment),
    foreignKeys: foreignKeysOf(foreignKeys),
    ddl: create === undefined
      ? null
      : String(create["Create Table"] ?? create["Create View"] ?? ""),
  };
}

/** A column of information_schema.columns as the tool describes it. */
function columnOf(row: Row): TableDetail["columns"][number] {
  return {
    name: String(row.name),
    dataType: String(row.type),
    nullable: row.nullable === "YES",
    // MariaDB spells a NULL default as the text NULL.
    defaultValue: row.default_value === null || row.default_value === "NULL"
      ? null
      : String(row.default_value),
    primaryKey: row.key === "PRI",
    comment: row.comment === null || row.comment === ""
      ? null
      : String(row.comment),
    enumValues: String(row.base_type).toLowerCase() === "enum"
      ? enumValues(String(row.type))
      : null,
  };
}

/** information_schema.statistics rows (one a column), by index. */
function indexesOf(rows: readonly Row[]): TableDetail["indexes"] {
  const byIndex = new Map<string, TableDetail["indexes"][number]>();
  for (const row of rows) {
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
  return [...byIndex.values()];
}

/** key_column_usage rows (one a column), by foreign key. */
function foreignKeysOf(rows: readonly Row[]): TableDetail["foreignKeys"] {
  const byKey = new Map<string, TableDetail["foreignKeys"][number]>();
  for (const row of rows) {
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
  return [...byKey.values()];
}

/** The values of `enum('a','b''c')`, unquoted. */
export function enumValues(columnType: string): string[] {
  const values: string[] = [];
  for (const match of columnType.matchAll(/'((?:[^'\\]|''|\\.)*)'/g)) {
    values.push(
      (match[1] ?? "").replace(/''/g, "'").replace(/\\(.)/g, "$1"),
    );
  }
  return values;
}

/**
 * The columns of every table of one schema (default: the connection's
 * database) up to and including `through`, in listMysqlTables' (binary)
 * order, so a catalog of thousands of tables is not read whole for the first
 * hundred.
 */
export async function mysqlColumns(
  exec: Exec,
  schema: string | undefined,
  through: { schema: string; name: string } | null,
): Promise<ColumnRow[]> {
  if (through === null) return [];
  const rows = await exec(
    `select table_schema as \`schema\`, table_name as \`table\`,
            column_name as name, column_type as type,
            is_nullable as nullable, column_key as \`key\`
       from information_schema.columns
      where ${SCHEMA_FILTER}
        and (binary table_schema, binary table_name) <= (binary ?, binary ?)
      order by table_schema, table_name, ordinal_position`,
    [
      schema ?? null,
      schema ?? null,
      schema ?? null,
      through.schema,
      through.name,
    ],
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
 * the tables' kinds and the views' definitions are folded in the same way.
 */
export async function mysqlFingerprint(exec: Exec): Promise<string> {
  const none = [null, null, null];
  const [[columns], [tables], [views]] = await Promise.all([
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
    // A view replaced by one reading other columns under the same names and
    // types: the private-column re-sync (server/private_sync.ts) waits on it.
    exec(
      `select coalesce(sum(crc32(concat_ws(0x1f, table_schema, table_name,
                view_definition))), 0) as a
         from information_schema.views where ${SCHEMA_FILTER}`,
      none,
    ),
  ]);
  return [columns?.n, columns?.a, columns?.b, tables?.n, tables?.a, views?.a]
    .map(String).join(".");
}
