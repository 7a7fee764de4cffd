/**
 * vetPostgres() against a fake catalog: a stub CatalogExec answers each
 * round's rows as the vetting query would, so the verdict's rules (kinds
 * that need no round trip, nextval as a serial default, depth, cycles,
 * planner folding, credential catalogs, event triggers, bodies) are pinned
 * without a server. What the engine itself decides lives in pg_vet_test.ts.
 */

import { assert, assertEquals, assertMatch } from "@std/assert";
import { type CatalogExec, vetPostgres } from "../../lib/db/postgres/pg_vet.ts";
import { FIRST_USER_OID, vetStatement } from "../../lib/db/postgres/vet_sql.ts";
import type { PgAnalysis } from "../../lib/db/postgres/pg_parse.ts";
import {
  allowlisted,
  allowlistEntries,
  writeAllowlisted,
  writeAllowlistEntries,
} from "../../lib/db/postgres/allowlist.ts";
import { excludedFamily } from "../../scripts/pg_allowlist_families.ts";
import { WRITE_VOLATILE } from "../../scripts/pg_allowlist.ts";

type Row = Record<string, unknown>;

/** A parsed statement with nothing in it but what `over` says. */
function analysis(over: Partial<PgAnalysis> = {}): PgAnalysis {
  return {
    tier: "read",
    dangerous: false,
    reach: null,
    functions: [],
    operators: [],
    castTypes: [],
    relations: [],
    targets: [],
    kinds: ["SelectStmt"],
    ...over,
  };
}

const callF = { functions: [{ schema: null, name: "f", args: 0 }] };

/** A catalog answering `rounds[n]` to the n-th query; records each input. */
function fakeCatalog(rounds: Row[][] | ((round: number) => Row[])) {
  const inputs: Record<string, Record<string, unknown>[]>[] = [];
  const exec: CatalogExec = (text) => {
    const json = /'(\{.*\})'::jsonb/s.exec(text);
    assert(json !== null, "the vetting statement carries its input as JSON");
    inputs.push(JSON.parse(json[1]!.replaceAll("''", "'")));
    const round = inputs.length - 1;
    return Promise.resolve(
      typeof rounds === "function" ? rounds(round) : rounds[round] ?? [],
    );
  };
  return { exec, inputs };
}

/** A pg_proc row as the vetting query answers it. */
function proc(over: Row): Row {
  return {
    row: "p",
    how: "e",
    via: null,
    caller: null,
    oid: 20000,
    name: "f",
    builtin: false,
    volatility: "v",
    language: "sql",
    definer: false,
    kind: "f",
    signature: "f()",
    atomic: false,
    body_writes: false,
    source: null,
    config: null,
    relkind: null,
    target: false,
    item: null,
    ...over,
  };
}

const ALLOWED = allowlistEntries()[0]![0];
const TERMINATE = 2096; // pg_terminate_backend(integer, bigint): not allowed
const NEXTVAL = 1574;
const SLEEP = 2626; // pg_sleep(double precision): a write token's only
const EQSEL = 101; // eqsel(internal, oid, internal, integer): the server's

Deno.test("fake catalog: the fixture's built-ins are what the tests assume", () => {
  assert(allowlisted(ALLOWED));
  assert(!allowlisted(TERMINATE));
  assert(!allowlisted(NEXTVAL));
  assert(!allowlisted(NEXTVAL + 1));
  assert(!allowlisted(SLEEP) && writeAllowlisted(SLEEP));
  assert(!allowlisted(EQSEL) && writeAllowlisted(EQSEL));
  assert(writeAllowlisted(NEXTVAL) && !writeAllowlisted(TERMINATE));
});

for (
  const kind of [
    "SelectStmt",
    "InsertStmt",
    "UpdateStmt",
    "DeleteStmt",
    "MergeStmt",
    "ExplainStmt",
  ]
) {
  Deno.test(`fake catalog: a ${kind} that names nothing → no round trip`, async () => {
    const { exec, inputs } = fakeCatalog([]);
    const vetted = await vetPostgres(exec, analysis({ kinds: [kind] }));
    assertEquals(inputs.length, 0);
    assertEquals(vetted.noDryRun, null);
  });
}

