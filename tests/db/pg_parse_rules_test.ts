/**
 * parsePostgres()'s rules, each pinned by a statement and its exact outcome
 * (issue 34's mutation scores): what is refused as reach (role powers and
 * membership, catalog grants, catalog objects changed), the tier, and which
 * functions, operators and types a statement names.
 */
import { assert, assertEquals } from "@std/assert";
import { analyze, parsePostgres } from "../../lib/db/postgres/pg_parse.ts";

/** The analysis of one statement (the parse must read exactly one). */
async function analysisOf(sql: string) {
  const parsed = await parsePostgres(sql);
  assert(parsed.ok && parsed.analysis !== null, sql);
  return parsed.analysis;
}

async function reachOf(sql: string): Promise<string | null> {
  return (await analysisOf(sql)).reach;
}

/** The start of a catalog-change refusal, up to the object it names. */
const CATALOG_CHANGE = ", an object of the server's own catalogs";

Deno.test("parsePostgres() reads two statements as no analysis, one as an analysis", async () => {
  assertEquals(await parsePostgres("SELECT 1; SELECT 2"), {
    ok: true,
    statements: 2,
    analysis: null,
  });
  const one = await parsePostgres("SELECT 1");
  assert(one.ok);
  assertEquals(one.statements, 1);
  assertEquals(one.analysis?.tier, "read");
});

Deno.test("parsePostgres() refuses each power attribute by its name: CREATEROLE, REPLICATION (not isreplication), SUPERUSER, BYPASSRLS; NOSUPERUSER is no power", async () => {
  assertEquals(
    await reachOf("CREATE ROLE r CREATEROLE"),
    "CREATE ROLE … createrole hands a role powers beyond its data; dbport leaves role attributes to the server's administrator",
  );
  assertEquals(
    await reachOf("CREATE ROLE r REPLICATION"),
    "CREATE ROLE … replication hands a role powers beyond its data; dbport leaves role attributes to the server's administrator",
  );
  assertEquals(
    await reachOf("ALTER ROLE r SUPERUSER"),
    "ALTER ROLE … superuser hands a role powers beyond its data; dbport leaves role attributes to the server's administrator",
  );
  assert((await reachOf("ALTER ROLE r BYPASSRLS"))?.includes("bypassrls"));
  // NOSUPERUSER and LOGIN hand no power (the statement may still be
  // refused for acting outside the database, pg_statement_kinds.ts).
  for (const sql of ["ALTER ROLE r NOSUPERUSER", "CREATE ROLE r LOGIN"]) {
    assert(!(await reachOf(sql))?.includes("powers beyond its data"), sql);
  }
});

Deno.test("parsePostgres() refuses GRANT on the catalogs: ALL IN SCHEMA pg_catalog, pg_catalog.pg_authid (named so) and pg_authid unqualified (named so)", async () => {
  assertEquals(
    await reachOf(
      "GRANT SELECT ON ALL TABLES IN SCHEMA pg_catalog TO public",
    ),
    "GRANT … ALL … IN SCHEMA pg_catalog changes who may use the server's catalogs; dbport changes privileges on the database's own objects only",
  );
  assert(
    (await reachOf("REVOKE SELECT ON ALL TABLES IN SCHEMA pg_toast FROM r"))
      ?.startsWith("REVOKE … ALL … IN SCHEMA pg_toast changes"),
  );
  assert(
    (await reachOf("GRANT SELECT ON pg_catalog.pg_authid TO public"))
      ?.startsWith("GRANT on pg_catalog.pg_authid changes who may read"),
  );
  assert(
    (await reachOf("GRANT SELECT ON pg_authid TO public"))
      ?.startsWith("GRANT on pg_authid changes who may read"),
  );
  assertEquals(
    await reachOf("GRANT SELECT ON ALL TABLES IN SCHEMA public TO r"),
    null,
  );
  assertEquals(await reachOf("GRANT SELECT ON s.pg_like TO r"), null);
});

Deno.test("parsePostgres() refuses changing a catalog object, naming it schema.name: SET SCHEMA of a table, ALTER DOMAIN, DEPENDS ON EXTENSION, CREATE POLICY, CREATE FUNCTION, RENAME", async () => {
  const cases: [string, string][] = [
    [
      "ALTER TABLE pg_catalog.pg_class SET SCHEMA public",
      "AlterObjectSchema changes pg_catalog.pg_class",
    ],
    [
      "ALTER DOMAIN pg_catalog.d SET DEFAULT 1",
      "AlterDomain changes pg_catalog.d",
    ],
    [
      "ALTER INDEX pg_catalog.pg_class_oid_index DEPENDS ON EXTENSION e",
      "AlterObjectDepends changes pg_catalog.pg_class_oid_index",
    ],
    [
      "CREATE POLICY p ON pg_catalog.pg_authid USING (true)",
      "CreatePolicy changes pg_catalog.pg_authid",
    ],
    [
      "CREATE FUNCTION pg_catalog.f() RETURNS int LANGUAGE sql AS 'select 1'",
      "CreateFunction changes pg_catalog.f",
    ],
    // The schema of a two-part name is read, not only its last part.
    ["ALTER TABLE pg_catalog.abc RENAME TO x", "Rename changes pg_catalog.abc"],
    [
      "ALTER FUNCTION pg_catalog.lower(text) RENAME TO mylower",
      "Rename changes pg_catalog.lower",
    ],
    [
      "ALTER FUNCTION information_schema.f() OWNER TO r",
      "AlterOwner changes information_schema.f",
    ],
  ];
  for (const [sql, start] of cases) {
    assertEquals(
      (await reachOf(sql))?.split(CATALOG_CHANGE)[0],
      start,
      sql,
    );
  }
  // The database's own objects, and a session's temporary schema.
  for (
    const sql of [
      "ALTER TABLE public.abc RENAME TO x",
      "ALTER FUNCTION s.lower(text) RENAME TO mylower",
      "ALTER TABLE pg_temp.abc RENAME TO x",
      "ALTER TABLE s.t SET SCHEMA public",
      "CREATE POLICY p ON s.t USING (true)",
    ]
  ) assertEquals(await reachOf(sql), null, sql);
});

