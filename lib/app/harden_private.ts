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

import { quoteIdent } from "../db/sql/identifiers.ts";
import { privatePatterns } from "../db/private_columns.ts";
import type { Driver } from "../db/types.ts";
import {
  CATALOG,
  key,
  privateColumnsOf,
  type PrivateGrants,
  type Relation,
  STORED_FUNCTIONS,
  withheldViews,
} from "./private_grants_common.ts";
export {
  changesDatabaseSelect,
  endMysqlSessions,
  mysqlPrivateGrants,
} from "./harden_private_mysql.ts";
export { type PrivateGrants } from "./private_grants_common.ts";

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