Deno.test("fake catalog: DDL that names nothing → one round trip, for event triggers", async () => {
  const { exec, inputs } = fakeCatalog([[{ row: "x", name: "audit_ddl" }]]);
  const vetted = await vetPostgres(
    exec,
    analysis({ tier: "write", kinds: ["CreateStmt"] }),
  );
  assertEquals(inputs.length, 1);
  assertEquals(vetted.noDryRun, "the event trigger audit_ddl runs code on DDL");
  assertEquals(vetted.noPlan, null);
});

Deno.test("fake catalog: an UPDATE with an enabled event trigger → still dry-runs", async () => {
  const { exec } = fakeCatalog([[{ row: "x", name: "audit_ddl" }]]);
  const vetted = await vetPostgres(
    exec,
    analysis({ tier: "write", kinds: ["UpdateStmt"], ...callF }),
  );
  assertEquals(vetted.noDryRun, null);
  assertEquals(vetted.tier, "write");
});

Deno.test("fake catalog: SELECT f() → asked once with f, its arity and no owner", async () => {
  const { exec, inputs } = fakeCatalog([[
    proc({ oid: ALLOWED, builtin: true }),
  ]]);
  const vetted = await vetPostgres(exec, analysis(callF));
  assertEquals(inputs.length, 1);
  assertEquals(inputs[0]?.f, [{ s: null, n: "f", i: 0, a: 0 }]);
  assertEquals(vetted, {
    tier: "read",
    reach: null,
    why: null,
    denied: null,
    noPlan: null,
    noDryRun: null,
  });
});

Deno.test("fake catalog: SELECT with a deny-listed name → write without asking", async () => {
  const { exec, inputs } = fakeCatalog([]);
  const vetted = await vetPostgres(
    exec,
    analysis({ functions: [{ schema: null, name: "pg_read_file", args: 1 }] }),
  );
  assertEquals(inputs.length, 0);
  assertEquals(vetted.tier, "write");
  assertMatch(vetted.noPlan ?? "", /pg_read_file\(\) reaches files/);
});

Deno.test("fake catalog: nextval as a target's serial default (d) or a cascade child's (t) → dry run allowed", async () => {
  for (const how of ["d", "t"]) {
    const { exec } = fakeCatalog([[
      proc({ oid: NEXTVAL, builtin: true, name: "nextval", how }),
    ]]);
    const vetted = await vetPostgres(
      exec,
      analysis({
        tier: "write",
        kinds: ["InsertStmt"],
        targets: [{ schema: null, name: "t" }],
      }),
    );
    assertEquals(vetted.noDryRun, null, how);
  }
});

Deno.test("fake catalog: nextval called by the statement itself (e) → no dry run, no plan", async () => {
  const { exec } = fakeCatalog([[
    proc({
      oid: NEXTVAL,
      builtin: true,
      name: "nextval",
      volatility: "v",
      language: "internal",
      via: 20000,
    }),
  ]]);
  const vetted = await vetPostgres(exec, analysis(callF));
  assertEquals(vetted.tier, "write");
  assertMatch(
    vetted.noDryRun ?? "",
    /nextval\(\) is not on dbport's allowlist/,
  );
  assertMatch(vetted.noPlan ?? "", /nextval/);
});

Deno.test("fake catalog: a volatile built-in of the write list called directly → write, but EXPLAIN may plan it", async () => {
  const row = proc({
    oid: SLEEP,
    builtin: true,
    name: "pg_sleep",
    volatility: "v",
    language: "internal",
  });
  const direct = await vetPostgres(fakeCatalog([[row]]).exec, analysis(callF));
  assertEquals(direct.tier, "write");
  assertMatch(
    direct.why ?? "",
    /pg_sleep\(\) is not on dbport's allowlist/,
  );
  assertEquals(direct.noPlan, null);
  const explained = await vetPostgres(
    fakeCatalog([[row]]).exec,
    analysis({ ...callF, plansOnly: true }),
  );
  assertEquals(explained.tier, "read");
  assertEquals(explained.why, null);
  assert(explained.noDryRun !== null);
});