Deno.test("parsePostgres() makes ALTER TABLE destructive only when a command drops something", async () => {
  const add = await analysisOf("ALTER TABLE t ADD COLUMN c int");
  assertEquals([add.tier, add.dangerous], ["write", false]);
  const drop = await analysisOf("ALTER TABLE t DROP COLUMN c");
  assertEquals([drop.tier, drop.dangerous], ["destructive", true]);
  const constraint = await analysisOf("ALTER TABLE t DROP CONSTRAINT k");
  assertEquals(constraint.tier, "destructive");
});

Deno.test("parsePostgres() names a qualified function with its schema: s.f(1)", async () => {
  assertEquals((await analysisOf("SELECT s.f(1)")).functions, [
    { schema: "s", name: "f", args: 1 },
  ]);
  assertEquals((await analysisOf("SELECT f(1, 2)")).functions, [
    { schema: null, name: "f", args: 2 },
  ]);
});

Deno.test("parsePostgres() reads an exclusion constraint's operators, not a CHECK's constraint list", async () => {
  assertEquals(
    (await analysisOf(
      "CREATE TABLE x (c int, EXCLUDE USING gist (c WITH s.===))",
    )).operators,
    [{ schema: "s", name: "===" }],
  );
  assertEquals(
    (await analysisOf("CREATE TABLE x (c int CHECK (c > 0))")).operators,
    [{ schema: null, name: ">" }],
  );
});

Deno.test("parsePostgres() reads CREATE OPERATOR's procedure = f as a call of f", async () => {
  assertEquals(
    (await analysisOf(
      "CREATE OPERATOR s.## (procedure = pg_read_file, rightarg = text)",
    )).functions,
    [{ schema: null, name: "pg_read_file", args: null }],
  );
});

Deno.test("parsePostgres() reads GRANT EXECUTE ON FUNCTION f(text) as a call of f with 1 argument; ON ALL FUNCTIONS IN SCHEMA names none", async () => {
  assertEquals(
    (await analysisOf(
      "GRANT EXECUTE ON FUNCTION pg_read_file(text) TO public",
    )).functions,
    [{ schema: null, name: "pg_read_file", args: 1 }],
  );
  assertEquals(
    (await analysisOf("GRANT EXECUTE ON FUNCTION s.f TO public")).functions,
    [{ schema: "s", name: "f", args: null }],
  );
  assertEquals(
    (await analysisOf("GRANT EXECUTE ON ALL FUNCTIONS IN SCHEMA s TO public"))
      .functions,
    [],
  );
});

Deno.test("parsePostgres() reads CASE x WHEN, JOIN USING and NATURAL JOIN as the = operator; CASE WHEN and JOIN ON true name none", async () => {
  const equals = [{ schema: null, name: "=" }];
  const cases: [string, unknown][] = [
    ["SELECT CASE a WHEN 1 THEN 2 END FROM t", equals],
    ["SELECT CASE WHEN a THEN 1 END FROM t", []],
    ["SELECT * FROM a JOIN b USING (c)", equals],
    ["SELECT * FROM a NATURAL JOIN b", equals],
    ["SELECT * FROM a JOIN b ON true", []],
  ];
  for (const [sql, operators] of cases) {
    assertEquals((await analysisOf(sql)).operators, operators, sql);
  }
});

Deno.test("parsePostgres() reads a one-part type name as a cast type: 1::mydom", async () => {
  assertEquals((await analysisOf("SELECT 1::mydom")).castTypes, [
    { schema: null, name: "mydom" },
  ]);
});

Deno.test("parsePostgres() reads t.f and (t).f as an optional call f(t) of 1 argument; a bare column names none", async () => {
  const call = [{ schema: null, name: "f", args: 1, optional: true }];
  assertEquals((await analysisOf("SELECT t.f FROM t")).functions, call);
  assertEquals((await analysisOf("SELECT (t).f FROM t")).functions, call);
  assertEquals((await analysisOf("SELECT f FROM t")).functions, []);
});

Deno.test("analyze() of a SELECT with an empty locking clause list is a read; with FOR UPDATE a write", async () => {
  assertEquals(analyze({ SelectStmt: { lockingClause: [] } }).tier, "read");
  assertEquals(
    analyze({
      SelectStmt: {
        lockingClause: [{ LockingClause: { strength: "LCS_FORUPDATE" } }],
      },
    }).tier,
    "write",
  );
  assertEquals((await analysisOf("SELECT 1 FOR UPDATE")).tier, "write");
});

const MEMBERSHIP_TAIL =
  " changes role membership: a member gets every privilege of the role it is in (a superuser's, a predefined role's) and may SET ROLE to it; dbport leaves role membership to the server's administrator";

