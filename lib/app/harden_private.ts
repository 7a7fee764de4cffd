/**
 * The AI login's grants where a connection has private columns
 * (docs/security.md "Private columns"): SELECT on every other column of
 * the tables holding one, and none on the views that read one, so the
 * engine itself refuses the rest — `SELECT *`, a whole-row value
 * (`t::text`, `row_to_json(t)`), a view, a function running as the caller.
 * `harden` puts these statements in its plan; the server runs them again at
 * start and when connections.json changes (server/private_sync.ts), so a
 * new column matching a pattern becomes private.
 *
 * The grants never widen before they narrow: a table with a private column
 * never gets a table-level SELECT, not even for a moment.
 *
 * @module
 */

import { quoteIdent } from "../db/identifiers.ts";
import {
  privateMatch,
  type PrivatePattern,
  privatePatterns,
} from "../db/private_columns.ts";
import type { Driver } from "../db/types.ts";
import type { Engine } from "../db/engines.ts";

const CATALOG = {
  signal: new AbortController().signal,
  timeoutMs: 30_000,
  mode: "read" as const,
  maxRows: 1_000_000,
  maxBytes: 512 * 1024 * 1024,
  maxCellChars: 1_000_000,
};

/** What the grants keep from the AI login, and the statements that do it. */
export interface PrivateGrants {
  /** Per statement, the schema it is about (a schema dropped meanwhile is passed over). */
  statements: { sql: string; schema: string }[];
  /** `schema.table.column` of every private column found. */
  columns: string[];
  /** Views (and materialized views) withheld whole: they read a private column. */
  views: string[];
  /** Reads the AI login must be refused, to prove the grants hold. */
  mustNotRead: string[];
  /** What the grants cannot do, said to the owner. */
  notes: string[];
}

const q = (name: string) => quoteIdent(name, "postgres");

/** Relations of the database's own schemas, with their columns. */
const PG_RELATIONS = `
SELECT n.nspname, c.relname, c.relkind,
       to_json(ARRAY(SELECT a.attname FROM pg_attribute a
                      WHERE a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
                      ORDER BY a.attnum))::text AS columns
  FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
 WHERE c.relkind IN ('r','p','f','v','m')
   AND n.nspname !~ '^pg_' AND n.nspname <> 'information_schema'
 ORDER BY 1, 2`;

/**
 * Which view reads which relation's column (0: the whole row, as
 * `row_to_json(t)` in a view does): the view's rewrite rule's dependencies.
 */
const PG_VIEW_READS = `
SELECT DISTINCT vn.nspname, v.relname, tn.nspname, t.relname,
       COALESCE(a.attname, '') AS column
  FROM pg_depend d
  JOIN pg_rewrite r ON d.classid = 'pg_rewrite'::regclass AND r.oid = d.objid
  JOIN pg_class v ON v.oid = r.ev_class AND v.relkind IN ('v','m')
  JOIN pg_namespace vn ON vn.oid = v.relnamespace
  JOIN pg_class t ON d.refclassid = 'pg_class'::regclass AND t.oid = d.refobjid
  JOIN pg_namespace tn ON tn.oid = t.relnamespace
  LEFT JOIN pg_attribute a ON a.attrelid = t.oid AND a.attnum = d.refobjsubid
 WHERE t.oid <> v.oid AND t.relkind IN ('r','p','f','v','m')`;

/**
 * Inheritance and partitioning, child → parent: a parent's rows include its
 * children's, read with the parent's privileges only, and a child holds the
 * parent's columns under the same names.
 */
const PG_INHERITS = `
SELECT pn.nspname, p.relname, cn.nspname, c.relname
  FROM pg_inherits i
  JOIN pg_class p ON p.oid = i.inhparent
  JOIN pg_namespace pn ON pn.oid = p.relnamespace
  JOIN pg_class c ON c.oid = i.inhrelid
  JOIN pg_namespace cn ON cn.oid = c.relnamespace
 WHERE c.relkind IN ('r','p','f') AND p.relkind IN ('r','p','f')`;