Deno.test("fake catalog: a non-allowlisted built-in the planner may fold (stable, sql, or in a body) → EXPLAIN refused", async () => {
  // A built-in of the write list (pg_sleep): one on neither list is reach
  // and refused to the planner whatever its label.
  for (
    const over of [
      { volatility: "s", language: "internal", via: null },
      { volatility: "i", language: "internal", via: null },
      { volatility: "v", language: "sql", via: null },
      { volatility: "v", language: "internal", via: 20000 },
    ]
  ) {
    const row = proc({
      oid: SLEEP,
      builtin: true,
      name: "pg_sleep",
      ...over,
    });
    const vetted = await vetPostgres(
      fakeCatalog([[row]]).exec,
      analysis({ ...callF, plansOnly: true }),
    );
    assertEquals(
      [vetted.tier, vetted.reach, vetted.noPlan],
      [
        "write",
        null,
        "pg_sleep() is not on dbport's allowlist of built-in functions that only compute a result",
      ],
      JSON.stringify(over),
    );
  }
});

Deno.test("fake catalog: a write's trigger function in plpgsql (t) → no dry run, still plannable, tier unchanged", async () => {
  const row = proc({
    how: "t",
    language: "plpgsql",
    signature: "audit()",
    name: "audit",
  });
  const vetted = await vetPostgres(
    fakeCatalog([[row]]).exec,
    analysis({ kinds: ["SelectStmt"], ...callF }),
  );
  assertEquals(vetted.tier, "read");
  assertEquals(vetted.why, null);
  assertEquals(vetted.noPlan, null);
  assertEquals(
    vetted.noDryRun,
    "audit() is written in plpgsql: dbport reads only SQL function bodies",
  );
});

Deno.test("fake catalog: an unresolvable function → write naming it with its arity; an operator without ()", async () => {
  const fn = await vetPostgres(
    fakeCatalog([[{ row: "u", relkind: "f", item: 0, name: "f" }]]).exec,
    analysis({ functions: [{ schema: "s", name: "f", args: 2 }] }),
  );
  assertEquals(fn.tier, "write");
  assertEquals(
    fn.why,
    "no function s.f() is visible to resolve for 2 arguments",
  );
  const variadic = await vetPostgres(
    fakeCatalog([[{ row: "u", relkind: "f", item: 0, name: "f" }]]).exec,
    analysis({ functions: [{ schema: null, name: "f", args: null }] }),
  );
  assertEquals(variadic.why, "no function f() is visible to resolve");
  const op = await vetPostgres(
    fakeCatalog([[{ row: "u", relkind: "o", item: 0, name: "+" }]]).exec,
    analysis({ operators: [{ schema: null, name: "+" }] }),
  );
  assertEquals(op.why, "no operator + is visible to resolve");
});

Deno.test("fake catalog: pg_catalog.pg_authid read → denied; a post-initdb relation of that name (OID 16384) → not", async () => {
  const rel = (oid: number) => ({
    row: "r",
    name: "pg_catalog.pg_authid",
    oid,
    relkind: "r",
    target: false,
    how: "e",
  });
  const relations = [{ schema: null, name: "pg_authid" }];
  const builtin = await vetPostgres(
    fakeCatalog([[rel(1260)]]).exec,
    analysis({ relations }),
  );
  assertMatch(
    builtin.denied ?? "",
    /reads pg_catalog\.pg_authid, which holds every role's password verifier/,
  );
  assertEquals(builtin.tier, "read");
  const user = await vetPostgres(
    fakeCatalog([[rel(16384)]]).exec,
    analysis({ relations }),
  );
  assertEquals(user.denied, null);
});

