import { assert, assertEquals, assertThrows } from "@std/assert";
import { parsePostgres } from "../../lib/db/postgres/pg_parse.ts";

async function tierOf(sql: string) {
  const parsed = await parsePostgres(sql);
  return parsed.ok && parsed.analysis !== null
    ? `${parsed.analysis.tier}${parsed.analysis.dangerous ? "!" : ""}`
    : "none";
}

Deno.test("parsePostgres() runs EXPLAIN's statement only when ANALYZE is on", async () => {
  const cases: [string, string][] = [
    ["EXPLAIN DELETE FROM t", "read"],
    ["EXPLAIN (ANALYZE false) DELETE FROM t", "read"],
    ["EXPLAIN (ANALYZE off) DELETE FROM t", "read"],
    ["EXPLAIN (ANALYZE 0) DELETE FROM t", "read"],
    ["EXPLAIN (ANALYZE) DELETE FROM t", "write!"],
    ["EXPLAIN (ANALYZE on) DELETE FROM t", "write!"],
    ["EXPLAIN (ANALYZE 1) DELETE FROM t", "write!"],
    ["EXPLAIN ANALYZE DROP TABLE t", "none"], // not a statement EXPLAIN takes
    ["EXPLAIN ANALYZE UPDATE t SET a = 1 WHERE b", "write"],
  ];
  for (const [sql, tier] of cases) assertEquals(await tierOf(sql), tier, sql);
});

Deno.test("parsePostgres() finds writes nested anywhere", async () => {
  assertEquals(
    await tierOf("WITH d AS (DELETE FROM t RETURNING *) SELECT * FROM d"),
    "write!",
  );
  assertEquals(await tierOf("SELECT * INTO x FROM t"), "write");
  assertEquals(await tierOf("SELECT 1 FOR UPDATE"), "write");
});

Deno.test("parsePostgres() hands out a frozen parse: the cached one cannot be changed by a caller", async () => {
  const text = "SELECT lower(name) FROM frozen_parse_probe";
  const first = await parsePostgres(text);
  const again = await parsePostgres(text);
  assert(first.ok && first.analysis !== null);
  assert(again.ok && again.analysis !== null);
  assertThrows(() =>
    first.analysis!.functions.push({ schema: null, name: "x", args: 0 })
  );
  assertThrows(() => {
    (again.analysis as { tier: string }).tier = "write";
  });
  assertEquals(again.analysis.functions.map((fn) => fn.name), ["lower"]);
  assertEquals(again.analysis.tier, "read");
});

/** The analysis of one statement (the parse must read exactly one). */
async function analysisOf(sql: string) {
  const parsed = await parsePostgres(sql);
  assert(parsed.ok && parsed.analysis !== null, sql);
  return parsed.analysis;
}

Deno.test("parsePostgres() reads CALL's procedure as a call of any arity (outsider stop 54)", async () => {
  const call = await analysisOf("CALL s.pp(1, NULL)");
  assertEquals(call.functions, [{ schema: "s", name: "pp", args: null }]);
  assertEquals(call.tier, "write");
});

Deno.test("parsePostgres() reads CREATE AGGREGATE's and CREATE OPERATOR's support functions and CREATE CAST's function as calls; one refused by name is reach (outsider stop 54)", async () => {
  const aggregate = await analysisOf(
    "CREATE AGGREGATE s.fa(text) (sfunc = textcat, stype = text, finalfunc = pg_catalog.pg_read_file, mfinalfunc = 'pg_ls_dir', msfunc = textcat, minvfunc = textcat, mstype = text)",
  );
  assertEquals(
    aggregate.functions.map((fn) => `${fn.schema ?? ""}.${fn.name}/${fn.args}`),
    [
      ".textcat/null",
      "pg_catalog.pg_read_file/null",
      ".pg_ls_dir/null",
      ".textcat/null",
      ".textcat/null",
    ],
  );
  const { namedReach } = await import("../../lib/db/postgres/pg_vet.ts");
  assert(/pg_read_file/.test(namedReach(aggregate) ?? ""));
  const operator = await analysisOf(
    "CREATE OPERATOR s.### (function = pg_read_file, rightarg = text, restrict = eqsel)",
  );
  assertEquals(operator.functions.map((fn) => fn.name), [
    "pg_read_file",
    "eqsel",
  ]);
  const cast = await analysisOf(
    "CREATE CAST (xml AS text) WITH FUNCTION pg_catalog.pg_read_file(text)",
  );
  assertEquals(cast.functions, [{
    schema: "pg_catalog",
    name: "pg_read_file",
    args: 1,
  }]);
  assert(/pg_read_file/.test(namedReach(cast) ?? ""));
  // A type definition's names stay types.
  const type = await analysisOf("CREATE TYPE s.t (input = f, output = g)");
  assertEquals(type.functions, []);
});