/**
 * Views that hand on what a function reads: a materialized view keeps what
 * its functions returned when its owner refreshed it, and a view's
 * `SECURITY DEFINER` function runs as its owner — neither is asked about
 * the caller's column privileges when read.
 */
const PG_VIEW_FUNCTIONS = `
SELECT DISTINCT vn.nspname, v.relname
  FROM pg_depend d
  JOIN pg_rewrite r ON d.classid = 'pg_rewrite'::regclass AND r.oid = d.objid
  JOIN pg_class v ON v.oid = r.ev_class AND v.relkind IN ('v','m')
  JOIN pg_namespace vn ON vn.oid = v.relnamespace
  JOIN pg_proc p ON d.refclassid = 'pg_proc'::regclass AND p.oid = d.refobjid
  JOIN pg_namespace pn ON pn.oid = p.pronamespace
 WHERE pn.nspname !~ '^pg_' AND pn.nspname <> 'information_schema'
   AND (v.relkind = 'm' OR p.prosecdef)`;

/** Functions that run as their owner and read tables in SQL or PL/pgSQL. */
const PG_DEFINERS = `
SELECT n.nspname || '.' || p.proname
  FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
 WHERE p.prosecdef AND n.nspname !~ '^pg_' AND n.nspname <> 'information_schema'
 ORDER BY 1 LIMIT 20`;

interface Relation {
  schema: string;
  name: string;
  view: boolean;
  columns: string[];
}

function key(schema: string, name: string): string {
  return JSON.stringify([schema, name]);
}

/**
 * The views that read a private column, a whole row of a relation holding
 * one, or a withheld view: found again until nothing changes.
 */
function withheldViews(
  reads: { view: string; relation: string; column: string }[],
  privateOf: Map<string, Set<string>>,
): Set<string> {
  const withheld = new Set<string>();
  let changed = true;
  while (changed) {
    changed = false;
    for (const read of reads) {
      if (withheld.has(read.view)) continue;
      const hidden = privateOf.get(read.relation);
      if (
        withheld.has(read.relation) ||
        (hidden !== undefined &&
          (read.column === "" || hidden.has(read.column)))
      ) {
        withheld.add(read.view);
        changed = true;
      }
    }
  }
  return withheld;
}

/** Each relation's private columns, by relation key (only those with one). */
function privateColumnsOf(
  relations: Relation[],
  patterns: PrivatePattern[],
  engine: Engine,
): Map<string, Set<string>> {
  const found = new Map<string, Set<string>>();
  for (const r of relations) {
    const hidden = r.columns.filter((c) =>
      privateMatch(patterns, r.schema, r.name, c, engine) !== null
    );
    if (hidden.length > 0) found.set(key(r.schema, r.name), new Set(hidden));
  }
  return found;
}

/**
 * Carries each private column along inheritance: up to every ancestor (a
 * `SELECT` on the parent reads the child's rows without asking about the
 * child) and down to every descendant (the parent's entry names rows kept in
 * its partitions), where a relation of that column name exists.
 */
function inheritPrivate(
  relations: Relation[],
  privateOf: Map<string, Set<string>>,
  links: { parent: string; child: string }[],
): void {
  if (links.length === 0) return;
  const columnsOf = new Map(
    relations.map((r) => [key(r.schema, r.name), new Set(r.columns)]),
  );
  const walk = (start: string, column: string, up: boolean) => {
    const seen = new Set<string>([start]);
    const queue = [start];
    while (queue.length > 0) {
      const at = queue.shift()!;
      for (const link of links) {
        const next = up
          ? (link.child === at ? link.parent : null)
          : (link.parent === at ? link.child : null);
        if (next === null || seen.has(next)) continue;
        seen.add(next);
        queue.push(next);
        if (!columnsOf.get(next)?.has(column)) continue;
        const hidden = privateOf.get(next) ?? new Set<string>();
        hidden.add(column);
        privateOf.set(next, hidden);
      }
    }
  };
  for (const [relation, columns] of [...privateOf]) {
    for (const column of [...columns]) {
      walk(relation, column, true);
      walk(relation, column, false);
    }
  }
}