Deno.test("fake catalog: a foreign or ruled table → no dry run as a target; a foreign table read → a write, no plan", async () => {
  const targets = [{ schema: null, name: "t" }];
  const rel = (relkind: string, target: boolean) => ({
    row: "r",
    name: "public.t",
    oid: 30000,
    relkind,
    target,
    how: "e",
  });
  const write = { tier: "write" as const, kinds: ["InsertStmt"], targets };
  const foreign = await vetPostgres(
    fakeCatalog([[rel("f", true)]]).exec,
    analysis(write),
  );
  assertEquals(
    foreign.noDryRun,
    "public.t is a foreign table: a write there reaches another server",
  );
  const ruled = await vetPostgres(
    fakeCatalog([[rel("rR", true)]]).exec,
    analysis(write),
  );
  assertEquals(
    ruled.noDryRun,
    "public.t has rules that turn a write into other statements",
  );
  const plain = await vetPostgres(
    fakeCatalog([[rel("r", true)]]).exec,
    analysis(write),
  );
  assertEquals(plain.noDryRun, null);
  const read = await vetPostgres(
    fakeCatalog([[rel("f", false)]]).exec,
    analysis({ relations: targets }),
  );
  // Reading it runs its foreign-data wrapper (file_fdw's `program`).
  assertEquals(read.tier, "write");
  assertMatch(read.why ?? "", /public\.t is a foreign table/);
  assert(read.noPlan !== null);
  const ruledRead = await vetPostgres(
    fakeCatalog([[rel("rR", false)]]).exec,
    analysis({ relations: targets }),
  );
  assertEquals(ruledRead.noDryRun, null);
  assertEquals(ruledRead.tier, "read");
});

Deno.test("fake catalog: SQL bodies 8 levels deep → 8 round trips, then write (deeper than 8 levels)", async () => {
  const { exec, inputs } = fakeCatalog((round) => [
    proc({
      oid: 20000 + round,
      via: round === 0 ? null : 20000 + round - 1,
      source: `select g${round}()`,
    }),
  ]);
  const vetted = await vetPostgres(exec, analysis(callF));
  assertEquals(inputs.length, 8);
  assertEquals(vetted.tier, "write");
  assertEquals(
    vetted.why,
    "SQL functions call SQL functions deeper than 8 levels",
  );
});

Deno.test("fake catalog: a body's names are asked next with the body's owner and its own SET search_path", async () => {
  const { exec, inputs } = fakeCatalog([
    [proc({
      source: "select lower(x) from t",
      config: ["search_path=s, public"],
    })],
    [proc({ oid: ALLOWED, builtin: true, via: 20000 })],
  ]);
  const vetted = await vetPostgres(exec, analysis(callF));
  assertEquals(inputs.length, 2);
  assertEquals(inputs[1]?.f, [{
    s: null,
    n: "lower",
    i: 0,
    w: 20000,
    p: ["s", "public"],
    a: 1,
  }]);
  assertEquals(inputs[1]?.r, [{
    s: null,
    n: "t",
    i: 1,
    w: 20000,
    p: ["s", "public"],
  }]);
  assertEquals(vetted.tier, "read");
  assertEquals(vetted.noPlan, null);
});

Deno.test("fake catalog: a body's targets are not asked as the statement's targets", async () => {
  const { exec, inputs } = fakeCatalog([
    [proc({ source: "select 1 from t" })],
    [],
  ]);
  await vetPostgres(
    exec,
    analysis({
      ...callF,
      tier: "write",
      kinds: ["InsertStmt"],
      targets: [{ schema: null, name: "u" }],
    }),
  );
  assertEquals(inputs[0]?.t, [{ s: null, n: "u", i: 1 }]);
  assertEquals(inputs[1]?.t, []);
});

Deno.test("fake catalog: a body already read or without source (BEGIN ATOMIC) → not asked again", async () => {
  const { exec, inputs } = fakeCatalog([
    [
      proc({ source: "select k()" }),
      proc({ source: "select k()" }),
      proc({ oid: 20001, source: null, atomic: true }),
    ],
    [],
  ]);
  const vetted = await vetPostgres(exec, analysis(callF));
  assertEquals(inputs.length, 2);
  assertEquals(inputs[1]?.f?.map((item) => item.n), ["k"]);
  assertEquals(vetted.tier, "read");
});

