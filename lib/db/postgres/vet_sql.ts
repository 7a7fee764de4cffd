/**
 * The one catalog query behind PostgreSQL's read vetting (pg_vet.ts): from the
 * names a statement (or a function body) uses, every object it reaches — the
 * candidates of each function, operator, cast and relation name on the
 * search path, then, by the exact OIDs in the server's own stored expression
 * trees (`pg_node_tree`: `:funcid`, `:opno`, `:aggfnoid`, `:relid`, …; not
 * `pg_depend`, which since PostgreSQL 15 records nothing about pinned
 * built-ins), what views, row-security policies, domain checks, SQL
 * function bodies (`BEGIN ATOMIC`) and argument defaults use, and
 * for the tables a write changes: column defaults and generated columns,
 * CHECK constraints, index expressions, rules, triggers, partitions and the
 * tables their foreign keys cascade to, and a user aggregate's support
 * functions (pg_aggregate). Built-in relations and functions are
 * not followed: a built-in function is judged by the allowlist.
 *
 * `how` says how a reached object runs: `e` the statement (or planning it)
 * evaluates it, `d` a target's column default does, `t` only a trigger or a
 * foreign key's cascade does (a dry run would, a plan would not).
 *
 * @module
 */

/** Objects below this OID were made by initdb. */
export const FIRST_USER_OID = 16384;

/**
 * The vetting statement for `input` (pg_vet.ts `VetInput`, as JSON): sent as
 * one simple query, JIT off for it alone. The planner's estimate for the
 * recursive walk passes `jit_above_cost`, and compiling it took 250-600 ms
 * where running it takes 1 ms.
 */