Deno.test("parsePostgres() refuses every change of role membership, naming the statement and its roles", async () => {
  const cases: [string, string][] = [
    ["GRANT postgres TO r", "GRANT of a role (postgres)"],
    [
      "REVOKE pg_read_server_files FROM r",
      "REVOKE of a role (pg_read_server_files)",
    ],
    ["CREATE ROLE r IN ROLE a, b", "CREATE ROLE … IN ROLE (a, b)"],
    ["CREATE ROLE r ROLE x", "CREATE ROLE … ROLE|USER (x)"],
    ["CREATE ROLE r ADMIN y", "CREATE ROLE … ADMIN (y)"],
    ["ALTER GROUP g ADD USER u", "ALTER GROUP g ADD|DROP USER (u)"],
    ["ALTER GROUP g DROP USER u, v", "ALTER GROUP g ADD|DROP USER (u, v)"],
  ];
  for (const [sql, start] of cases) {
    assertEquals(await reachOf(sql), start + MEMBERSHIP_TAIL, sql);
  }
  assertEquals(
    await reachOf("ALTER ROLE pg_monitor CONNECTION LIMIT 1"),
    "ALTER ROLE|GROUP pg_monitor changes a predefined role, which holds the server's powers; dbport leaves role membership and attributes to the server's administrator",
  );
  const other = await reachOf("ALTER ROLE r CONNECTION LIMIT 1");
  assert(!other?.includes("predefined role"), other ?? "");
  assert(!other?.includes("role membership"), other ?? "");
});

const FOREIGN_TAIL =
  " changes what a foreign table reaches (files, programs or other hosts); dbport leaves foreign tables to the server's administrator";

Deno.test("parsePostgres() refuses ALTER FOREIGN TABLE and OPTIONS under any ALTER TABLE; another ALTER TABLE is no reach", async () => {
  const cases: [string, string | null][] = [
    [
      "ALTER FOREIGN TABLE ft OPTIONS (SET filename 'x')",
      "ALTER … OPTIONS" + FOREIGN_TAIL,
    ],
    [
      "ALTER FOREIGN TABLE ft ADD COLUMN c int",
      "ALTER FOREIGN TABLE" + FOREIGN_TAIL,
    ],
    [
      "ALTER TABLE t ALTER COLUMN c OPTIONS (x 'y')",
      "ALTER … OPTIONS" + FOREIGN_TAIL,
    ],
    ["ALTER TABLE t OPTIONS (x 'y')", "ALTER … OPTIONS" + FOREIGN_TAIL],
    ["ALTER TABLE t ADD COLUMN c int", null],
    ["ALTER TABLE t SET (fillfactor = 50)", null],
  ];
  for (const [sql, reach] of cases) {
    assertEquals(await reachOf(sql), reach, sql);
  }
});

Deno.test("parsePostgres() refuses each statement that reaches files, code or other hosts, by its own message", async () => {
  const cases: [string, string][] = [
    [
      "COPY t TO '/tmp/x'",
      "COPY reads or writes files, programs or the client's stream",
    ],
    ["DO $$ begin end $$", "DO runs a block of procedural code"],
    ["CREATE EXTENSION e", "CREATE EXTENSION installs code"],
    ["ALTER EXTENSION e UPDATE", "ALTER EXTENSION changes installed code"],
    ["LOAD 'x'", "LOAD reads a library"],
    [
      "ALTER SYSTEM SET a = 1",
      "ALTER SYSTEM writes the server's configuration file",
    ],
    [
      "CREATE SERVER s FOREIGN DATA WRAPPER w",
      "a foreign server reaches files or other hosts",
    ],
    [
      "ALTER SERVER s OPTIONS (host 'x')",
      "ALTER SERVER changes where a foreign server reaches (files or other hosts)",
    ],
    [
      "CREATE FOREIGN TABLE f (a int) SERVER s",
      "a foreign table reaches files or other hosts",
    ],
    [
      "IMPORT FOREIGN SCHEMA a FROM SERVER s INTO b",
      "IMPORT FOREIGN SCHEMA reaches other hosts",
    ],
    [
      "CREATE USER MAPPING FOR r SERVER s",
      "a user mapping holds credentials for other hosts",
    ],
    [
      "ALTER USER MAPPING FOR r SERVER s OPTIONS (password 'x')",
      "a user mapping holds credentials for other hosts",
    ],
    [
      "CREATE FOREIGN DATA WRAPPER w",
      "CREATE FOREIGN DATA WRAPPER installs code (its handler and validator) that reaches files or other hosts",
    ],
    [
      "ALTER FOREIGN DATA WRAPPER w VALIDATOR v",
      "ALTER FOREIGN DATA WRAPPER installs code (its handler and validator, the validator run at once) and changes what its foreign tables reach",
    ],
    [
      "CREATE SUBSCRIPTION s CONNECTION 'x' PUBLICATION p",
      "a subscription connects to other hosts",
    ],
  ];
  for (const [sql, reach] of cases) {
    assertEquals(await reachOf(sql), reach, sql);
  }
});