Deno.test("fake catalog: an unreadable body → refused to every token (reach), naming the function and the parser's reason", async () => {
  const vetted = await vetPostgres(
    fakeCatalog([[proc({ source: "selec garbage (", signature: "f()" })]]).exec,
    analysis(callF),
  );
  // Refuse when unsure: a body the server accepts and dbport's parser does
  // not may reach anything (outsider stop 54).
  assertEquals(vetted.tier, "write");
  assertMatch(
    vetted.reach ?? "",
    /^the body of f\(\) could not be read by dbport's parser \(syntax error at or near "selec"\): it may reach anything, so it is refused$/,
  );
  assertEquals(vetted.why, vetted.reach);
  assertEquals(vetted.noDryRun, vetted.reach);
});

Deno.test("fake catalog: a body that inserts, or one the catalog marks as writing → write", async () => {
  const insert = await vetPostgres(
    fakeCatalog([[proc({ source: "insert into t values (1)" })]]).exec,
    analysis(callF),
  );
  assertEquals(insert.why, "f() changes data (its body is not only SELECTs)");
  const marked = await vetPostgres(
    fakeCatalog([[proc({ body_writes: true, atomic: true })]]).exec,
    analysis(callF),
  );
  assertEquals(marked.why, "f() changes data (its body is not only SELECTs)");
  const deny = await vetPostgres(
    fakeCatalog([[proc({ source: "select pg_read_file('x')" })]]).exec,
    analysis(callF),
  );
  assertMatch(deny.why ?? "", /^f\(\) pg_read_file\(\) reaches files/);
  // Refused to every token, not only a write (outsider stop 53).
  assertMatch(deny.reach ?? "", /^f\(\) pg_read_file\(\) reaches files/);
});

Deno.test("fake catalog: SECURITY DEFINER or C, called from g() → write naming the caller", async () => {
  const definer = await vetPostgres(
    fakeCatalog([[proc({ definer: true, caller: "g()", via: 20001 })]]).exec,
    analysis(callF),
  );
  assertEquals(
    definer.why,
    "f() is SECURITY DEFINER: it runs as its owner (called in g())",
  );
  const c = await vetPostgres(
    fakeCatalog([[proc({ language: "c" })]]).exec,
    analysis(callF),
  );
  assertEquals(
    c.why,
    "f() is written in c: dbport reads only SQL function bodies",
  );
});

Deno.test("fake catalog: f() calls g() calls f() → write, naming f() (the one the statement called)", async () => {
  const { exec } = fakeCatalog([
    [proc({ oid: 20000, signature: "f()", source: "select g()" })],
    [proc({ oid: 20001, via: 20000, signature: "g()", source: "select f()" })],
    [proc({ oid: 20000, via: 20001, signature: "f()", source: "select g()" })],
  ]);
  const vetted = await vetPostgres(exec, analysis(callF));
  assertEquals(vetted.tier, "write");
  assertEquals(
    vetted.why,
    "f() is part of a cycle of SQL functions calling each other",
  );
});

Deno.test("fake catalog: a diamond (f calls g and h, both call k) → read, no cycle", async () => {
  const { exec } = fakeCatalog([
    [proc({ oid: 20000, signature: "f()", source: "select g() + h()" })],
    [
      proc({ oid: 20001, via: 20000, signature: "g()", source: "select k()" }),
      proc({ oid: 20002, via: 20000, signature: "h()", source: "select k()" }),
      proc({ oid: ALLOWED, builtin: true, via: 20000 }),
    ],
    [
      proc({ oid: 20003, via: 20001, signature: "k()", source: "select 1" }),
      proc({ oid: 20003, via: 20002, signature: "k()", source: "select 1" }),
    ],
  ]);
  const vetted = await vetPostgres(exec, analysis(callF));
  assertEquals(vetted.why, null);
  assertEquals(vetted.tier, "read");
});

Deno.test("vet_sql: FIRST_USER_OID is PostgreSQL's FirstNormalObjectId, 16384 (the cluster's first user object gets it)", () => {
  assertEquals(FIRST_USER_OID, 16384);
});