Deno.test("parsePostgres() refuses installing SECURITY DEFINER code (outsider stop 54)", async () => {
  for (
    const sql of [
      "CREATE FUNCTION s.d() RETURNS int LANGUAGE sql SECURITY DEFINER AS 'select 1'",
      "CREATE PROCEDURE s.p() LANGUAGE sql EXTERNAL SECURITY DEFINER AS 'select 1'",
      "ALTER FUNCTION s.d() SECURITY DEFINER",
      "ALTER PROCEDURE s.p() STABLE SECURITY DEFINER",
    ]
  ) {
    const analysis = await analysisOf(sql);
    assert(/SECURITY DEFINER/.test(analysis.reach ?? ""), sql);
  }
  for (
    const sql of [
      "CREATE FUNCTION s.i() RETURNS int LANGUAGE sql SECURITY INVOKER AS 'select 1'",
      "ALTER FUNCTION s.i() SECURITY INVOKER",
      "ALTER FUNCTION s.i() STABLE",
    ]
  ) assertEquals((await analysisOf(sql)).reach, null, sql);
});

Deno.test("parsePostgres() reads SQL/JSON and MERGE syntax as calls of those names on older servers (outsider stop 54)", async () => {
  const analysis = await analysisOf(
    "SELECT json_array('a'::text), json('x'), json_scalar(1), json_serialize('x'), json_value('x', '$'), json_query('x', '$'), json_exists('x', '$'), json_object(), json_arrayagg(1), json_object('{a,b}')",
  );
  assertEquals(
    analysis.functions.map((fn) =>
      `${fn.schema ?? ""}.${fn.name}<${fn.before ?? "-"}`
    ),
    [
      ".json_array<160000",
      ".json<170000",
      ".json_scalar<170000",
      ".json_serialize<170000",
      ".json_value<170000",
      ".json_query<170000",
      ".json_exists<170000",
      ".json_object<160000",
      ".json_arrayagg<160000",
      "pg_catalog.json_object<-",
      ".json_object<160000",
    ],
  );
  const merge = await analysisOf(
    "MERGE INTO t USING u ON t.a = u.a WHEN MATCHED THEN UPDATE SET b = merge_action()",
  );
  assert(
    merge.functions.some((fn) =>
      fn.name === "merge_action" && fn.before === 170000
    ),
  );
});

/** The parse's reach, or null (a one-statement text). */
async function reachOf(sql: string): Promise<string | null> {
  const parsed = await parsePostgres(sql);
  assert(parsed.ok && parsed.analysis !== null, sql);
  return parsed.analysis.reach;
}

