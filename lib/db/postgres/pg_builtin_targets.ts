/**
 * What a statement may change by name: the database's own objects, resolved
 * through the catalog as the server will resolve them. `comment on type
 * int4`, `grant usage on type int4 to public`, `alter type int4 rename to
 * x`, `comment on operator +(int4, int4)`, `alter function md5(text)
 * leakproof`, `alter text search dictionary simple (stopwords = english)`
 * name built-ins unqualified: pg_catalog comes first on the search path, so
 * the parser's check of a written catalog schema (pg_reach.ts) never saw
 * them, and a write token changed what every session of the database sees
 * (a renamed int4 broke every later `::integer`).
 *
 * By allowlist: every object named (pg_named_objects.ts) must be one the
 * database made itself - made after initdb (OID 16384 and above), in a
 * schema of the database's own (not pg_catalog, pg_toast or
 * information_schema; `public` is the database's) and no member of an
 * extension (installed by the server's administrator, whose functions it
 * may have revoked from PUBLIC on purpose). A name the catalog does not
 * resolve is the server's to refuse, with its own error.
 *
 * @module
 */

import type { PgAnalysis, PgNamedObject } from "./pg_parse.ts";

/** A catalog question's rows (pg_vet.ts `CatalogExec`: several statements, the last one's). */
type CatalogExec = (text: string) => Promise<Record<string, unknown>[]>;

/** How a message names the statement that changes the object. */
const VERBS: Readonly<Record<string, string>> = {
  CommentStmt: "COMMENT ON",
  GrantStmt: "GRANT|REVOKE on",
  DropStmt: "DROP of",
  RenameStmt: "ALTER ... RENAME of",
  AlterObjectSchemaStmt: "ALTER ... SET SCHEMA of",
  AlterFunctionStmt: "ALTER FUNCTION|PROCEDURE|ROUTINE|AGGREGATE",
  AlterDomainStmt: "ALTER DOMAIN",
  AlterEnumStmt: "ALTER TYPE",
  AlterCollationStmt: "ALTER COLLATION",
  AlterTSDictionaryStmt: "ALTER TEXT SEARCH DICTIONARY",
  AlterTSConfigurationStmt: "ALTER TEXT SEARCH CONFIGURATION",
  AlterTableStmt: "ALTER TABLE|VIEW|TYPE",
  AlterSeqStmt: "ALTER SEQUENCE",
  CreateTrigStmt: "CREATE TRIGGER on",
  RuleStmt: "CREATE RULE on",
  CreatePolicyStmt: "CREATE POLICY on",
  AlterPolicyStmt: "ALTER POLICY on",
  IndexStmt: "CREATE INDEX on",
};

/**
 * Each named object resolved (`CASE`: a `to_reg*` function reads only the
 * text meant for it), then those that are not the database's own: made by
 * initdb, in a schema initdb made (but `public`), or an extension's member.
 */
const RESOLVE_SQL = `
WITH x AS (
  SELECT (e->>'i')::int AS i, e->>'k' AS k, e->>'t' AS t, e->>'s' AS s, e->>'n' AS n
    FROM json_array_elements($1::json) AS e
),
found AS (
  SELECT x.i, 'pg_class'::regclass AS cls, c.oid, c.relnamespace AS nsp
    FROM x JOIN pg_class c
      ON c.oid = CASE WHEN x.k = 'r' THEN to_regclass(x.t) END
  UNION ALL
  SELECT x.i, 'pg_type'::regclass, y.oid, y.typnamespace
    FROM x JOIN pg_type y
      ON y.oid = CASE WHEN x.k = 't' THEN to_regtype(x.t) END
  UNION ALL
  SELECT x.i, 'pg_proc'::regclass, p.oid, p.pronamespace
    FROM x JOIN pg_proc p
      ON p.oid = CASE WHEN x.k = 'f' THEN to_regprocedure(x.t)::oid
                      WHEN x.k = 'p' THEN to_regproc(x.t)::oid END
  UNION ALL
  SELECT x.i, 'pg_operator'::regclass, o.oid, o.oprnamespace
    FROM x JOIN pg_operator o
      ON o.oid = CASE WHEN x.k = 'o' THEN to_regoperator(x.t) END
  UNION ALL
  SELECT x.i, 'pg_collation'::regclass, c.oid, c.collnamespace
    FROM x JOIN pg_collation c ON x.k = 'c' AND c.collname = x.n
   WHERE CASE WHEN x.s IS NULL THEN pg_collation_is_visible(c.oid)
              ELSE c.collnamespace = (SELECT oid FROM pg_namespace WHERE nspname = x.s) END
  UNION ALL
  SELECT x.i, 'pg_ts_config'::regclass, g.oid, g.cfgnamespace
    FROM x JOIN pg_ts_config g ON x.k = 'g' AND g.cfgname = x.n
   WHERE CASE WHEN x.s IS NULL THEN pg_ts_config_is_visible(g.oid)
              ELSE g.cfgnamespace = (SELECT oid FROM pg_namespace WHERE nspname = x.s) END
  UNION ALL
  SELECT x.i, 'pg_ts_dict'::regclass, d.oid, d.dictnamespace
    FROM x JOIN pg_ts_dict d ON x.k = 'd' AND d.dictname = x.n
   WHERE CASE WHEN x.s IS NULL THEN pg_ts_dict_is_visible(d.oid)
              ELSE d.dictnamespace = (SELECT oid FROM pg_namespace WHERE nspname = x.s) END
  UNION ALL
  -- A schema is its own namespace here.
  SELECT x.i, 'pg_namespace'::regclass, ns.oid, ns.oid
    FROM x JOIN pg_namespace ns ON x.k = 's' AND ns.nspname = x.n
),
judged AS (
  SELECT f.i, pg_describe_object(f.cls, f.oid, 0) AS object,
         CASE WHEN f.cls <> 'pg_namespace'::regclass THEN n.nspname END AS schema,
         f.oid < 16384 AND NOT (f.cls = 'pg_namespace'::regclass AND n.nspname = 'public') AS builtin,
         n.oid < 16384 AND n.nspname <> 'public' AS catalog,
         (SELECT e.extname FROM pg_depend dep JOIN pg_extension e ON e.oid = dep.refobjid
           WHERE dep.classid = f.cls AND dep.objid = f.oid AND dep.deptype = 'e'
           LIMIT 1) AS extension
    FROM found f JOIN pg_namespace n ON n.oid = f.nsp
)
SELECT * FROM judged
 WHERE builtin OR catalog OR extension IS NOT NULL
 ORDER BY i LIMIT 1`;