Deno.test("parsePostgres() reads only LANGUAGE sql bodies: plpgsql and no language are opaque code, BEGIN ATOMIC is SQL", async () => {
  const opaque = (what: string, language: string) =>
    `CREATE ${what} in LANGUAGE ${language} installs code whose body dbport cannot read, to run with the login's powers (files, programs, any SQL); only LANGUAGE sql bodies are vetted`;
  const cases: [string, string | null][] = [
    [
      "CREATE FUNCTION s.f() RETURNS int LANGUAGE plpgsql AS 'begin return 1; end'",
      opaque("FUNCTION", "plpgsql"),
    ],
    [
      "CREATE PROCEDURE s.p() LANGUAGE PLPGSQL AS 'begin end'",
      opaque("PROCEDURE", "plpgsql"),
    ],
    [
      "CREATE FUNCTION s.f() RETURNS int AS 'select 1'",
      opaque("FUNCTION", "(none)"),
    ],
    ["CREATE FUNCTION s.f() RETURNS int LANGUAGE SQL AS 'select 1'", null],
    [
      "CREATE FUNCTION s.f() RETURNS int LANGUAGE SQL BEGIN ATOMIC select 1; END",
      null,
    ],
    [
      "CREATE FUNCTION s.f() RETURNS int BEGIN ATOMIC select 1; END",
      null,
    ],
    // The last SECURITY clause is not what counts: any DEFINER is refused.
    [
      "CREATE FUNCTION s.f() RETURNS int LANGUAGE sql SECURITY INVOKER SECURITY DEFINER AS 'select 1'",
      "CREATE FUNCTION … SECURITY DEFINER installs code that runs with its owner's powers for whoever calls it; dbport lets a statement install only SECURITY INVOKER functions",
    ],
  ];
  for (const [sql, reach] of cases) {
    assertEquals(await reachOf(sql), reach, sql);
  }
});

Deno.test("parsePostgres() reads a statement nested in CREATE SCHEMA as if sent itself", async () => {
  const nested = await analysisOf(
    "CREATE SCHEMA s GRANT SELECT ON pg_authid TO PUBLIC",
  );
  assert(nested.reach?.startsWith("GRANT on pg_authid changes"));
  const table = await analysisOf("CREATE SCHEMA s CREATE TABLE t (a int)");
  assertEquals(table.reach, null);
  assertEquals(table.kinds, [
    "CreateSchemaStmt",
    "CreateSchemaStmt",
    "CreateStmt",
  ]);
});

Deno.test("parsePostgres() tiers: SELECT and SHOW read, SET and VACUUM write, DROP and TRUNCATE destructive; DELETE or UPDATE without WHERE dangerous; targets named", async () => {
  const cases: [string, string, boolean, string[]][] = [
    ["SHOW x", "read", false, []],
    ["SET x = 1", "write", false, []],
    ["VACUUM t", "write", false, []],
    ["TRUNCATE t", "destructive", true, []],
    ["DROP TABLE t", "destructive", true, []],
    ["DELETE FROM t", "write", true, ["t"]],
    ["DELETE FROM s.t WHERE a", "write", false, ["s.t"]],
    ["UPDATE t SET a = 1", "write", true, ["t"]],
    ["UPDATE t SET a = 1 WHERE b", "write", false, ["t"]],
    ["INSERT INTO s.t VALUES (1)", "write", false, ["s.t"]],
    [
      "MERGE INTO t USING u ON true WHEN MATCHED THEN DELETE",
      "write",
      false,
      ["t"],
    ],
  ];
  for (const [sql, tier, dangerous, targets] of cases) {
    const analysis = await analysisOf(sql);
    assertEquals(
      [
        analysis.tier,
        analysis.dangerous,
        analysis.targets.map((t) =>
          `${t.schema ? t.schema + "." : ""}${t.name}`
        ),
      ],
      [tier, dangerous, targets],
      sql,
    );
  }
});

Deno.test("parsePostgres() names ANALYZE apart from VACUUM (they share a node) and marks EXPLAIN without ANALYZE as plans only", async () => {
  assertEquals((await analysisOf("ANALYZE t")).kinds[0], "AnalyzeStmt");
  assertEquals((await analysisOf("VACUUM t")).kinds[0], "VacuumStmt");
  assertEquals((await analysisOf("VACUUM (ANALYZE) t")).kinds[0], "VacuumStmt");
  const plan = await analysisOf("EXPLAIN (ANALYZE no) DELETE FROM t");
  assertEquals([plan.tier, plan.dangerous, plan.plansOnly], [
    "read",
    false,
    true,
  ]);
  assertEquals(
    (await analysisOf("EXPLAIN (ANALYZE 'f') DELETE FROM t")).tier,
    "read",
  );
  const run = await analysisOf("EXPLAIN (ANALYZE true) DELETE FROM t");
  assertEquals([run.tier, run.dangerous, run.plansOnly], [
    "write",
    true,
    undefined,
  ]);
});

Deno.test("parsePostgres() names the relation ALTER TABLE, RENAME and SET SCHEMA change", async () => {
  for (
    const sql of [
      "ALTER TABLE s.t RENAME TO u",
      "ALTER TABLE s.t SET SCHEMA u",
      "ALTER TABLE s.t ADD COLUMN c int",
    ]
  ) {
    assertEquals((await analysisOf(sql)).relations, [{
      schema: "s",
      name: "t",
    }], sql);
  }
  assertEquals((await analysisOf("CREATE TABLE s.t (a int)")).relations, []);
});

Deno.test("parsePostgres() reads the operator classes of an index and of a partition key", async () => {
  assertEquals(
    (await analysisOf("CREATE INDEX i ON t (a s.opc)")).opclasses,
    [{ schema: "s", name: "opc" }],
  );
  assertEquals(
    (await analysisOf("CREATE TABLE p (a int) PARTITION BY RANGE (a s.opc2)"))
      .opclasses,
    [{ schema: "s", name: "opc2" }],
  );
  assertEquals(
    (await analysisOf("CREATE INDEX i ON t (a)")).opclasses,
    undefined,
  );
});