Deno.test("vet_sql: a name with a quote (o'f) reaches the catalog as written, inside one literal", async () => {
  const { exec, inputs } = fakeCatalog([[]]);
  await vetPostgres(
    exec,
    analysis({ functions: [{ schema: "s'x", name: "o'f", args: 1 }] }),
  );
  assertEquals(inputs[0]?.f, [{ s: "s'x", n: "o'f", i: 0, a: 1 }]);
  const text = vetStatement(JSON.stringify({ f: [{ n: "o'f" }] }));
  assert(text.startsWith("SELECT set_config('jit', 'off', true);"));
  assert(text.includes(`'{"f":[{"n":"o''f"}]}'::jsonb`));
  assert(!text.includes("$1::text::jsonb"));
});

Deno.test("fake catalog: the parser's own reach (COPY … PROGRAM) → write with that reach, without asking", async () => {
  const { exec, inputs } = fakeCatalog([]);
  const vetted = await vetPostgres(
    exec,
    analysis({ reach: "runs a program on the server", ...callF }),
  );
  assertEquals(inputs.length, 0);
  assertEquals(vetted.tier, "write");
  assertEquals(vetted.reach, "runs a program on the server");
  assertEquals(vetted.noDryRun, "runs a program on the server");
});

Deno.test("fake catalog: pg_hba_file_rules read → write without asking; t.pg_read_file (maybe a column) → asked, optional", async () => {
  const hba = fakeCatalog([]);
  const file = await vetPostgres(
    hba.exec,
    analysis({ relations: [{ schema: null, name: "pg_hba_file_rules" }] }),
  );
  assertEquals(hba.inputs.length, 0);
  assertEquals(
    file.reach,
    "pg_hba_file_rules shows the server's files or configuration",
  );
  const column = fakeCatalog([[]]);
  const notation = await vetPostgres(
    column.exec,
    analysis({
      functions: [{
        schema: null,
        name: "pg_read_file",
        args: 1,
        optional: true,
      }],
    }),
  );
  assertEquals(column.inputs[0]?.f, [{
    s: null,
    n: "pg_read_file",
    i: 0,
    a: 1,
    o: true,
  }]);
  assertEquals(notation.tier, "read");
});

Deno.test("fake catalog: a built-in relation that holds no credential (pg_roles) → not denied; OID 16383 pg_authid → denied", async () => {
  const rel = (name: string, oid: number) => ({
    row: "r",
    name,
    oid,
    relkind: "v",
    target: false,
    how: "e",
  });
  const roles = await vetPostgres(
    fakeCatalog([[rel("pg_catalog.pg_roles", 12000)]]).exec,
    analysis({ relations: [{ schema: null, name: "pg_roles" }] }),
  );
  assertEquals(roles.denied, null);
  const edge = await vetPostgres(
    fakeCatalog([[rel("pg_catalog.pg_authid", 16383)]]).exec,
    analysis({ relations: [{ schema: null, name: "pg_authid" }] }),
  );
  assertMatch(edge.denied ?? "", /pg_authid/);
});

Deno.test("fake catalog: a body without SET search_path runs with its caller's → its names are asked on the caller's path", async () => {
  const { exec, inputs } = fakeCatalog([
    [proc({
      oid: 20000,
      source: "select g()",
      config: ["work_mem=1MB", "search_path=s"],
    })],
    [proc({ oid: 20001, via: 20000, signature: "g()", source: "select h()" })],
    [],
  ]);
  await vetPostgres(exec, analysis(callF));
  assertEquals(inputs.length, 3);
  assertEquals(inputs[2]?.f, [{
    s: null,
    n: "h",
    i: 0,
    w: 20001,
    p: ["s"],
    a: 0,
  }]);
});

Deno.test("fake catalog: a body reached from the statement without SET search_path → asked on the session's path (no p)", async () => {
  const { exec, inputs } = fakeCatalog([[proc({ source: "select g()" })], []]);
  await vetPostgres(exec, analysis(callF));
  assertEquals(inputs[1]?.f, [{ s: null, n: "g", i: 0, w: 20000, a: 0 }]);
});

