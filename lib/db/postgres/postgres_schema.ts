/**
 * PostgreSQL catalog queries: tables, and one table's columns, indexes,
 * foreign keys and a rendered DDL.
 *
 * @module
 */

import { stringsOf } from "../../protocol/jsonrpc.ts";
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

/** The user schemas the login may use, with their table and view counts. */
export async function listPostgresSchemas(exec: Exec): Promise<SchemaList> {
  const rows = await exec(
    `select n.nspname as name, n.nspname = current_schema() as current,
            count(c.oid) filter (where c.relkind in ('r', 'p', 'f')) as tables,
            count(c.oid) filter (where c.relkind in ('v', 'm')) as views
       from pg_namespace n
       left join pg_class c on c.relnamespace = n.oid
        and c.relkind in ('r', 'p', 'f', 'v', 'm') and not c.relispartition
      where ${USER_SCHEMAS} and has_schema_privilege(n.oid, 'USAGE')
      group by n.nspname
      order by n.nspname collate "C"`,
  );
  return {
    current: currentOf(rows),
    schemas: rows.map((row) => ({
      name: String(row.name),
      tables: Number(row.tables),
      views: Number(row.views),
    })),
  };
}

function currentOf(rows: readonly Row[]): string | null {
  const row = rows.find((candidate) => candidate.current === true);
  return row === undefined ? null : String(row.name);
}

// The relations list_tables shows; $1 schema, $2 pattern.
const LISTED = `from pg_class c join pg_namespace n on n.oid = c.relnamespace
      where c.relkind in ('r', 'p', 'f', 'v', 'm') and ${USER_SCHEMAS}
        and not c.relispartition
        and ($1::text is null or n.nspname = $1)
        and ($2::text is null or strpos(lower(c.relname), lower($2)) > 0)`;

/**
 * A page of the tables, views and materialized views of one schema or of
 * every user schema, and how many match: two statements, the page by its key
 * (an index range, whatever the catalog's size).
 */