Deno.test("parsePostgres() reads calls exactly: TABLESAMPLE's method, WITHIN GROUP's columns as arguments, VARIADIC as any arity, pg_catalog.json_object also on the path before 16", async () => {
  const cases: [string, unknown][] = [
    ["SELECT * FROM t TABLESAMPLE s.bern(1)", [{
      schema: "s",
      name: "bern",
      args: 1,
    }]],
    ["SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY a) FROM t", [{
      schema: null,
      name: "percentile_cont",
      args: 2,
    }]],
    ["SELECT count(a ORDER BY b) FROM t", [{
      schema: null,
      name: "count",
      args: 1,
    }]],
    ["SELECT f(VARIADIC ARRAY[1])", [{ schema: null, name: "f", args: null }]],
    ["SELECT pg_catalog.json_object('{a}')", [
      { schema: "pg_catalog", name: "json_object", args: 1 },
      { schema: null, name: "json_object", args: 1, before: 160000 },
    ]],
    ["SELECT s.json_object('{a}')", [
      { schema: "s", name: "json_object", args: 1 },
    ]],
    ["SELECT (t).f.g FROM t", [
      { schema: null, name: "f", args: 1, optional: true },
      { schema: null, name: "g", args: 1, optional: true },
    ]],
    ["SELECT (t).f[1] FROM t", [
      { schema: null, name: "f", args: 1, optional: true },
    ]],
    ["SELECT a[1] FROM t", []],
    ["GRANT EXECUTE ON PROCEDURE s.p(int, int) TO r", [{
      schema: "s",
      name: "p",
      args: 2,
    }]],
    ["GRANT EXECUTE ON ROUTINE s.p() TO r", [{
      schema: "s",
      name: "p",
      // The tree leaves an empty argument list out: any arity.
      args: null,
    }]],
    ["GRANT SELECT ON s.t TO r", []],
    ["CREATE CAST (int AS text) WITH FUNCTION s.f", [{
      schema: "s",
      name: "f",
      args: null,
    }]],
    ["CREATE CAST (int AS text) WITHOUT FUNCTION", []],
    ["CREATE AGGREGATE s.a(int) (sfunc1 = s.f, stype = int)", [{
      schema: "s",
      name: "f",
      args: null,
    }]],
    [
      "CREATE AGGREGATE s.a(int) (SFUNC = s.f, stype = int, combinefunc = c, serialfunc = sf, deserialfunc = df)",
      [
        { schema: "s", name: "f", args: null },
        { schema: null, name: "c", args: null },
        { schema: null, name: "sf", args: null },
        { schema: null, name: "df", args: null },
      ],
    ],
    ["CREATE OPERATOR s.## (function = f, join = j, rightarg = text)", [
      { schema: null, name: "f", args: null },
      { schema: null, name: "j", args: null },
    ]],
  ];
  for (const [sql, functions] of cases) {
    assertEquals((await analysisOf(sql)).functions, functions, sql);
  }
});

Deno.test("parsePostgres() reads operators exactly: ANY's, ORDER BY USING's, each BETWEEN form's, OPERATOR(s.+)", async () => {
  const op = (name: string, schema: string | null = null) => ({ schema, name });
  const cases: [string, unknown][] = [
    ["SELECT a = ANY (SELECT 1)", [op("=")]],
    ["SELECT a IN (SELECT 1)", []],
    ["SELECT 1 ORDER BY a USING <", [op("<")]],
    ["SELECT 1 ORDER BY a", []],
    ["SELECT a BETWEEN 1 AND 2", [op(">="), op("<=")]],
    ["SELECT a BETWEEN SYMMETRIC 1 AND 2", [op(">="), op("<=")]],
    ["SELECT a NOT BETWEEN 1 AND 2", [op("<"), op(">")]],
    ["SELECT a NOT BETWEEN SYMMETRIC 1 AND 2", [op("<"), op(">")]],
    ["SELECT a OPERATOR(s.+) 1", [op("+", "s")]],
  ];
  for (const [sql, operators] of cases) {
    assertEquals((await analysisOf(sql)).operators, operators, sql);
  }
});