Deno.test("fake catalog: a built-in on neither list (signals, pg_reload_conf, WAL) → reach for every token, wherever it runs (outsider stop 56)", async () => {
  const cases: [number, string][] = [
    [TERMINATE, "pg_terminate_backend"],
    [2171, "pg_cancel_backend"],
    [2621, "pg_reload_conf"],
    [2848, "pg_switch_wal"],
    [2274, "pg_stat_reset"],
  ];
  for (const [oid, name] of cases) {
    assert(!allowlisted(oid) && !writeAllowlisted(oid), name);
    for (
      const over of [
        { how: "e", via: null, caller: null },
        { how: "d", via: null, caller: null },
        { how: "t", via: null, caller: null },
        { how: "e", via: 20000, caller: "s.g()" },
      ]
    ) {
      const vetted = await vetPostgres(
        fakeCatalog([[proc({
          oid,
          name,
          builtin: true,
          language: "internal",
          symbol: name,
          ...over,
        })]]).exec,
        analysis({ ...callF, tier: "write", kinds: ["InsertStmt"] }),
      );
      assertMatch(
        vetted.reach ?? "",
        new RegExp(`^${name}\\(\\) is on neither of dbport's allowlists`),
        `${name} ${JSON.stringify(over)}`,
      );
      if (over.caller !== null) {
        assertMatch(vetted.reach ?? "", /\(called in s\.g\(\)\)$/);
      }
    }
  }
});

Deno.test("fake catalog: a built-in of the write list (sequences, set_config, xact advisory locks, pg_notify, a selectivity estimator) → a write, no reach", async () => {
  const cases: [number, string][] = [
    [NEXTVAL, "nextval"],
    [2078, "set_config"],
    [3089, "pg_advisory_xact_lock"],
    [3036, "pg_notify"],
    [SLEEP, "pg_sleep"],
    [EQSEL, "eqsel"],
  ];
  for (const [oid, name] of cases) {
    const vetted = await vetPostgres(
      fakeCatalog([[proc({ oid, name, builtin: true, language: "internal" })]])
        .exec,
      analysis(callF),
    );
    assertEquals(vetted.reach, null, name);
    assertEquals(vetted.tier, "write", name);
  }
});

Deno.test("fake catalog: the write list holds no read-list entry and no excluded family's name but the reviewed ones", () => {
  const entries = writeAllowlistEntries();
  assert(entries.length > 100);
  for (const [oid, signature] of entries) {
    assert(!allowlisted(oid), signature);
    const name = signature.slice(0, signature.indexOf("(")).replaceAll('"', "");
    assert(
      WRITE_VOLATILE.has(name) || excludedFamily(name) === null,
      `${signature} is in the family ${excludedFamily(name)?.family}`,
    );
  }
  for (
    const name of [
      "pg_terminate_backend",
      "pg_cancel_backend",
      "pg_reload_conf",
      "lo_import",
      "pg_read_file",
    ]
  ) {
    assert(
      !entries.some(([, signature]) => signature.startsWith(`${name}(`)),
      name,
    );
  }
});

Deno.test("fake catalog: a user's LANGUAGE internal function → reach unless a built-in of its symbol is on a list (outsider stop 56: an alias of pg_terminate_backend)", async () => {
  const alias = (symbol: string, builtins: number[]) =>
    proc({
      language: "internal",
      symbol,
      symbol_of: builtins,
      signature: "s.t(integer,bigint)",
    });
  const refused = await vetPostgres(
    fakeCatalog([[alias("pg_terminate_backend", [TERMINATE])]]).exec,
    analysis(callF),
  );
  assertMatch(
    refused.reach ?? "",
    /^s\.t\(integer,bigint\) runs pg_terminate_backend/,
  );
  const unknown = await vetPostgres(
    fakeCatalog([[alias("no_such_symbol", [])]]).exec,
    analysis(callF),
  );
  assertMatch(unknown.reach ?? "", /runs no_such_symbol/);
  for (const builtins of [[ALLOWED], [NEXTVAL], [TERMINATE, NEXTVAL]]) {
    const allowed = await vetPostgres(
      fakeCatalog([[alias("x", builtins)]]).exec,
      analysis(callF),
    );
    assertEquals(allowed.reach, null, JSON.stringify(builtins));
    assertEquals(allowed.tier, "write");
    assertMatch(allowed.why ?? "", /written in internal/);
  }
});