/**
 * PostgreSQL: per schema, table-level SELECT on the relations without a
 * private column (a blanket `GRANT … ON ALL TABLES` where the schema has
 * none), and on the others the REVOKE of table-level SELECT (which takes
 * the column grants with it) and SELECT on their other columns.
 */
export async function postgresPrivateGrants(
  owner: Driver,
  role: string,
  entries: readonly string[] | undefined,
): Promise<PrivateGrants> {
  const { relations, privateOf, withheld } = await postgresPrivateFacts(
    owner,
    privatePatterns(entries),
  );
  const out: PrivateGrants = {
    statements: [],
    columns: [],
    views: [],
    mustNotRead: [],
    notes: [],
  };
  postgresGrantStatements(out, relations, privateOf, withheld, q(role));
  if (privateOf.size > 0) out.notes.push(...await postgresNotes(owner));
  return out;
}

/**
 * What the PostgreSQL catalog says: every relation and its columns, the
 * private columns of each (inherited by child tables), and the views that
 * read one of them or a function (withheld).
 */
async function postgresPrivateFacts(
  owner: Driver,
  patterns: ReturnType<typeof privatePatterns>,
): Promise<{
  relations: Relation[];
  privateOf: Map<string, Set<string>>;
  withheld: Set<string>;
}> {
  const relations: Relation[] = (await owner.query(PG_RELATIONS, CATALOG)).rows
    .map(([schema, name, kind, columns]) => ({
      schema: String(schema),
      name: String(name),
      view: kind === "v" || kind === "m",
      columns: JSON.parse(String(columns)) as string[],
    }));
  const privateOf = privateColumnsOf(relations, patterns, "postgres");
  if (privateOf.size === 0) {
    return { relations, privateOf, withheld: withheldViews([], privateOf) };
  }
  inheritPrivate(
    relations,
    privateOf,
    (await owner.query(PG_INHERITS, CATALOG)).rows.map(([ps, p, cs, c]) => ({
      parent: key(String(ps), String(p)),
      child: key(String(cs), String(c)),
    })),
  );
  const reads = (await owner.query(PG_VIEW_READS, CATALOG)).rows.map(
    ([vs, v, ts, t, column]) => ({
      view: key(String(vs), String(v)),
      relation: key(String(ts), String(t)),
      column: String(column),
    }),
  );
  for (const [vs, v] of (await owner.query(PG_VIEW_FUNCTIONS, CATALOG)).rows) {
    reads.push({
      view: key(String(vs), String(v)),
      relation: STORED_FUNCTIONS,
      column: "",
    });
  }
  // A view handing on a function's reads counts as reading a private column.
  const withheld = withheldViews(
    reads,
    new Map([...privateOf, [STORED_FUNCTIONS, new Set<string>()]]),
  );
  return { relations, privateOf, withheld };
}

/**
 * The GRANTs and REVOKEs, schema by schema: a blanket grant where a schema
 * holds nothing private, else relation by relation.
 */