Deno.test("parsePostgres() refuses changing each kind of catalog object, naming it", async () => {
  const cases: [string, string][] = [
    [
      "ALTER TABLE pg_catalog.pg_authid ADD COLUMN c int",
      "AlterTable changes pg_catalog.pg_authid",
    ],
    ["CREATE VIEW pg_catalog.v AS SELECT 1", "View changes pg_catalog.v"],
    [
      "CREATE RULE r AS ON INSERT TO pg_catalog.t DO NOTHING",
      "Rule changes pg_catalog.t",
    ],
    [
      "CREATE TRIGGER tr AFTER INSERT ON pg_catalog.t FOR EACH ROW EXECUTE FUNCTION f()",
      "CreateTrig changes pg_catalog.t",
    ],
    ["ALTER SEQUENCE pg_catalog.s RESTART", "AlterSeq changes pg_catalog.s"],
    ["ALTER SCHEMA pg_catalog RENAME TO x", "Rename changes pg_catalog"],
    [
      "ALTER FUNCTION s.f() SET SCHEMA pg_catalog",
      "AlterObjectSchema changes pg_catalog",
    ],
    ["ALTER TYPE pg_catalog.t ADD VALUE 'x'", "AlterEnum changes pg_catalog.t"],
    ["ALTER TYPE pg_catalog.t OWNER TO r", "AlterOwner changes pg_catalog.t"],
    [
      "ALTER TYPE pg_catalog.t SET (send = f)",
      "AlterType changes pg_catalog.t",
    ],
    [
      "ALTER OPERATOR pg_catalog.+ (int, int) OWNER TO r",
      "AlterOwner changes pg_catalog.+",
    ],
    [
      "ALTER OPERATOR pg_catalog.+ (int, int) SET (restrict = f)",
      "AlterOperator changes pg_catalog.+",
    ],
    [
      "ALTER STATISTICS pg_catalog.st SET STATISTICS 1",
      "AlterStats changes pg_catalog.st",
    ],
    [
      "ALTER TEXT SEARCH DICTIONARY pg_catalog.simple (x = 1)",
      "AlterTSDictionary changes pg_catalog.simple",
    ],
    [
      "ALTER TEXT SEARCH CONFIGURATION pg_catalog.simple ADD MAPPING FOR word WITH simple",
      "AlterTSConfiguration changes pg_catalog.simple",
    ],
    [
      "ALTER COLLATION pg_catalog.c REFRESH VERSION",
      "AlterCollation changes pg_catalog.c",
    ],
    [
      "CREATE OPERATOR CLASS pg_catalog.oc FOR TYPE int USING btree AS OPERATOR 1 <",
      "CreateOpClass changes pg_catalog.oc",
    ],
    [
      "CREATE OPERATOR CLASS s.oc FOR TYPE int USING btree FAMILY pg_catalog.of AS OPERATOR 1 <",
      "CreateOpClass changes pg_catalog.of",
    ],
    [
      "CREATE OPERATOR FAMILY pg_catalog.of USING btree",
      "CreateOpFamily changes pg_catalog.of",
    ],
    [
      "ALTER OPERATOR FAMILY pg_catalog.of USING btree ADD OPERATOR 1 < (int, int)",
      "AlterOpFamily changes pg_catalog.of",
    ],
    [
      "ALTER POLICY p ON pg_catalog.t USING (true)",
      "AlterPolicy changes pg_catalog.t",
    ],
    [
      "CREATE TYPE pg_catalog.b (input = f, output = g)",
      "Define changes pg_catalog.b",
    ],
    [
      "ALTER FUNCTION pg_read_file(text) RENAME TO x",
      "Rename changes pg_read_file",
    ],
    ["ALTER TABLE pg_tempo.t RENAME TO u", "Rename changes pg_tempo.t"],
    ["ALTER TABLE pg_temp_x.t RENAME TO u", "Rename changes pg_temp_x.t"],
  ];
  for (const [sql, start] of cases) {
    assertEquals((await reachOf(sql))?.split(CATALOG_CHANGE)[0], start, sql);
  }
  for (
    const sql of [
      "ALTER TABLE pg_temp_3.t RENAME TO u",
      "ALTER TABLE pg_temp.t RENAME TO u",
      "ALTER DOMAIN s.d SET DEFAULT 1",
      "ALTER FUNCTION s.f() SET SCHEMA s2",
      "ALTER SCHEMA s RENAME TO s2",
      "CREATE VIEW s.v AS SELECT 1",
    ]
  ) assertEquals(await reachOf(sql), null, sql);
});

Deno.test("parsePostgres() treats information_schema as a catalog schema: GRANT on it, ALL IN SCHEMA, ALTER SCHEMA … OWNER", async () => {
  assert(
    (await reachOf("GRANT SELECT ON information_schema.tables TO r"))
      ?.startsWith("GRANT on information_schema.tables changes who may read"),
  );
  assert(
    (await reachOf(
      "GRANT SELECT ON ALL TABLES IN SCHEMA information_schema TO r",
    ))?.startsWith("GRANT … ALL … IN SCHEMA information_schema changes"),
  );
  for (const schema of ["pg_catalog", "information_schema"]) {
    assertEquals(
      (await reachOf(`ALTER SCHEMA ${schema} OWNER TO r`))
        ?.split(CATALOG_CHANGE)[0],
      `AlterOwner changes ${schema}`,
    );
  }
  assertEquals(await reachOf("ALTER SCHEMA s RENAME TO s2"), null);
});

Deno.test("parsePostgres() reads each SQL/JSON constructor as a call of its name before the version that made it syntax", async () => {
  const cases: [string, string, number][] = [
    ["SELECT json_array(1)", "json_array", 160000],
    ["SELECT json_array(SELECT 1)", "json_array", 160000],
    ["SELECT json_object('a' : 1)", "json_object", 160000],
    ["SELECT json_arrayagg(a) FROM t", "json_arrayagg", 160000],
    ["SELECT json_objectagg(k : v) FROM t", "json_objectagg", 160000],
    ["SELECT json('x')", "json", 170000],
    ["SELECT json_scalar(1)", "json_scalar", 170000],
    ["SELECT json_serialize('x')", "json_serialize", 170000],
    [
      "SELECT * FROM json_table('{}', '$' COLUMNS (a int))",
      "json_table",
      170000,
    ],
  ];
  for (const [sql, name, before] of cases) {
    assertEquals((await analysisOf(sql)).functions, [
      { schema: null, name, args: null, before },
    ], sql);
  }
});

Deno.test("parsePostgres() counts no arguments as 0: now()", async () => {
  assertEquals((await analysisOf("SELECT now()")).functions, [
    { schema: null, name: "now", args: 0 },
  ]);
});

Deno.test("parsePostgres() caches a text of 4,096 characters: the same frozen parse handed out again", async () => {
  const text = (length: number) => {
    const head = "SELECT 1 AS cache_probe_";
    return head + "x".repeat(length - head.length);
  };
  const at = text(4096);
  assertEquals(at.length, 4096);
  const first = await parsePostgres(at);
  assert(first === (await parsePostgres(at)), "4,096 characters: cached");
});

