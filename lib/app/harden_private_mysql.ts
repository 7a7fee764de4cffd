/**
 * The AI login's grants on MySQL/MariaDB where a connection has private
 * columns: SELECT per table and per column, since a database-level SELECT
 * cannot be narrowed (docs/security.md "Private columns").
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
export async function heldColumns(
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
export async function mysqlRelations(
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
 * Which view reads which relation's private column ("": any of a view's):
 * a view's stored definition names its tables and their columns, quoted
 * (`*` is expanded when the view is made), so one that names a table and
 * one of its private columns, or names another view, reads it.
 */
export async function mysqlViewReads(
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