function postgresGrantStatements(
  out: PrivateGrants,
  relations: readonly Relation[],
  privateOf: ReadonlyMap<string, ReadonlySet<string>>,
  withheld: ReadonlySet<string>,
  to: string,
): void {
  const schemas = [...new Set(relations.map((r) => r.schema))];
  const touched = new Set(
    relations.filter((r) =>
      privateOf.has(key(r.schema, r.name)) ||
      withheld.has(key(r.schema, r.name))
    ).map((r) => r.schema),
  );
  for (const schema of schemas) {
    const add = (sql: string) => out.statements.push({ sql, schema });
    if (!touched.has(schema)) {
      add(`GRANT SELECT ON ALL TABLES IN SCHEMA ${q(schema)} TO ${to}`);
      continue;
    }
    for (const r of relations.filter((r) => r.schema === schema)) {
      const k = key(r.schema, r.name);
      const name = `${q(r.schema)}.${q(r.name)}`;
      const hidden = privateOf.get(k);
      if (withheld.has(k)) {
        add(`REVOKE SELECT ON ${name} FROM ${to}`);
        out.views.push(`${r.schema}.${r.name}`);
        out.mustNotRead.push(`SELECT 1 FROM ${name} LIMIT 0`);
      } else if (hidden === undefined) {
        add(`GRANT SELECT ON ${name} TO ${to}`);
      } else {
        add(`REVOKE SELECT ON ${name} FROM ${to}`);
        const others = r.columns.filter((c) => !hidden.has(c));
        if (others.length > 0) {
          add(`GRANT SELECT (${others.map(q).join(", ")}) ON ${name} TO ${to}`);
        }
        for (const column of hidden) {
          out.columns.push(`${r.schema}.${r.name}.${column}`);
          out.mustNotRead.push(`SELECT ${q(column)} FROM ${name} LIMIT 0`);
        }
      }
    }
  }
}

/** What the owner should know where private columns are kept: definers, later tables. */
async function postgresNotes(owner: Driver): Promise<string[]> {
  const notes: string[] = [];
  const definers = (await owner.query(PG_DEFINERS, CATALOG)).rows.map((r) =>
    String(r[0])
  );
  if (definers.length > 0) {
    notes.push(
      `Functions that run as their owner (SECURITY DEFINER) may read private columns and pass them on: ${
        definers.join(", ")
      }. Revoke EXECUTE on them from PUBLIC, or make them SECURITY INVOKER.`,
    );
  }
  notes.push(
    "A table or column added later is readable by the AI login until the next re-sync (the server re-syncs at start and when connections.json changes; harden --apply re-syncs).",
  );
  return notes;
}

/** A MySQL string literal. */
function literal(text: string): string {
  return `'${text.replaceAll("\\", "\\\\").replaceAll("'", "''")}'`;
}

const m = (name: string) => quoteIdent(name, "mysql");

/**
 * MySQL/MariaDB: a database-level SELECT cannot be narrowed (no partial
 * revokes), so where the database holds a private column the AI login gets
 * SELECT per table instead — every other column of the tables holding one,
 * nothing on the views that name such a table — and loses the
 * database-level SELECT. Without private columns it keeps (or gets back)
 * the database-level SELECT.
 */