Deno.test("analyze() of trees the grammar does not make: an exclusion pair without an operator, a type without a name, routine objects outside a GRANT name nothing", () => {
  const exclusion = analyze({
    CreateStmt: {
      tableElts: [{
        Constraint: {
          contype: "CONSTR_EXCLUSION",
          exclusions: [{ List: { items: [{ IndexElem: { name: "c" } }] } }],
        },
      }],
    },
  });
  assertEquals(exclusion.operators, []);
  assertEquals(
    analyze({ SelectStmt: { targetList: [{ TypeName: { names: [] } }] } })
      .castTypes,
    [],
  );
  const routines = {
    objtype: "OBJECT_FUNCTION",
    objects: [{
      ObjectWithArgs: { objname: [{ String: { sval: "f" } }] },
    }],
  };
  assertEquals(analyze({ CommentStmt: { other: routines } }).functions, []);
  // GRANT … ALL … IN SCHEMA names schemas, not catalog objects to touch.
  assertEquals(
    analyze({
      GrantStmt: {
        is_grant: true,
        targtype: "ACL_TARGET_ALL_IN_SCHEMA",
        objtype: "OBJECT_SCHEMA",
        objects: [{ String: { sval: "pg_x" } }],
      },
    }).reach,
    null,
  );
  // Only GRANT's and COMMENT's routine objects are calls.
  assertEquals(
    analyze({
      SelectStmt: {
        x: {
          objtype: "OBJECT_FUNCTION",
          object: { ObjectWithArgs: { objname: [{ String: { sval: "f" } }] } },
        },
      },
    }).functions,
    [],
  );
  // A value that is no node, under a key that names one, is read as nothing.
  assertEquals(analyze({ SelectStmt: { FuncCall: "f" } }).functions, []);
  // A reach statement nested anywhere is reach.
  assert(
    analyze({ SelectStmt: { x: { DoStmt: {} } } }).reach?.startsWith("DO "),
  );
  // Only an exclusion constraint's pairs are operators.
  const pair = {
    List: {
      items: [{ IndexElem: { name: "c" } }, {
        List: { items: [{ String: { sval: "&&" } }] },
      }],
    },
  };
  assertEquals(
    analyze({
      CreateStmt: {
        x: { Constraint: { contype: "CONSTR_CHECK", exclusions: [pair] } },
      },
    }).operators,
    [],
  );
  assertEquals(
    analyze({
      CreateStmt: {
        x: { Constraint: { contype: "CONSTR_EXCLUSION", exclusions: [pair] } },
      },
    }).operators,
    [{ schema: null, name: "&&" }],
  );
  // An owner change naming a catalog relation (the grammar's ALTER TABLE …
  // OWNER is AlterTableStmt) is refused as one.
  assertEquals(
    analyze({
      AlterOwnerStmt: {
        relation: { schemaname: "pg_catalog", relname: "pg_authid" },
      },
    }).reach?.split(CATALOG_CHANGE)[0],
    "AlterOwner changes pg_catalog.pg_authid",
  );
  assertEquals(analyze({ GrantStmt: routines }).functions, [
    { schema: null, name: "f", args: null },
  ]);
});

Deno.test("parsePostgres() keeps the 256 most recent parses: the oldest is parsed anew after 256 more", async () => {
  const texts = Array.from(
    { length: 257 },
    (_, i) => `SELECT ${i} AS parse_cache_probe`,
  );
  const parses = [];
  for (const text of texts.slice(0, 256)) {
    parses.push(await parsePostgres(text));
  }
  // 256 held: the oldest is still the same parse.
  assert(parses[0] === (await parsePostgres(texts[0]!)), "256 held");
  await parsePostgres(texts[256]!);
  assert(parses[1] === (await parsePostgres(texts[1]!)), "the second held");
  assert(parses[0] !== (await parsePostgres(texts[0]!)), "the oldest left");
});

Deno.test("parsePostgres() reads DEPENDS ON EXTENSION of a catalog function, a one-part exclusion operator, ANALYZE '0', a support function given as a number", async () => {
  assertEquals(
    (await reachOf("ALTER FUNCTION pg_catalog.f() DEPENDS ON EXTENSION e"))
      ?.split(CATALOG_CHANGE)[0],
    "AlterObjectDepends changes pg_catalog.f",
  );
  assertEquals(
    (await analysisOf(
      "CREATE TABLE x (c int, EXCLUDE USING gist (c WITH &&))",
    )).operators,
    [{ schema: null, name: "&&" }],
  );
  const plan = await analysisOf("EXPLAIN (ANALYZE '0') DELETE FROM t");
  assertEquals([plan.tier, plan.plansOnly], ["read", true]);
  assertEquals(
    (await analysisOf("CREATE AGGREGATE s.a(int) (sfunc = 1, stype = int)"))
      .functions,
    [],
  );
});

Deno.test("parsePostgres() refuses changing a catalog function by ALTER FUNCTION … STABLE or SET SCHEMA; a column named pg_x is no catalog object", async () => {
  const cases: [string, string][] = [
    [
      "ALTER FUNCTION pg_catalog.lower(text) STABLE",
      "AlterFunction changes pg_catalog.lower",
    ],
    [
      "ALTER FUNCTION pg_catalog.f() SET SCHEMA s",
      "AlterObjectSchema changes pg_catalog.f",
    ],
  ];
  for (const [sql, start] of cases) {
    assertEquals((await reachOf(sql))?.split(CATALOG_CHANGE)[0], start, sql);
  }
  assertEquals(await reachOf("ALTER TABLE s.t RENAME COLUMN pg_x TO y"), null);
  assertEquals(await reachOf("ALTER FUNCTION s.f() STABLE"), null);
});