Deno.test("fake catalog: GRANT|REVOKE or COMMENT naming a built-in → reach; a user function, a built-in only inside it or a cast its argument types bring → not (outsider stop 56)", async () => {
  const now = proc({ oid: ALLOWED, name: "now", builtin: true });
  const callNow = { functions: [{ schema: null, name: "now", args: null }] };
  for (const kind of ["GrantStmt", "CommentStmt"]) {
    const vetted = await vetPostgres(
      fakeCatalog([[now]]).exec,
      analysis({ ...callNow, tier: "write", kinds: [kind] }),
    );
    assertMatch(
      vetted.reach ?? "",
      /on now\(\) changes a built-in function of pg_catalog/,
      kind,
    );
    const user = await vetPostgres(
      fakeCatalog([[proc({}), { ...now, via: 20000, caller: "f()" }]]).exec,
      analysis({ ...callF, tier: "write", kinds: [kind] }),
    );
    assertEquals(user.reach, null, kind);
    // `grant … on function f(int)`: int's casts are looked up, not named.
    const cast = await vetPostgres(
      fakeCatalog([[proc({}), { ...now, name: "int4" }]]).exec,
      analysis({ ...callF, tier: "write", kinds: [kind] }),
    );
    assertEquals(cast.reach, null, kind);
    // A user's lower(text, integer), unqualified, whose body calls the
    // built-in lower: the built-in is the body's, not a name it gives.
    const inside = await vetPostgres(
      fakeCatalog([[
        proc({ name: "lower", signature: "lower(text,integer)" }),
        { ...now, name: "lower", via: 20000, caller: "lower(text,integer)" },
      ]]).exec,
      analysis({
        functions: [{ schema: null, name: "lower", args: 2 }],
        tier: "write",
        kinds: [kind],
      }),
    );
    assertEquals(inside.reach, null, kind);
    // `grant … on function s.int4(integer)`: a user's int4 in its own
    // schema, beside the built-in int4 casts its argument type brings.
    const qualified = await vetPostgres(
      fakeCatalog([[
        proc({ name: "int4", signature: "s.int4(integer)" }),
        { ...now, name: "int4" },
      ]]).exec,
      analysis({
        functions: [{ schema: "s", name: "int4", args: 1 }],
        tier: "write",
        kinds: [kind],
      }),
    );
    assertEquals(qualified.reach, null, kind);
  }
  const select = await vetPostgres(
    fakeCatalog([[now]]).exec,
    analysis(callNow),
  );
  assertEquals([select.reach, select.tier], [null, "read"]);
});

Deno.test("fake catalog: a user aggregate answered after its support function → the refusal names the aggregate the statement calls", async () => {
  const { exec } = fakeCatalog([[
    proc({
      oid: 20001,
      via: 20000,
      caller: "agg(integer)",
      name: "sfunc",
      language: "plpgsql",
      signature: "sfunc(integer,integer)",
    }),
    proc({
      oid: 20000,
      name: "agg",
      kind: "a",
      language: "internal",
      signature: "agg(integer)",
      symbol: "aggregate_dummy",
      symbol_of: [ALLOWED],
    }),
  ]]);
  const vetted = await vetPostgres(
    exec,
    analysis({ functions: [{ schema: null, name: "agg", args: 1 }] }),
  );
  assertEquals(vetted.tier, "write");
  assertEquals(
    vetted.why,
    "agg(integer) is written in internal: dbport reads only SQL function bodies",
  );
});

Deno.test("fake catalog: ALTER TABLE of a foreign table → reach naming it; of a plain table → not", async () => {
  const rel = (relkind: string) => ({
    row: "r",
    name: "public.ft",
    oid: 30000,
    relkind,
    target: false,
    how: "e",
  });
  const alter = analysis({
    tier: "write",
    kinds: ["AlterTableStmt"],
    relations: [{ schema: null, name: "ft" }],
  });
  const foreign = await vetPostgres(fakeCatalog([[rel("f")]]).exec, alter);
  assertMatch(
    foreign.reach ?? "",
    /^the statement changes or reaches the foreign table public\.ft: renaming it/,
  );
  const plain = await vetPostgres(fakeCatalog([[rel("r")]]).exec, alter);
  assertEquals([plain.tier, plain.reach], ["write", null]);
});