export function vetStatement(input: string): string {
  return `SELECT set_config('jit', 'off', true);${
    // A function, not a string: in a replacement string `$'` and `` $` ``
    // insert the query's own text, and a table named `"t$'"` made the
    // vetting query a syntax error.
    VET_SQL.replace(
      "$1::text::jsonb",
      () => `'${input.replaceAll("'", "''")}'::jsonb`,
    )}`;
}

const VET_SQL = `
WITH RECURSIVE
names AS (
  SELECT k.kind, x->>'s' AS s, x->>'n' AS n, (x->>'a')::int AS a,
         coalesce((x->>'o')::bool, false) AS optional, (x->>'i')::int AS item, (x->>'w')::oid AS owner,
         CASE WHEN jsonb_typeof(x->'p') = 'array'
              THEN ARRAY['pg_catalog'] || ARRAY(
                     SELECT CASE WHEN e = '$user' THEN current_user::text ELSE e END
                       FROM jsonb_array_elements_text(x->'p') e)
              ELSE current_schemas(true)::text[] END AS path
    FROM (VALUES ('f'), ('o'), ('c'), ('r'), ('t'), ('l')) k(kind),
         jsonb_array_elements($1::text::jsonb->k.kind) x
   -- A name newer grammars read as syntax is a call on an older server.
   WHERE x->>'v' IS NULL OR current_setting('server_version_num')::int < (x->>'v')::int
),
spaces AS (
  SELECT nm.*, ARRAY(SELECT ns.oid FROM pg_namespace ns
                      WHERE ns.nspname = ANY (CASE WHEN nm.s IS NULL THEN nm.path ELSE ARRAY[nm.s] END)) AS spaces
    FROM names nm
),
found AS (
  SELECT sp.kind, sp.item, sp.owner, 'p'::text AS cls, p.oid
    FROM spaces sp JOIN pg_proc p ON p.proname = sp.n AND p.pronamespace = ANY (sp.spaces)
   WHERE sp.kind = 'f'
     AND (sp.a IS NULL OR p.provariadic <> 0 OR sp.a BETWEEN p.pronargs - p.pronargdefaults AND p.pronargs)
  UNION ALL
  SELECT sp.kind, sp.item, sp.owner, 'o', o.oid
    FROM spaces sp JOIN pg_operator o ON o.oprname = sp.n AND o.oprnamespace = ANY (sp.spaces)
   WHERE sp.kind = 'o'
  UNION ALL
  SELECT sp.kind, sp.item, sp.owner, 'y', t.oid
    FROM spaces sp JOIN pg_type t ON t.typname = sp.n AND t.typnamespace = ANY (sp.spaces)
   WHERE sp.kind = 'c'
  UNION ALL
  SELECT sp.kind, sp.item, sp.owner, 'r', c.oid
    FROM spaces sp JOIN pg_class c ON c.relname = sp.n AND c.relnamespace = ANY (sp.spaces)
   WHERE sp.kind IN ('r', 't')
  UNION ALL
  -- An operator class an index, exclusion or partition key element names
  -- (any access method: the statement's is not looked up).
  SELECT sp.kind, sp.item, sp.owner, 'c', oc.oid
    FROM spaces sp JOIN pg_opclass oc ON oc.opcname = sp.n AND oc.opcnamespace = ANY (sp.spaces)
   WHERE sp.kind = 'l'
),
named_types AS (
  SELECT a.atttypid AS t FROM found f JOIN pg_attribute a ON a.attrelid = f.oid
   WHERE f.cls = 'r' AND a.attnum > 0 AND NOT a.attisdropped
  UNION SELECT c.reltype FROM found f JOIN pg_class c ON c.oid = f.oid WHERE f.cls = 'r'
  UNION SELECT unnest(coalesce(p.proallargtypes, p.proargtypes::oid[]) || p.prorettype) FROM found f JOIN pg_proc p ON p.oid = f.oid
   WHERE f.cls = 'p'
  UNION SELECT unnest(ARRAY[o.oprleft, o.oprright, o.oprresult]) FROM found f JOIN pg_operator o ON o.oid = f.oid
   WHERE f.cls = 'o'
  UNION SELECT f.oid FROM found f WHERE f.cls = 'y'
),
play AS (
  SELECT t FROM named_types
  UNION SELECT ty.typbasetype FROM named_types n JOIN pg_type ty ON ty.oid = n.t WHERE ty.typbasetype <> 0
  UNION SELECT ty.typelem FROM named_types n JOIN pg_type ty ON ty.oid = n.t WHERE ty.typelem <> 0
),
seeds AS (
  SELECT cls, oid, 'e'::text AS how, kind = 't' AS tgt, owner AS via FROM found
  UNION ALL
  -- A cast's function to a cast's target type: from any built-in source
  -- type (any expression may have one), from a user type only where a value
  -- of it is in play (a user cast elsewhere cannot be invoked).
  SELECT 'p', c.castfunc, 'e', false, f.owner FROM found f JOIN pg_cast c ON c.casttarget = f.oid
   WHERE f.cls = 'y' AND c.castfunc <> 0
     AND (c.castsource < ${FIRST_USER_OID} OR c.castsource IN (SELECT t FROM play))
  UNION ALL
  -- Implicit and assignment casts a user made run without being named: one
  -- between built-in types anywhere, one from or to a user type where a
  -- value of that type is in play (a named relation's column or row type,
  -- a candidate function's argument or result, an operator's operand, a cast
  -- target; their base and element types). Stored trees name the casts
  -- they apply, so only the text parsed here needs this.
  SELECT 'p', c.castfunc, 'e', false, NULL FROM pg_cast c
   WHERE c.oid >= ${FIRST_USER_OID} AND c.castcontext IN ('i', 'a') AND c.castfunc <> 0
     AND ((c.castsource < ${FIRST_USER_OID} AND c.casttarget < ${FIRST_USER_OID})
          OR (c.castsource >= ${FIRST_USER_OID} AND c.castsource IN (SELECT t FROM play))
          OR (c.casttarget >= ${FIRST_USER_OID} AND c.casttarget IN (SELECT t FROM play)))
),
edges(cls, oid, how, tgt, via) AS (
  SELECT * FROM seeds
  UNION
  SELECT x.cls, x.oid, CASE WHEN e.how = 't' THEN 't' ELSE x.how END, x.tgt,
         CASE WHEN e.cls = 'p' AND e.oid >= ${FIRST_USER_OID} THEN e.oid ELSE e.via END
    FROM edges e, LATERAL (
      -- What a user object's stored expression trees use, by OID.
      SELECT CASE WHEN m[1] = 'opno' THEN 'o' WHEN m[1] = 'relid' THEN 'r'
                  WHEN m[1] = 'resulttype' THEN 'y' ELSE 'p' END AS cls,
             m[2]::oid AS oid, s.how, s.tgt AND m[1] = 'relid' AS tgt
        FROM (
          SELECT concat(r.ev_action::text, r.ev_qual::text) AS tree, 'e' AS how, e.tgt
            FROM pg_rewrite r WHERE e.cls = 'r' AND r.ev_class = e.oid AND (r.rulename = '_RETURN' OR e.tgt)
          UNION ALL
          SELECT concat(pol.polqual::text, pol.polwithcheck::text), 'e', false
            FROM pg_policy pol WHERE e.cls = 'r' AND pol.polrelid = e.oid
          UNION ALL
          SELECT ad.adbin::text, 'd', false
            FROM pg_attrdef ad WHERE e.cls = 'r' AND e.tgt AND ad.adrelid = e.oid
          UNION ALL
          SELECT co.conbin::text, 'e', false
            FROM pg_constraint co WHERE e.cls = 'r' AND e.tgt AND co.conrelid = e.oid AND co.conbin IS NOT NULL
          UNION ALL
          SELECT concat(ix.indexprs::text, ix.indpred::text), 'e', false
            FROM pg_index ix WHERE e.cls = 'r' AND e.tgt AND ix.indrelid = e.oid
          UNION ALL
          SELECT tg.tgqual::text, 't', false
            FROM pg_trigger tg WHERE e.cls = 'r' AND e.tgt AND tg.tgrelid = e.oid AND NOT tg.tgisinternal
          UNION ALL
          SELECT co.conbin::text, 'e', false
            FROM pg_constraint co WHERE e.cls = 'y' AND co.contypid = e.oid AND co.conbin IS NOT NULL
          UNION ALL
          SELECT ty.typdefaultbin::text, 'd', false
            FROM pg_type ty WHERE e.cls = 'y' AND ty.oid = e.oid AND ty.typdefaultbin IS NOT NULL
          UNION ALL
          SELECT concat(p.prosqlbody::text, p.proargdefaults::text), 'e', false
            FROM pg_proc p WHERE e.cls = 'p' AND p.oid = e.oid
          UNION ALL
          -- A partition key's expressions (tuple routing, pruning).
          SELECT pt.partexprs::text, 'e', false
            FROM pg_partitioned_table pt WHERE e.cls IN ('r', 'k') AND pt.partrelid = e.oid
        ) s,
        regexp_matches(s.tree,
          ':(funcid|opfuncid|aggfnoid|winfnoid|hashfuncid|negfuncid|tsmhandler|opno|relid|resulttype) ([0-9]+)', 'g') m
       WHERE e.oid >= ${FIRST_USER_OID} AND m[2] <> '0'
         AND (m[1] <> 'resulttype' OR m[2]::oid >= ${FIRST_USER_OID})
      UNION ALL
      -- A row comparison's operators: ':opnos (o 96 97)'.
      SELECT 'o', n::oid, 'e', false
        FROM pg_rewrite r, regexp_matches(r.ev_action::text, ':opnos [(]o ([0-9 ]+)[)]', 'g') m,
             regexp_split_to_table(m[1], ' ') n
       WHERE e.cls = 'r' AND e.oid >= ${FIRST_USER_OID} AND r.ev_class = e.oid
      UNION ALL
      -- A trigger's function.
      SELECT 'p', tg.tgfoid, 't', false FROM pg_trigger tg
       WHERE e.cls = 'r' AND e.tgt AND tg.tgrelid = e.oid AND NOT tg.tgisinternal
      UNION ALL
      -- A table's partitions and inheritance children are read or written
      -- with it; its parents' partition keys check and route its rows ('k').
      SELECT 'r', i.inhrelid, 'e', e.tgt FROM pg_inherits i
       WHERE e.cls = 'r' AND e.oid >= ${FIRST_USER_OID} AND i.inhparent = e.oid
      UNION ALL
      SELECT 'k', i.inhparent, 'e', false FROM pg_inherits i
       WHERE e.cls IN ('r', 'k') AND e.oid >= ${FIRST_USER_OID} AND i.inhrelid = e.oid
      UNION ALL
      -- Operator classes ('c') of a table's indexes (scans and insertions
      -- call their support functions) and of its partition key (pruning at
      -- plan time, routing).
      SELECT 'c', u, 'e', false FROM pg_index ix, unnest(ix.indclass::oid[]) u
       WHERE e.cls = 'r' AND e.oid >= ${FIRST_USER_OID} AND ix.indrelid = e.oid
      UNION ALL
      SELECT 'c', u, 'e', false FROM pg_partitioned_table pt, unnest(pt.partclass::oid[]) u
       WHERE e.cls IN ('r', 'k') AND e.oid >= ${FIRST_USER_OID} AND pt.partrelid = e.oid
      UNION ALL
      -- An operator class's support functions and operators: all of a user
      -- class's family, what a user added to a built-in family.
      SELECT 'p', ap.amproc::oid, 'e', false FROM pg_opclass oc JOIN pg_amproc ap ON ap.amprocfamily = oc.opcfamily
       WHERE e.cls = 'c' AND oc.oid = e.oid AND (oc.oid >= ${FIRST_USER_OID} OR ap.oid >= ${FIRST_USER_OID})
      UNION ALL
      SELECT 'o', am.amopopr, 'e', false FROM pg_opclass oc JOIN pg_amop am ON am.amopfamily = oc.opcfamily
       WHERE e.cls = 'c' AND oc.oid = e.oid AND (oc.oid >= ${FIRST_USER_OID} OR am.oid >= ${FIRST_USER_OID})
      UNION ALL
      SELECT 'r', co.conrelid, 't', true FROM pg_constraint co
       WHERE e.cls = 'r' AND e.tgt AND co.contype = 'f' AND co.confrelid = e.oid AND co.conrelid <> e.oid
      UNION ALL
      -- Column types of a table read or written (domains check what is
      -- stored; sorting, comparing and output call the types' code).
      SELECT 'y', a.atttypid, 'e', false FROM pg_attribute a
       WHERE e.cls = 'r' AND e.oid >= ${FIRST_USER_OID} AND a.attrelid = e.oid AND a.attnum > 0
         AND NOT a.attisdropped AND a.atttypid >= ${FIRST_USER_OID}
      UNION ALL
      -- A user operator's operand and result types.
      SELECT 'y', t, 'e', false FROM pg_operator o, unnest(ARRAY[o.oprleft, o.oprright, o.oprresult]) t
       WHERE e.cls = 'o' AND e.oid >= ${FIRST_USER_OID} AND o.oid = e.oid AND t >= ${FIRST_USER_OID}
      UNION ALL
      -- A user type's own code: input/output, binary I/O, typmod, analyze,
      -- subscripting (built-in ones dispatch to what is followed here).
      SELECT 'p', f, 'e', false FROM pg_type t,
             unnest(ARRAY[t.typinput, t.typoutput, t.typreceive, t.typsend, t.typmodin, t.typmodout,
                          t.typanalyze, t.typsubscript]::oid[]) f
       WHERE e.cls = 'y' AND e.oid >= ${FIRST_USER_OID} AND t.oid = e.oid AND f >= ${FIRST_USER_OID}
      UNION ALL
      -- Its default operator classes: btree and hash ones sort and group,
      -- any method's builds an index on it without naming a class.
      SELECT 'c', oc.oid, 'e', false FROM pg_opclass oc
       WHERE e.cls = 'y' AND e.oid >= ${FIRST_USER_OID} AND oc.opcintype = e.oid AND oc.opcdefault
      UNION ALL
      -- A range type: its subtype's operator class (parsing a literal
      -- compares the bounds), canonical and subtype_diff functions, the
      -- subtype; a multirange: its range.
      SELECT 'c', r.rngsubopc, 'e', false FROM pg_range r WHERE e.cls = 'y' AND r.rngtypid = e.oid
      UNION ALL
      SELECT 'p', f, 'e', false FROM pg_range r, unnest(ARRAY[r.rngcanonical, r.rngsubdiff]::oid[]) f
       WHERE e.cls = 'y' AND r.rngtypid = e.oid AND f <> 0
      UNION ALL
      SELECT 'y', r.rngsubtype, 'e', false FROM pg_range r
       WHERE e.cls = 'y' AND r.rngtypid = e.oid AND r.rngsubtype >= ${FIRST_USER_OID}
      UNION ALL
      SELECT 'y', r.rngtypid, 'e', false FROM pg_range r WHERE e.cls = 'y' AND r.rngmultitypid = e.oid
      UNION ALL
      -- A user function's argument and result types (domains check them),
      -- its OUT and TABLE columns too (proallargtypes: its result is a
      -- record whose columns are converted to them).
      SELECT 'y', t, 'e', false FROM pg_proc p, unnest(coalesce(p.proallargtypes, p.proargtypes::oid[]) || p.prorettype) t
       WHERE e.cls = 'p' AND e.oid >= ${FIRST_USER_OID} AND p.oid = e.oid AND t >= ${FIRST_USER_OID}
      UNION ALL
      -- A user aggregate runs its support functions: transition, final,
      -- combine, serialization, the moving-aggregate ones (a window); sorts
      -- with its sort operator; its state types' code.
      SELECT 'p', f, 'e', false FROM pg_aggregate a,
             unnest(ARRAY[a.aggtransfn, a.aggfinalfn, a.aggcombinefn, a.aggserialfn, a.aggdeserialfn,
                          a.aggmtransfn, a.aggminvtransfn, a.aggmfinalfn]::oid[]) f
       WHERE e.cls = 'p' AND e.oid >= ${FIRST_USER_OID} AND a.aggfnoid = e.oid AND f <> 0
      UNION ALL
      SELECT 'o', a.aggsortop, 'e', false FROM pg_aggregate a
       WHERE e.cls = 'p' AND e.oid >= ${FIRST_USER_OID} AND a.aggfnoid = e.oid AND a.aggsortop <> 0
      UNION ALL
      SELECT 'y', t, 'e', false FROM pg_aggregate a, unnest(ARRAY[a.aggtranstype, a.aggmtranstype]) t
       WHERE e.cls = 'p' AND e.oid >= ${FIRST_USER_OID} AND a.aggfnoid = e.oid AND t >= ${FIRST_USER_OID}
      UNION ALL
      -- An operator runs its function; a domain checks its base type's domain too.
      SELECT 'p', o.oprcode::oid, 'e', false FROM pg_operator o WHERE e.cls = 'o' AND o.oid = e.oid
      UNION ALL
      -- The planner calls a user operator's selectivity estimators.
      SELECT 'p', f, 'e', false FROM pg_operator o, unnest(ARRAY[o.oprrest, o.oprjoin]::oid[]) f
       WHERE e.cls = 'o' AND e.oid >= ${FIRST_USER_OID} AND o.oid = e.oid AND f >= ${FIRST_USER_OID}
      UNION ALL
      -- A user access method's handler: a table's (relam) or an index class's.
      SELECT 'p', am.amhandler::oid, 'e', false FROM pg_class c JOIN pg_am am ON am.oid = c.relam
       WHERE e.cls = 'r' AND e.oid >= ${FIRST_USER_OID} AND c.oid = e.oid AND am.amhandler::oid >= ${FIRST_USER_OID}
      UNION ALL
      SELECT 'p', am.amhandler::oid, 'e', false FROM pg_opclass oc JOIN pg_am am ON am.oid = oc.opcmethod
       WHERE e.cls = 'c' AND oc.oid = e.oid AND am.amhandler::oid >= ${FIRST_USER_OID}
      UNION ALL
      -- The operator families a user operator belongs to ('m'): a sort by
      -- it (ORDER BY … USING, a window's, a merge join) calls its btree
      -- family's comparison support function, a hash join its hash
      -- family's, an index scan its class's (outsider stop 55).
      SELECT 'm', am.amopfamily, 'e', false FROM pg_amop am
       WHERE e.cls = 'o' AND e.oid >= ${FIRST_USER_OID} AND am.amopopr = e.oid
      UNION ALL
      -- A family's support functions and operators: all of a user
      -- family's, what a user added to a built-in one.
      SELECT 'p', ap.amproc::oid, 'e', false FROM pg_amproc ap
       WHERE e.cls = 'm' AND ap.amprocfamily = e.oid AND (e.oid >= ${FIRST_USER_OID} OR ap.oid >= ${FIRST_USER_OID})
      UNION ALL
      SELECT 'o', am.amopopr, 'e', false FROM pg_amop am
       WHERE e.cls = 'm' AND am.amopfamily = e.oid AND (e.oid >= ${FIRST_USER_OID} OR am.oid >= ${FIRST_USER_OID})
      UNION ALL
      -- The planner may swap an operator for its commutator or negator.
      SELECT 'o', u.op, 'e', false FROM pg_operator o, unnest(ARRAY[o.oprcom, o.oprnegate]) u(op)
       WHERE e.cls = 'o' AND o.oid = e.oid AND u.op <> 0
      UNION ALL
      SELECT 'y', t.typbasetype, 'e', false FROM pg_type t
       WHERE e.cls = 'y' AND t.oid = e.oid AND t.typtype = 'd' AND t.typbasetype >= ${FIRST_USER_OID}
      UNION ALL
      -- An array's element and a row type's columns are checked when a value
      -- is made of them (a cast, jsonb_populate_record).
      SELECT 'y', t.typelem, 'e', false FROM pg_type t
       WHERE e.cls = 'y' AND t.oid = e.oid AND t.typelem >= ${FIRST_USER_OID}
      UNION ALL
      SELECT 'y', a.atttypid, 'e', false FROM pg_type t JOIN pg_attribute a ON a.attrelid = t.typrelid
       WHERE e.cls = 'y' AND t.oid = e.oid AND t.typtype = 'c' AND e.oid >= ${FIRST_USER_OID}
         AND a.attnum > 0 AND NOT a.attisdropped AND a.atttypid >= ${FIRST_USER_OID}
    ) x
)
SELECT 'p' AS row, e.how, e.via, e.via::regprocedure::text AS caller, p.oid::int AS oid, p.proname AS name,
       p.oid < ${FIRST_USER_OID} AND p.pronamespace = 'pg_catalog'::regnamespace AS builtin,
       p.provolatile AS volatility, l.lanname AS language, p.prosecdef AS definer, p.prokind AS kind,
       CASE WHEN p.oid >= ${FIRST_USER_OID} OR p.pronamespace <> 'pg_catalog'::regnamespace
            THEN p.oid::regprocedure::text END AS signature,
       p.prosqlbody IS NOT NULL AS atomic,
       coalesce(p.prosqlbody::text ~ ':commandType [02-9]|:hasModifyingCTE true|:rowMarks [(]', false) AS body_writes,
       CASE WHEN l.lanname = 'sql' AND p.prosqlbody IS NULL
             AND (p.oid >= ${FIRST_USER_OID} OR p.pronamespace <> 'pg_catalog'::regnamespace)
            THEN p.prosrc END AS source,
       -- The C symbol of an internal or C function: no ALTER renames it.
       CASE WHEN l.lanname IN ('internal', 'c') THEN p.prosrc END AS symbol,
       p.proconfig AS config, NULL::text AS relkind, false AS target, NULL::int AS item,
       -- A user's LANGUAGE internal function: the built-ins whose code it runs.
       CASE WHEN l.lanname = 'internal' AND (p.oid >= ${FIRST_USER_OID} OR p.pronamespace <> 'pg_catalog'::regnamespace)
            THEN ARRAY(SELECT b.oid::int FROM pg_proc b
                        WHERE b.prosrc = p.prosrc AND b.prolang = p.prolang AND b.oid < ${FIRST_USER_OID}
                          AND b.pronamespace = 'pg_catalog'::regnamespace) END AS symbol_of
  FROM (SELECT DISTINCT oid, how, via FROM edges WHERE cls = 'p') e
  JOIN pg_proc p ON p.oid = e.oid JOIN pg_language l ON l.oid = p.prolang
UNION ALL
SELECT 'r', CASE WHEN bool_or(e.how = 'e') THEN 'e' ELSE 't' END, NULL, NULL, c.oid::int,
       n.nspname || '.' || c.relname, false, NULL, NULL, false, NULL, NULL, false, false, NULL, NULL, NULL,
       c.relkind::text || CASE WHEN bool_or(e.tgt) AND EXISTS (
              SELECT FROM pg_rewrite r WHERE r.ev_class = c.oid AND r.rulename <> '_RETURN') THEN 'R' ELSE '' END,
       bool_or(e.tgt), NULL, NULL
  FROM edges e JOIN pg_class c ON c.oid = e.oid JOIN pg_namespace n ON n.oid = c.relnamespace
 WHERE e.cls = 'r'
   AND (e.tgt OR c.relkind = 'f' OR c.oid IN ('pg_catalog.pg_authid'::regclass, 'pg_catalog.pg_user_mapping'::regclass,
                           to_regclass('pg_catalog.pg_shadow'), to_regclass('pg_catalog.pg_user_mappings')))
 GROUP BY c.oid, n.nspname, c.relname, c.relkind
UNION ALL
-- The planner's statistics hold sampled values of each column: a credential
-- column's are the credentials, and pg_stats shows them to a login that may
-- read the column (a superuser, pg_read_all_data). Reached directly or
-- through a user's view (the system views' own relations are not walked).
SELECT 's', NULL, NULL, NULL, c.oid::int, n.nspname || '.' || c.relname, false, NULL, NULL, false, NULL, NULL,
       false, false, NULL, NULL, NULL, NULL, false, NULL, NULL
  FROM (SELECT DISTINCT oid FROM edges WHERE cls = 'r') e JOIN pg_class c ON c.oid = e.oid
  JOIN pg_namespace n ON n.oid = c.relnamespace
 WHERE c.oid IN ('pg_catalog.pg_statistic'::regclass, 'pg_catalog.pg_stats'::regclass,
                 to_regclass('pg_catalog.pg_statistic_ext_data'), to_regclass('pg_catalog.pg_stats_ext'),
                 to_regclass('pg_catalog.pg_stats_ext_exprs'))
   AND (has_column_privilege('pg_catalog.pg_authid'::regclass, 'rolpassword', 'SELECT')
        OR has_column_privilege('pg_catalog.pg_user_mapping'::regclass, 'umoptions', 'SELECT'))
UNION ALL
-- Event triggers run code on DDL, whoever sends it.
SELECT 'x', NULL, NULL, NULL, NULL, evt.evtname, false, NULL, NULL, false, NULL, NULL, false, false, NULL, NULL, NULL,
       NULL, false, NULL, NULL
  FROM pg_event_trigger evt WHERE evt.evtenabled <> 'D'
UNION ALL
SELECT 'u', NULL, NULL, NULL, NULL, sp.n, false, NULL, NULL, false, NULL, NULL, false, false, NULL, NULL, NULL,
       sp.kind, false, sp.item, NULL
  FROM spaces sp
 WHERE sp.kind IN ('f', 'o') AND NOT sp.optional
   AND NOT EXISTS (SELECT FROM found f WHERE f.kind = sp.kind AND f.item = sp.item)`;
