/**
 * PostgreSQL catalog queries: tables, and one table's columns, indexes,
 * foreign keys and a rendered DDL.
 *
 * @module
 */

import { stringsOf } from "../protocol/jsonrpc.ts";
import { ambiguousTable } from "./errors.ts";
import { quoteIdent } from "./identifiers.ts";
import type { ColumnRow } from "./overview.ts";
import type { TableDetail, TableSummary } from "./types.ts";

type Row = Record<string, unknown>;
/** Runs one catalog statement with parameters. */
export type Exec = (text: string, params?: unknown[]) => Promise<Row[]>;

const KINDS: Readonly<Record<string, TableSummary["type"]>> = {
  r: "table",
  p: "table",
  f: "table",
  v: "view",
  m: "materialized_view",
};

const USER_SCHEMAS = `n.nspname not in ('pg_catalog', 'information_schema')
  and n.nspname not like 'pg\\_toast%' and n.nspname not like 'pg\\_temp\\_%'`;

/** Tables, views and materialized views of one schema or of every user schema. */
export async function listPostgresTables(
  exec: Exec,
  options: { schema?: string; rowCounts: boolean },
): Promise<TableSummary[]> {
  const rows = await exec(
    `select n.nspname as schema, c.relname as name, c.relkind as kind,
            c.reltuples::float8 as estimate
       from pg_class c join pg_namespace n on n.oid = c.relnamespace
      where c.relkind in ('r', 'p', 'f', 'v', 'm') and ${USER_SCHEMAS}
        and not c.relispartition
        and ($1::text is null or n.nspname = $1)
      order by n.nspname collate "C", c.relname collate "C"`,
    [options.schema ?? null],
  );
  return rows.map((row) => {
    const table: TableSummary = {
      name: String(row.name),
      schema: String(row.schema),
      type: KINDS[String(row.kind)] ?? "table",
    };
    const estimate = Number(row.estimate);
    // reltuples is -1 until the table was first analyzed: no count then.
    if (options.rowCounts && row.kind !== "v" && estimate >= 0) {
      table.rowCount = Math.round(estimate);
    }
    return table;
  });
}

const ACTIONS: Readonly<Record<string, string>> = {
  a: "NO ACTION",
  r: "RESTRICT",
  c: "CASCADE",
  n: "SET NULL",
  d: "SET DEFAULT",
};

/** One table, looked up in `schema` or along the search path. */
export async function describePostgresTable(
  exec: Exec,
  table: string,
  schema: string | undefined,
): Promise<TableDetail | null> {
  const found = await exec(
    `select c.oid::int8::text as oid, n.nspname as schema, c.relkind as kind
       from pg_class c join pg_namespace n on n.oid = c.relnamespace
      where c.relname = $1 and c.relkind in ('r', 'p', 'f', 'v', 'm')
        and ($2::text is null or n.nspname = $2) and ${USER_SCHEMAS}
      order by array_position(current_schemas(false), n.nspname::text) nulls last,
               n.nspname`,
    [table, schema ?? null],
  );
  const head = found[0];
  if (head === undefined) return null;
  if (schema === undefined && found.length > 1) {
    throw ambiguousTable(table, found.map((row) => String(row.schema)));
  }
  const oid = String(head.oid);
  const [columns, indexes, foreignKeys, constraints] = await Promise.all([
    exec(
      `select a.attname as name, format_type(a.atttypid, a.atttypmod) as type,
              not a.attnotnull as nullable,
              pg_get_expr(d.adbin, d.adrelid) as default_value,
              exists (select 1 from pg_index i where i.indrelid = a.attrelid
                       and i.indisprimary and a.attnum = any(i.indkey)) as pk
         from pg_attribute a
         left join pg_attrdef d on d.adrelid = a.attrelid and d.adnum = a.attnum
        where a.attrelid = $1::oid and a.attnum > 0 and not a.attisdropped
        order by a.attnum`,
      [oid],
    ),
    exec(
      `select ic.relname as name, i.indisunique as unique, i.indisprimary as primary,
              am.amname as method, pg_get_indexdef(i.indexrelid) as definition,
              exists (select 1 from pg_constraint k where k.conindid = i.indexrelid)
                as backs_constraint,
              array(select pg_get_indexdef(i.indexrelid, k, true)
                      from generate_series(1, i.indnatts) k order by k) as columns
         from pg_index i
         join pg_class ic on ic.oid = i.indexrelid
         join pg_am am on am.oid = ic.relam
        where i.indrelid = $1::oid
        order by ic.relname`,
      [oid],
    ),
    exec(
      `select con.conname as name, fn.nspname as ref_schema, fc.relname as ref_table,
              array(select a.attname from unnest(con.conkey) with ordinality k(n, o)
                      join pg_attribute a on a.attrelid = con.conrelid and a.attnum = k.n
                     order by k.o) as columns,
              array(select a.attname from unnest(con.confkey) with ordinality k(n, o)
                      join pg_attribute a on a.attrelid = con.confrelid and a.attnum = k.n
                     order by k.o) as ref_columns,
              con.confupdtype as on_update, con.confdeltype as on_delete
         from pg_constraint con
         join pg_class fc on fc.oid = con.confrelid
         join pg_namespace fn on fn.oid = fc.relnamespace
        where con.conrelid = $1::oid and con.contype = 'f'
        order by con.conname`,
      [oid],
    ),
    exec(
      `select conname as name, pg_get_constraintdef(oid, true) as definition
         from pg_constraint where conrelid = $1::oid
        order by case contype when 'p' then 0 when 'u' then 1 when 'f' then 2 else 3 end,
                 conname`,
      [oid],
    ),
  ]);
  const kind = String(head.kind);
  const detail: TableDetail = {
    name: table,
    schema: String(head.schema),
    type: KINDS[kind] ?? "table",
    columns: columns.map((row) => ({
      name: String(row.name),
      dataType: String(row.type),
      nullable: row.nullable === true,
      defaultValue: row.default_value === null
        ? null
        : String(row.default_value),
      primaryKey: row.pk === true,
    })),
    indexes: indexes.map((row) => ({
      name: String(row.name),
      columns: stringsOf(row.columns),
      unique: row.unique === true,
      primary: row.primary === true,
      method: String(row.method),
    })),
    foreignKeys: foreignKeys.map((row) => ({
      name: String(row.name),
      columns: stringsOf(row.columns),
      referencedSchema: String(row.ref_schema),
      referencedTable: String(row.ref_table),
      referencedColumns: stringsOf(row.ref_columns),
      onUpdate: ACTIONS[String(row.on_update)] ?? "NO ACTION",
      onDelete: ACTIONS[String(row.on_delete)] ?? "NO ACTION",
    })),
    ddl: null,
  };
  if (kind === "v" || kind === "m") {
    const [view] = await exec(
      `select pg_get_viewdef($1::oid, true) as definition`,
      [oid],
    );
    detail.ddl = `CREATE ${kind === "m" ? "MATERIALIZED " : ""}VIEW ${
      qualified(detail.schema, table)
    } AS\n${String(view?.definition ?? "").trimEnd()}`;
  } else {
    detail.ddl = renderTableDdl(detail, constraints, indexes);
  }
  return detail;
}