Deno.test("parsePostgres() refuses GRANT|REVOKE and COMMENT on the server's catalogs' objects; the database's own stay writes (outsider stop 56)", async () => {
  for (
    const sql of [
      "REVOKE EXECUTE ON FUNCTION pg_catalog.now() FROM PUBLIC",
      "GRANT EXECUTE ON FUNCTION pg_catalog.now() TO r",
      "GRANT USAGE ON SCHEMA pg_toast TO r",
      "GRANT USAGE ON SCHEMA pg_catalog, public TO r",
      "GRANT USAGE ON TYPE pg_catalog.int4 TO r",
      "COMMENT ON FUNCTION pg_catalog.now() IS 'x'",
      "COMMENT ON TABLE pg_catalog.pg_class IS 'x'",
      "COMMENT ON TABLE pg_class IS 'x'",
      "COMMENT ON COLUMN pg_catalog.pg_class.relname IS 'x'",
      "COMMENT ON COLUMN pg_class.relname IS 'x'",
      "COMMENT ON SCHEMA pg_toast IS 'x'",
      "COMMENT ON VIEW information_schema.tables IS 'x'",
      "COMMENT ON TRIGGER t ON pg_catalog.pg_class IS 'x'",
      "COMMENT ON AGGREGATE pg_catalog.count(*) IS 'x'",
    ]
  ) {
    assert((await reachOf(sql) ?? "").includes("server's own catalogs"), sql);
  }
  for (
    const sql of [
      "GRANT EXECUTE ON FUNCTION s.f() TO r",
      "GRANT USAGE ON SCHEMA public TO r",
      "COMMENT ON TABLE t IS 'x'",
      "COMMENT ON COLUMN s.t.c IS 'x'",
      "COMMENT ON COLUMN t.pg_c IS 'x'",
      "COMMENT ON SCHEMA s IS 'x'",
      "COMMENT ON FUNCTION f() IS 'x'",
    ]
  ) assertEquals(await reachOf(sql), null, sql);
});

Deno.test("parsePostgres() reads the functions COMMENT ON FUNCTION|AGGREGATE names, for the catalog to tell a built-in (outsider stop 56)", async () => {
  const parsed = await parsePostgres("COMMENT ON FUNCTION now() IS 'x'");
  assert(parsed.ok && parsed.analysis !== null);
  assertEquals(parsed.analysis.functions, [
    // `()` with no argument types: the tree says nothing, so any arity.
    { schema: null, name: "now", args: null },
  ]);
  const aggregate = await parsePostgres("COMMENT ON AGGREGATE count(*) IS 'x'");
  assert(aggregate.ok && aggregate.analysis !== null);
  assertEquals(aggregate.analysis.functions.map((fn) => fn.name), ["count"]);
});

Deno.test("parsePostgres() refuses VACUUM, ANALYZE, REINDEX and CLUSTER of the catalogs, REINDEX SYSTEM|DATABASE and VACUUM FULL of every table; the database's own tables stay writes (outsider stop 56)", async () => {
  for (
    const sql of [
      "VACUUM FULL pg_catalog.pg_authid",
      "VACUUM FULL t, pg_class",
      "VACUUM (FULL, ANALYZE) pg_catalog.pg_class",
      "VACUUM pg_toast.pg_toast_1260",
      "ANALYZE pg_catalog.pg_authid",
      "ANALYZE pg_authid",
      "REINDEX TABLE pg_catalog.pg_authid",
      "REINDEX INDEX pg_class_oid_index",
      "REINDEX TABLE CONCURRENTLY information_schema.sql_features",
      "REINDEX SYSTEM test",
      "REINDEX DATABASE test",
      "REINDEX SCHEMA pg_catalog",
      "CLUSTER pg_class USING pg_class_oid_index",
      "VACUUM FULL",
      "VACUUM (FULL true)",
    ]
  ) {
    assert(
      (await reachOf(sql) ?? "").includes("locks the server's own catalogs"),
      sql,
    );
  }
  for (
    const sql of [
      "VACUUM",
      "VACUUM t",
      "VACUUM FULL s.t",
      "VACUUM (FULL false)",
      "VACUUM (FULL off) t",
      "ANALYZE",
      "ANALYZE s.t (a, b)",
      "REINDEX TABLE s.t",
      "REINDEX INDEX CONCURRENTLY s.i",
      "REINDEX SCHEMA s",
      "CLUSTER s.t USING i",
      "CLUSTER",
    ]
  ) assertEquals(await reachOf(sql), null, sql);
});

Deno.test("a text with lone surrogates is parsed whole: the tail after them is read (outsider stop 57)", async () => {
  for (const k of [1, 2, 20, 41, 80]) {
    const parsed = await parsePostgres(
      `select '${
        "\ud800".repeat(k)
      }x\udc00' as s, pg_read_file('PG_VERSION') as p`,
    );
    assert(parsed.ok && parsed.analysis !== null, String(k));
    assertEquals(
      parsed.analysis.functions.map((call) => call.name),
      ["pg_read_file"],
      String(k),
    );
  }
});