export async function mysqlPrivateGrants(
  owner: Driver,
  account: string,
  user: string,
  host: string,
  database: string | null,
  entries: readonly string[] | undefined,
): Promise<PrivateGrants> {
  const out: PrivateGrants = {
    statements: [],
    columns: [],
    views: [],
    mustNotRead: [],
    notes: [],
  };
  const patterns = privatePatterns(entries);
  const scope = database === null ? "*.*" : `${m(database)}.*`;
  const add = (sql: string) =>
    out.statements.push({ sql, schema: database ?? "" });
  if (database === null || patterns.length === 0) {
    if (database === null && patterns.length > 0) {
      throw new Error(
        "private columns need the connection's URL to name a database (the AI login would otherwise read every database)",
      );
    }
    add(`GRANT SELECT, SHOW VIEW ON ${scope} TO ${account}`);
    return out;
  }
  const relations = await mysqlRelations(owner, database);
  const privateOf = privateColumnsOf(
    [...relations.values()],
    patterns,
    "mysql",
  );
  if (privateOf.size === 0) {
    add(`GRANT SELECT, SHOW VIEW ON ${scope} TO ${account}`);
    return out;
  }
  const reads = await mysqlViewReads(owner, database, relations, privateOf);
  // A view calling a stored function counts as reading a private column.
  const withheld = withheldViews(
    reads,
    new Map([...privateOf, [STORED_FUNCTIONS, new Set<string>()]]),
  );
  const granted = async (table: string, privileges: string) =>
    (await owner.query(
      `SELECT 1 FROM information_schema.${table}
        WHERE grantee = ${literal(`'${user}'@'${host}'`)}
          AND table_schema = ${literal(database)} AND privilege_type = 'SELECT'
          ${privileges}`,
      CATALOG,
    )).rows.length > 0;
  add(`GRANT SHOW VIEW ON ${scope} TO ${account}`);
  if (await granted("schema_privileges", "")) {
    add(`REVOKE SELECT ON ${scope} FROM ${account}`);
  }
  for (const r of relations.values()) {
    const k = key(database, r.name);
    const name = `${m(database)}.${m(r.name)}`;
    const hidden = privateOf.get(k);
    const tableGrant = () =>
      granted("table_privileges", `AND table_name = ${literal(r.name)}`);
    if (withheld.has(k)) {
      if (await tableGrant()) add(`REVOKE SELECT ON ${name} FROM ${account}`);
      out.views.push(`${database}.${r.name}`);
      out.mustNotRead.push(`SELECT 1 FROM ${name} LIMIT 0`);
    } else if (hidden === undefined) {
      add(`GRANT SELECT ON ${name} TO ${account}`);
    } else {
      if (await tableGrant()) add(`REVOKE SELECT ON ${name} FROM ${account}`);
      const held = await heldColumns(owner, user, host, database, r.name);
      const revoke = [...hidden].filter((c) => held.has(c));
      if (revoke.length > 0) {
        add(
          `REVOKE SELECT (${
            revoke.map(m).join(", ")
          }) ON ${name} FROM ${account}`,
        );
      }
      const others = r.columns.filter((c) => !hidden.has(c));
      if (others.length > 0) {
        add(
          `GRANT SELECT (${others.map(m).join(", ")}) ON ${name} TO ${account}`,
        );
      }
      for (const column of hidden) {
        out.columns.push(`${database}.${r.name}.${column}`);
        out.mustNotRead.push(`SELECT ${m(column)} FROM ${name} LIMIT 0`);
      }
    }
  }
  out.notes.push(
    `The AI login now reads ${database} table by table: a table added later is not readable by it until the next re-sync (the server re-syncs at start and when connections.json changes; harden --apply re-syncs).`,
  );
  return out;
}

/** The columns of `table` the account holds a column-level SELECT on. */
async function heldColumns(
  owner: Driver,
  user: string,
  host: string,
  database: string,
  table: string,
): Promise<Set<string>> {
  const columnGrants = await owner.query(
    `SELECT column_name FROM information_schema.column_privileges
      WHERE grantee = ${literal(`'${user}'@'${host}'`)}
        AND table_schema = ${literal(database)}
        AND table_name = ${literal(table)} AND privilege_type = 'SELECT'`,
    CATALOG,
  );
  return new Set(columnGrants.rows.map((row) => String(row[0])));
}

/** The database's tables and views, with their columns, by name. */
async function mysqlRelations(
  owner: Driver,
  database: string,
): Promise<Map<string, Relation>> {
  const columns = (await owner.query(
    `SELECT c.table_name, t.table_type, c.column_name
       FROM information_schema.columns c
       JOIN information_schema.tables t
         ON t.table_schema = c.table_schema AND t.table_name = c.table_name
      WHERE c.table_schema = ${literal(database)}
      ORDER BY c.table_name, c.ordinal_position`,
    CATALOG,
  )).rows;
  const relations = new Map<string, Relation>();
  for (const [table, type, column] of columns) {
    const name = String(table);
    const r = relations.get(name) ?? {
      schema: database,
      name,
      view: String(type) === "VIEW",
      columns: [],
    };
    r.columns.push(String(column));
    relations.set(name, r);
  }
  return relations;
}