function qualified(schema: string, table: string): string {
  return `${quoteIdent(schema, "postgres")}.${quoteIdent(table, "postgres")}`;
}

/** CREATE TABLE from the catalog: columns, constraints, then other indexes. */
function renderTableDdl(
  detail: TableDetail,
  constraints: Row[],
  indexes: Row[],
): string {
  const lines = detail.columns.map((column) =>
    `  ${quoteIdent(column.name, "postgres")} ${column.dataType}${
      column.nullable ? "" : " NOT NULL"
    }${column.defaultValue === null ? "" : ` DEFAULT ${column.defaultValue}`}`
  );
  for (const row of constraints) {
    lines.push(
      `  CONSTRAINT ${quoteIdent(String(row.name), "postgres")} ${
        String(row.definition)
      }`,
    );
  }
  const statements = [
    `CREATE TABLE ${qualified(detail.schema, detail.name)} (\n${
      lines.join(",\n")
    }\n);`,
  ];
  for (const row of indexes) {
    if (row.backs_constraint !== true) {
      statements.push(`${String(row.definition)};`);
    }
  }
  return statements.join("\n");
}

// The relations listTables shows, with their live columns and primary key.
const RELATION_COLUMNS = `from pg_class c
       join pg_namespace n on n.oid = c.relnamespace
       join pg_attribute a on a.attrelid = c.oid and a.attnum > 0 and not a.attisdropped
       left join pg_index pk on pk.indrelid = c.oid and pk.indisprimary
      where c.relkind in ('r', 'p', 'f', 'v', 'm') and ${USER_SCHEMAS}
        and not c.relispartition`;

/**
 * The columns of every table up to and including `through` (in listTables'
 * order), so a catalog of thousands of tables is not read whole for the
 * first hundred.
 */
export async function postgresColumns(
  exec: Exec,
  schema: string | undefined,
  through: { schema: string; name: string } | null,
): Promise<ColumnRow[]> {
  if (through === null) return [];
  const rows = await exec(
    `select n.nspname as schema, c.relname as table, a.attname as name,
            format_type(a.atttypid, a.atttypmod) as data_type,
            not a.attnotnull as nullable,
            coalesce(a.attnum = any(pk.indkey), false) as primary_key
       ${RELATION_COLUMNS}
        and ($1::text is null or n.nspname = $1)
        and (n.nspname collate "C", c.relname collate "C")
            <= ($2::text collate "C", $3::text collate "C")
      order by n.nspname collate "C", c.relname collate "C", a.attnum`,
    [schema ?? null, through.schema, through.name],
  );
  return rows.map((row) => ({
    schema: String(row.schema),
    table: String(row.table),
    name: String(row.name),
    dataType: String(row.data_type),
    nullable: row.nullable === true,
    primaryKey: row.primary_key === true,
  }));
}

/**
 * MD5 of every user relation's kind and columns (name, type, nullability,
 * primary key). A relation without columns still counts, through its kind.
 */
export async function postgresFingerprint(exec: Exec): Promise<string> {
  const [row] = await exec(
    `select md5(coalesce(string_agg(concat_ws(':', n.nspname, c.relname,
              c.relkind, a.attnum, a.attname, format_type(a.atttypid, a.atttypmod),
              a.attnotnull, pk.indkey::text),
              ',' order by n.nspname, c.relname, a.attnum), '')) as fingerprint
       ${
      RELATION_COLUMNS.replace("join pg_attribute", "left join pg_attribute")
    }`,
  );
  return String(row?.fingerprint ?? "");
}