Deno.test("parsePostgres() reads EXPLAIN (ANALYZE x) as plans only for each of false, off, no, 0, f, n", async () => {
  for (const value of ["false", "off", "no", "'0'", "f", "n", "'OFF'"]) {
    const sql = `EXPLAIN (ANALYZE ${value}) DELETE FROM t`;
    assertEquals((await analysisOf(sql)).tier, "read", sql);
  }
  for (const value of ["true", "on", "yes", "'1'", "t", "y"]) {
    const sql = `EXPLAIN (ANALYZE ${value}) DELETE FROM t`;
    assertEquals((await analysisOf(sql)).tier, "write", sql);
  }
});

Deno.test("parsePostgres() reads one-part names: an index's operator class, a cast's function", async () => {
  assertEquals(
    (await analysisOf("CREATE INDEX i ON t (a opc)")).opclasses,
    [{ schema: null, name: "opc" }],
  );
  assertEquals(
    (await analysisOf("CREATE CAST (int AS text) WITH FUNCTION f(int)"))
      .functions,
    [{ schema: null, name: "f", args: 1 }],
  );
});

Deno.test({
  name:
    "parsePostgres() does not cache a text of 4,097 characters (parsed off the loop): parsed anew each time",
  // The parse worker's idle timer outlives the test (it is unref'd).
  sanitizeOps: false,
  sanitizeResources: false,
  fn: async () => {
    const head = "SELECT 1 AS cache_probe_long_";
    const text = head + "x".repeat(4097 - head.length);
    const once = await parsePostgres(text);
    const again = await parsePostgres(text);
    assert(once !== again, "4,097 characters: not cached");
    assertEquals(once, again);
    const { stopParser } = await import(
      "../../lib/db/postgres/pg_parse_off_loop.ts"
    );
    stopParser();
  },
});

Deno.test("parsePostgres() refuses COMMENT on a catalog table's column, constraint, trigger, rule or policy, naming the table; GRANT|REVOKE on a catalog object by its verb", async () => {
  const tail =
    " changes an object of the server's own catalogs (its privileges and comments are every user's); dbport changes the database's own objects only";
  const cases: [string, string | null][] = [
    [
      "COMMENT ON COLUMN pg_catalog.pg_class.relname IS 'x'",
      "COMMENT on pg_catalog.pg_class" + tail,
    ],
    [
      "COMMENT ON CONSTRAINT c ON pg_catalog.pg_class IS 'x'",
      "COMMENT on pg_catalog.pg_class" + tail,
    ],
    [
      "COMMENT ON TRIGGER t ON pg_catalog.pg_class IS 'x'",
      "COMMENT on pg_catalog.pg_class" + tail,
    ],
    [
      "COMMENT ON RULE r ON pg_catalog.pg_class IS 'x'",
      "COMMENT on pg_catalog.pg_class" + tail,
    ],
    [
      "COMMENT ON POLICY p ON pg_catalog.pg_class IS 'x'",
      "COMMENT on pg_catalog.pg_class" + tail,
    ],
    ["COMMENT ON COLUMN s.t.pg_x IS 'x'", null],
    ["COMMENT ON COLUMN s.pg_t.c IS 'x'", null],
    ["COMMENT ON POLICY pg_p ON s.t IS 'x'", null],
    [
      "REVOKE EXECUTE ON FUNCTION pg_catalog.now() FROM public",
      "REVOKE on pg_catalog.now" + tail,
    ],
    ["GRANT USAGE ON SCHEMA pg_toast TO r", "GRANT on pg_toast" + tail],
  ];
  for (const [sql, reach] of cases) {
    assertEquals(await reachOf(sql), reach, sql);
  }
});

Deno.test("parsePostgres() refuses VACUUM, ANALYZE, LOCK, REINDEX, CLUSTER of a catalog and VACUUM (FULL) of every table, by their verbs; FULL false|off|no|0 and other options are no FULL", async () => {
  const why =
    " locks the server's own catalogs, which every session's login and lookups wait on; dbport maintains the database's own tables only";
  const cases: [string, string | null][] = [
    ["VACUUM pg_catalog.pg_authid", "VACUUM pg_catalog.pg_authid" + why],
    ["ANALYZE pg_class", "ANALYZE pg_class" + why],
    ["VACUUM (FULL)", "VACUUM FULL of every table" + why],
    ["VACUUM (FULL 1)", "VACUUM FULL of every table" + why],
    ["VACUUM (FULL '1')", "VACUUM FULL of every table" + why],
    ["VACUUM (VERBOSE)", null],
    ["VACUUM (FULL false)", null],
    ["VACUUM (FULL off)", null],
    ["VACUUM (FULL no)", null],
    ["VACUUM (FULL '0')", null],
    ["VACUUM (FULL 0)", null],
    ["VACUUM (FULL) s.t", null],
    ["LOCK pg_catalog.pg_authid", "LOCK pg_catalog.pg_authid" + why],
    ["LOCK s.t, pg_class", "LOCK pg_class" + why],
    ["LOCK s.t", null],
    ["REINDEX SYSTEM db", "REINDEX SYSTEM" + why],
    ["REINDEX TABLE pg_authid", "REINDEX pg_authid" + why],
    ["REINDEX SCHEMA pg_catalog", "REINDEX SCHEMA pg_catalog" + why],
    ["CLUSTER pg_class", "CLUSTER pg_class" + why],
  ];
  for (const [sql, reach] of cases) {
    assertEquals(await reachOf(sql), reach, sql);
  }
});