export async function listPostgresTables(
  exec: Exec,
  options: TableQuery,
): Promise<TablePage> {
  const filter = [options.schema ?? null, options.pattern ?? null];
  const [rows, [count]] = await Promise.all([
    exec(
      `select n.nspname as schema, c.relname as name, c.relkind as kind,
              c.reltuples::float8 as estimate
         ${LISTED}
          and ($3::text is null or (n.nspname collate "C", c.relname collate "C")
               > ($3::text collate "C", $4::text collate "C"))
        order by n.nspname collate "C", c.relname collate "C"
        limit $5::int8`,
      [
        ...filter,
        options.after?.schema ?? null,
        options.after?.name ?? null,
        options.limit === undefined ? null : options.limit + 1,
      ],
    ),
    exec(`select count(*)::int8 as n ${LISTED}`, filter),
  ]);
  const more = options.limit !== undefined && rows.length > options.limit;
  const tables = (more ? rows.slice(0, options.limit) : rows).map((row) => {
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
  return { tables, total: Number(count?.n ?? 0), more };
}

/**
 * Tables, views and columns whose name or comment holds one of the words,
 * best first: one statement (searchSql() ranks).
 */
export async function searchPostgres(
  exec: (text: string, params: unknown[]) => Promise<Row[]>,
  search: SchemaSearch,
): Promise<SearchResult> {
  const placeholder = (index: number) => `$${index}::text`;
  return await runSearch(exec, search, {
    word: placeholder,
    plain: placeholder,
  }, (p) => {
    const schema = p(search.schema ?? null);
    const relations =
      `c.relkind in ('r', 'p', 'f', 'v', 'm') and ${USER_SCHEMAS}
       and not c.relispartition and (${schema} is null or n.nspname = ${schema})`;
    const items = `
    select n.nspname::text as schema_name, c.relname::text as table_name,
           null::text as column_name,
           case c.relkind when 'v' then 'view' when 'm' then 'materialized_view'
                else 'table' end as kind,
           null::text as data_type, d.description as comment
      from pg_class c join pg_namespace n on n.oid = c.relnamespace
      left join pg_description d on d.objoid = c.oid
       and d.classoid = 'pg_class'::regclass and d.objsubid = 0
     where ${relations}
    union all
    select n.nspname::text, c.relname::text, a.attname::text, 'column',
           format_type(a.atttypid, a.atttypmod), d.description
      from pg_class c join pg_namespace n on n.oid = c.relnamespace
      join pg_attribute a on a.attrelid = c.oid and a.attnum > 0
       and not a.attisdropped
      left join pg_description d on d.objoid = c.oid
       and d.classoid = 'pg_class'::regclass and d.objsubid = a.attnum
     where ${relations}`;
    return items;
  }, (hay, needle) => `strpos(lower(${hay}), ${needle})`);
}

const ACTIONS: Readonly<Record<string, string>> = {
  a: "NO ACTION",
  r: "RESTRICT",
  c: "CASCADE",
  n: "SET NULL",
  d: "SET DEFAULT",
};

/** The relation a name finds, nearest schema on the search path first. */
const RELATION_SQL =
  `select c.oid::int8::text as oid, n.nspname as schema, c.relkind as kind,
            obj_description(c.oid, 'pg_class') as comment
       from pg_class c join pg_namespace n on n.oid = c.relnamespace
      where c.relname = $1 and c.relkind in ('r', 'p', 'f', 'v', 'm')
        and ($2::text is null or n.nspname = $2) and ${USER_SCHEMAS}
      order by array_position(current_schemas(false), n.nspname::text) nulls last,
               n.nspname`;

/** A table's columns in order: default, primary-key flag, comment, enum labels. */
const COLUMNS_SQL =
  `select a.attname as name, format_type(a.atttypid, a.atttypmod) as type,
              not a.attnotnull as nullable,
              pg_get_expr(d.adbin, d.adrelid) as default_value,
              exists (select 1 from pg_index i where i.indrelid = a.attrelid
                       and i.indisprimary and a.attnum = any(i.indkey)) as pk,
              col_description(a.attrelid, a.attnum) as comment,
              case when t.typtype = 'e' then
                array(select e.enumlabel::text from pg_enum e
                       where e.enumtypid = t.oid order by e.enumsortorder)
              end as enum_values
         from pg_attribute a
         join pg_type t on t.oid = a.atttypid
         left join pg_attrdef d on d.adrelid = a.attrelid and d.adnum = a.attnum
        where a.attrelid = $1::oid and a.attnum > 0 and not a.attisdropped
        order by a.attnum`;

/** A table's indexes: uniqueness, method, definition, columns (expressions as written). */
const INDEXES_SQL =
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
        order by ic.relname`;

/** A table's foreign keys: their columns on both sides and their actions. */
const FOREIGN_KEYS_SQL =
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
        order by con.conname`;

/** A table's constraints as `pg_get_constraintdef` writes them, primary key first. */
const CONSTRAINTS_SQL =
  `select conname as name, pg_get_constraintdef(oid, true) as definition
         from pg_constraint where conrelid = $1::oid
        order by case contype when 'p' then 0 when 'u' then 1 when 'f' then 2 else 3 end,
                 conname`;

/** One table, looked up in `schema` or along the search path. */
export async function describePostgresTable(
  exec: Exec,
  table: string,
  schema: string | undefined,
): Promise<TableDetail | null> {
  const found = await exec(RELATION_SQL, [table, schema ?? null]);
  const head = found[0];
  if (head === undefined) return null;
  if (schema === undefined && found.length > 1) {
    throw ambiguousTable(table, found.map((row) => String(row.schema)));
  }
  const oid = String(head.oid);
  const [columns, indexes, foreignKeys, constraints] = await Promise.all([
    exec(COLUMNS_SQL, [oid]),
    exec(INDEXES_SQL, [oid]),
    exec(FOREIGN_KEYS_SQL, [oid]),
    exec(CONSTRAINTS_SQL, [oid]),
  ]);
  const kind = String(head.kind);
  const detail: TableDetail = {
    name: table,
    schema: String(head.schema),
    type: KINDS[kind] ?? "table",
    columns: columns.map(columnOf),
    indexes: indexes.map(indexOf),
    foreignKeys: foreignKeys.map(foreignKeyOf),
    comment: textOrNull(head.comment),
    ddl: null,
  };
  detail.ddl = kind === "v" || kind === "m"
    ? await viewDdl(exec, oid, detail, kind === "m")
    : renderTableDdl(detail, constraints, indexes);
  return detail;
}

function columnOf(row: Row): TableDetail["columns"][number] {
  return {
    name: String(row.name),
    dataType: String(row.type),
    nullable: row.nullable === true,
    defaultValue: row.default_value === null ? null : String(row.default_value),
    primaryKey: row.pk === true,
    comment: textOrNull(row.comment),
    enumValues: row.enum_values === null ? null : stringsOf(row.enum_values),
  };
}

function indexOf(row: Row): TableDetail["indexes"][number] {
  return {
    name: String(row.name),
    columns: stringsOf(row.columns),
    unique: row.unique === true,
    primary: row.primary === true,
    method: String(row.method),
  };
}

function foreignKeyOf(row: Row): TableDetail["foreignKeys"][number] {
  return {
    name: String(row.name),
    columns: stringsOf(row.columns),
    referencedSchema: String(row.ref_schema),
    referencedTable: String(row.ref_table),
    referencedColumns: stringsOf(row.ref_columns),
    onUpdate: ACTIONS[String(row.on_update)] ?? "NO ACTION",
    onDelete: ACTIONS[String(row.on_delete)] ?? "NO ACTION",
  };
}

/** A view's DDL, its definition as PostgreSQL prints it. */
async function viewDdl(
  exec: Exec,
  oid: string,
  detail: TableDetail,
  materialized: boolean,
): Promise<string> {
  const [view] = await exec(
    `select pg_get_viewdef($1::oid, true) as definition`,
    [oid],
  );
  return `CREATE ${materialized ? "MATERIALIZED " : ""}VIEW ${
    qualified(detail.schema, detail.name)
  } AS\n${String(view?.definition ?? "").trimEnd()}`;
}

function textOrNull(value: unknown): string | null {
  return value === null || value === undefined ? null : String(value);
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
 * Then the MD5 of the partitions' names and of each view's query: a
 * partition added later, or a view replaced by one reading other columns
 * under the same names, must move it too (the private-column re-sync,
 * server/private_sync.ts, waits on it).
 */
export async function postgresFingerprint(exec: Exec): Promise<string> {
  const [row] = await exec(
    `select md5(coalesce(string_agg(concat_ws(':', n.nspname, c.relname,
              c.relkind, a.attnum, a.attname, format_type(a.atttypid, a.atttypmod),
              a.attnotnull, pk.indkey::text),
              ',' order by n.nspname, c.relname, a.attnum), '')) || ':' ||
            (select md5(coalesce(string_agg(concat_ws(':', n.nspname, c.relname,
                      c.relkind, md5(r.ev_action::text)),
                      ',' order by n.nspname, c.relname), ''))
               from pg_class c
               join pg_namespace n on n.oid = c.relnamespace
               left join pg_rewrite r on r.ev_class = c.oid and c.relkind in ('v', 'm')
              where (c.relispartition or c.relkind in ('v', 'm'))
                and ${USER_SCHEMAS}) as fingerprint
       ${
      RELATION_COLUMNS.replace("join pg_attribute", "left join pg_attribute")
    }`,
  );
  return String(row?.fingerprint ?? "");
}