/**
 * What a view handing on a function's reads reads (PostgreSQL: a
 * materialized view or a SECURITY DEFINER function, PG_VIEW_FUNCTIONS;
 * MySQL: any stored function, {@linkcode mysqlViewReads}):
 * a `SQL SECURITY DEFINER` view runs the function as its definer, so the
 * function may read a private column the AI login could not (its body is
 * not the view's definition, and may call other functions): such a view is
 * withheld whatever the function does.
 */
const STORED_FUNCTIONS = key("", "stored functions");

/**
 * Which view reads which relation's private column ("": any of a view's):
 * a view's stored definition names its tables and their columns, quoted
 * (`*` is expanded when the view is made), so one that names a table and
 * one of its private columns, or names another view, reads it.
 */
async function mysqlViewReads(
  owner: Driver,
  database: string,
  relations: Map<string, Relation>,
  privateOf: Map<string, Set<string>>,
): Promise<{ view: string; relation: string; column: string }[]> {
  const definitions = (await owner.query(
    `SELECT table_name, view_definition FROM information_schema.views
      WHERE table_schema = ${literal(database)}`,
    CATALOG,
  )).rows.map(([v, d]) => ({ view: String(v), text: String(d).toLowerCase() }));
  const named = (text: string, name: string) =>
    text.includes(`\`${name.toLowerCase()}\``);
  const functions = (await owner.query(
    `SELECT DISTINCT routine_name FROM information_schema.routines
      WHERE routine_type = 'FUNCTION'
        AND routine_schema NOT IN ('mysql', 'sys', 'information_schema', 'performance_schema')`,
    CATALOG,
  )).rows.map(([name]) => String(name).toLowerCase());
  const reads: { view: string; relation: string; column: string }[] = [];
  for (const { view, text } of definitions) {
    if (functions.some((f) => text.includes(`\`${f}\`(`))) {
      reads.push({
        view: key(database, view),
        relation: STORED_FUNCTIONS,
        column: "",
      });
    }
    for (const r of relations.values()) {
      if (r.name === view || !named(text, r.name)) continue;
      const relation = key(database, r.name);
      const columns = r.view
        ? [""]
        : [...privateOf.get(relation) ?? []].filter((c) => named(text, c));
      for (const column of columns) {
        reads.push({ view: key(database, view), relation, column });
      }
    }
  }
  return reads;
}

/**
 * MariaDB/MySQL: end the AI login's open sessions after its database-level
 * SELECT changed — the server applies a database-level grant or revoke to a
 * session only at its next `USE`, so a session opened before would keep
 * reading what was just made private. Table and column grants apply at
 * once. Returns what could not be done (the saved login may lack PROCESS or
 * CONNECTION ADMIN), or null.
 */
export async function endMysqlSessions(
  owner: Driver,
  user: string,
): Promise<string | null> {
  try {
    const sessions = (await owner.query(
      `SELECT id FROM information_schema.processlist WHERE user = ${
        literal(user)
      } AND id <> CONNECTION_ID()`,
      CATALOG,
    )).rows.map((row) => Number(row[0]));
    for (const id of sessions) {
      await owner.query(`KILL CONNECTION ${id}`, {
        ...CATALOG,
        mode: "write",
      }).catch((error: unknown) => {
        // A session that ended meanwhile is what was wanted.
        if (!/Unknown thread id/i.test(String(error))) throw error;
      });
    }
    return null;
  } catch (error) {
    return `the AI login's open sessions could not be ended (${
      error instanceof Error ? error.message : String(error)
    }); sessions opened before keep the old database-level grant until they reconnect`;
  }
}

/** Whether a MySQL grant statement changes a database-level SELECT. */
export function changesDatabaseSelect(sql: string): boolean {
  return /^(GRANT|REVOKE) SELECT(, SHOW VIEW)? ON (`[^`]+`|\*)\.\* /.test(sql);
}
