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
  assertEquals(await reachOf("ALTER ROLE r NOSUPERUSER"), null);
  assertEquals(await reachOf("CREATE ROLE r LOGIN"), null);
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