const OWN_ONLY = "dbport changes the database's own objects only";

/** `path` as a `search_path` setting's value (each name quoted). */
function pathSetting(path: string[]): string {
  return path.map((name) => `"${name.replaceAll('"', '""')}"`).join(", ");
}

/** The words naming the statement that changes `object`. */
function verbOf(object: PgNamedObject): string {
  return VERBS[object.v ?? ""] ?? "The statement's change of";
}

/**
 * Why a statement changes by name an object that is not the database's
 * own, or null (it names none, or only the database's own, or names the
 * catalog does not resolve). `objects` are resolved on `path` (a SQL
 * function body's own `SET search_path`), or on the session's when null.
 */
export async function changedBuiltin(
  exec: CatalogExec,
  objects: readonly PgNamedObject[],
  path: string[] | null,
): Promise<string | null> {
  if (objects.length === 0) return null;
  const unread = objects.find((object) => object.k === "x");
  if (unread !== undefined) {
    return `${
      verbOf(unread)
    } ${unread.w} names an argument's type by a column's %TYPE, which dbport does not resolve to tell a built-in from the database's own; name the type itself`;
  }
  const json = JSON.stringify(objects.map((object, i) => ({ ...object, i })))
    .replaceAll("'", "''");
  // Two or three statements in one transaction, as every catalog question
  // (vet_sql.ts `vetStatement`): the exec answers with the last one's rows;
  // a body's search path is set for this transaction only.
  const setPath = path === null
    ? ""
    : `SELECT set_config('search_path', '${
      pathSetting(path).replaceAll("'", "''")
    }', true);`;
  const rows = await exec(
    `SELECT set_config('jit', 'off', true);${setPath}${
      RESOLVE_SQL.replace("$1::json", () => `'${json}'::json`)
    }`,
  );
  const first = rows[0];
  if (first === undefined) return null;
  const named = objects[Number(first.i)];
  const written = named?.w ?? "?";
  const verb = named === undefined
    ? "The statement's change of"
    : verbOf(named);
  const object = String(first.object);
  if (first.builtin === true || first.catalog === true) {
    const where = first.schema === null ? "" : ` of ${String(first.schema)}`;
    return `${verb} ${written} changes ${object}${where}, an object of the server's own catalogs (its privileges, comment, name and definition are every user's of the database); ${OWN_ONLY}`;
  }
  return `${verb} ${written} changes ${object}, a member of the extension ${
    String(first.extension)
  }, which the server's administrator installed (and may have kept from PUBLIC on purpose); ${OWN_ONLY}`;
}

/** A SQL function's body as the vetting reads it (pg_vet.ts `Source`). */
interface Body {
  analysis: PgAnalysis;
  /** The function's OID. */
  owner: number | undefined;
  /** Its own `SET search_path`; null or absent: the caller's. */
  path: string[] | null | undefined;
}

/**
 * Why a SQL function body changes by name an object that is not the
 * database's own (a `comment on type int4` run when the function is
 * called), resolved on the search path the body runs with; null when none
 * of `bodies` does. `nameOf` names a function by its OID.
 */
export async function bodiesChange(
  exec: CatalogExec,
  bodies: readonly Body[],
  nameOf: (oid: number) => string | undefined,
): Promise<string | null> {
  for (const body of bodies) {
    const why = await changedBuiltin(
      exec,
      body.analysis.changes ?? [],
      body.path ?? null,
    );
    if (why === null) continue;
    const name = body.owner === undefined ? undefined : nameOf(body.owner);
    return `${name ?? "a function"} runs ${why}`;
  }
  return null;
}
