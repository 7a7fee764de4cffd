/**
 * What a `LOCK` may lock: tables of the connection's own database. LOCK of
 * a view locks every relation the view reads (PostgreSQL 11+): a view over
 * `pg_catalog.pg_database` had a write token's session hold a lock on the
 * cluster's shared catalog, which in ACCESS EXCLUSIVE mode stops every new
 * session of every database (outsider stop 57). dbport does not follow a
 * view for it: a LOCK names tables (plain or partitioned) only, looked up
 * in the catalog; a catalog named directly is refused by the parser
 * (pg_reach.ts `locksCatalog`).
 *
 * @module
 */

import type { PgAnalysis } from "./pg_parse.ts";

/** A catalog question's rows (pg_vet.ts `CatalogExec`: several statements, the last one's). */
type CatalogExec = (text: string) => Promise<Record<string, unknown>[]>;

/** A name as a quoted identifier (`"a""b"`). */
function quoted(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}

/**
 * Why `analysis`, a LOCK, names something other than a table, or null (not
 * a LOCK, or only tables). A name the catalog does not know is the
 * server's to refuse.
 */
export async function lockedNonTable(
  exec: CatalogExec,
  analysis: PgAnalysis,
): Promise<string | null> {
  if (analysis.kinds[0] !== "LockStmt") return null;
  const names = analysis.relations.map((relation) =>
    relation.schema === null
      ? quoted(relation.name)
      : `${quoted(relation.schema)}.${quoted(relation.name)}`
  );
  if (names.length === 0) return null;
  const json = JSON.stringify(names).replaceAll("'", "''");
  // Two statements, as every catalog question (vet_sql.ts `vetStatement`):
  // the exec answers with the last one's rows.
  const rows = await exec(
    `SELECT set_config('jit', 'off', true);
     SELECT c.oid::regclass::text AS name, c.relkind::text AS kind
       FROM json_array_elements_text('${json}'::json) AS r(name)
       JOIN pg_class c ON c.oid = to_regclass(r.name)
      WHERE c.relkind NOT IN ('r', 'p')`,
  );
  const first = rows[0];
  if (first === undefined) return null;
  return `LOCK of ${String(first.name)}, not a table (relkind ${
    String(first.kind)
  }): locking a view locks every relation it reads, the server's catalogs among them; dbport locks the database's own tables only`;
}
