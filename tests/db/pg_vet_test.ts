/**
 * PostgreSQL reads by allowlist, not by label (lib/db/postgres/pg_vet.ts), on the
 * real engine and below the MCP layer: what the catalog says of each
 * statement — read or write, whether EXPLAIN may plan it, whether a write may
 * be dry-run, whether it touches a credential catalog. Every attack of issue
 * 32 on functions whose label lies, and each class with cases of our own.
 * The effects (sessions killed, statistics reset, remote writes) are proven
 * absent through the tools in tests/e2e/allowlist_attacks_test.ts.
 */

import { assert, assertEquals, assertMatch } from "@std/assert";
import { openPostgres } from "../../lib/db/postgres/postgres.ts";
import type { EngineCheck } from "../../lib/db/types.ts";
import { type Fixture, needs, openFixture } from "../_db.ts";

const OPTIONS = { signal: new AbortController().signal, timeoutMs: 20_000 };

type Verdict = Extract<EngineCheck, { ok: true }>;

/** The functions, views and tables the attacks use, in the fixture's schema. */
async function arm(fixture: Fixture): Promise<void> {
  const s = fixture.schema;
  for (
    const statement of [
      `set check_function_bodies = off`,
      `create table ${s}.log (id serial primary key, msg text)`,
      `create table ${s}.w (id int primary key, v text)`,
      `insert into ${s}.w values (1, 'a'), (2, 'b')`,
      // Labels that lie: IMMUTABLE and STABLE bodies with effects.
      `create function ${s}.imm_kill(pid int) returns boolean immutable language sql as 'select pg_terminate_backend(pid)'`,
      `create function ${s}.imm_cancel(pid int) returns boolean immutable language plpgsql as $$begin return pg_cancel_backend(pid); end$$`,
      `create function ${s}.stable_reset() returns text stable language sql as 'select pg_stat_reset()::text'`,
      `create function ${s}.imm_reload() returns boolean immutable parallel safe language sql as 'select pg_reload_conf()'`,
      `create function ${s}.imm_config() returns text immutable language sql as $$select set_config('work_mem', '1MB', false)$$`,
      `create function ${s}.imm_seq() returns bigint stable language sql as $$select nextval('${s}.log_id_seq')$$`,
      `create function ${s}.imm_sleep() returns void immutable language sql as 'select pg_sleep(0)'`,
      // U& identifiers in bodies.
      `create function ${s}.u_read() returns text immutable language sql as $$select U&"pg\\005fread\\005ffile"('/etc/passwd')$$`,
      `create function ${s}.u_kill(pid int) returns boolean immutable language sql as $$select U&"pg!005fterminate!005fbackend" UESCAPE '!' (pid)$$`,
      `create function ${s}.u_schema() returns text immutable language sql as $$select U&"pg\\005fcatalog".U&"pg\\005fstat\\005freset"()::text$$`,
      // BEGIN ATOMIC / RETURN bodies (prosqlbody, not prosrc).
      `create function ${s}.atomic_ls() returns setof text immutable language sql begin atomic select pg_ls_dir('/etc'); end`,
      `create function ${s}.atomic_kill(pid int) returns boolean immutable language sql return pg_terminate_backend(pid)`,
      `create function ${s}.atomic_reset() returns text immutable language sql begin atomic select pg_stat_reset()::text; end`,
      `create function ${s}.atomic_write() returns int language sql begin atomic insert into ${s}.log (msg) values ('atomic') returning 1; end`,
      `create function ${s}.atomic_pl() returns boolean immutable language sql return ${s}.imm_cancel(0)`,
      `create function ${s}.atomic_authid() returns bigint stable language sql begin atomic select count(*) from pg_authid; end`,
      `create function ${s}.atomic_read(pid int) returns text immutable language sql begin atomic select U&"pg\\005fread\\005ffile"('/etc/hostname'); end`,
      // Harmless SQL functions, whatever their label.
      `create function ${s}.ok_add(i int) returns int immutable language sql return i + 1`,
      `create function ${s}.ok_upper(t text) returns text volatile language sql as 'select upper(t) || lower(t)'`,
      `create function ${s}.ok_nested(i int) returns int language sql as 'select ${s}.ok_add(i) * 2'`,
      // Definer and other languages.
      `create function ${s}.definer() returns int language sql security definer as 'select 1'`,
      // Operators and casts over such functions.
      `create function ${s}.op_kill(int, int) returns boolean immutable language sql as 'select pg_terminate_backend($1) or $2 = 0'`,
      `create operator ${s}.### (leftarg = int, rightarg = int, function = ${s}.op_kill)`,
      `create function ${s}.op_ok(int, int) returns boolean immutable language sql as 'select $1 = $2'`,
      `create operator ${s}.=== (leftarg = int, rightarg = int, function = ${s}.op_ok)`,
      // An operator whose commutator or negator the planner may use instead.
      `create operator ${s}.@!@ (leftarg = int, rightarg = int, function = ${s}.op_kill)`,
      `create operator ${s}.@~@ (leftarg = int, rightarg = int, function = ${s}.op_ok, negator = operator(${s}.@!@))`,
      `create function ${s}.sfunc(state int, x int) returns int language plpgsql as $$begin perform pg_stat_reset(); return state; end$$`,
      `create aggregate ${s}.evil_sum(int) (sfunc = ${s}.sfunc, stype = int, initcond = '0')`,
      `create type ${s}.mood as enum ('calm', 'angry')`,
      `create function ${s}.to_mood(text) returns ${s}.mood immutable language plpgsql as $$begin perform pg_stat_reset(); return 'calm'; end$$`,
      `create cast (text as ${s}.mood) with function ${s}.to_mood(text)`,
      `create domain ${s}.checked as int check (${s}.imm_kill(value) is not null)`,
      `create domain ${s}.fine as int check (value > 0)`,
      // Views, views over views, row-security policies.
      `create view ${s}.v_kill as select pg_terminate_backend(0) as killed`,
      `create view ${s}.v_over as select * from ${s}.v_kill`,
      `create view ${s}.v_imm as select ${s}.imm_kill(0) as killed`,
      `create view ${s}.v_op as select 1 ### 2 as killed`,
      `create view ${s}.v_ok as select id, upper(v) from ${s}.w`,
      `create view ${s}.v_ok_over as select * from ${s}.v_ok where id > 0`,
      `create view ${s}.v_authid as select rolname, rolpassword from pg_authid`,
      `create table ${s}.guarded (x int)`,
      `alter table ${s}.guarded enable row level security`,
      `create policy p on ${s}.guarded using (${s}.imm_kill(0) is not null)`,
      // A table whose writes run code: defaults, checks, triggers, cascades.
      `create table ${s}.defaulted (id int, at text default ${s}.stable_reset())`,
      `create table ${s}.constrained (id int check (${s}.imm_kill(id) is not null))`,
      `create table ${s}.domained (id ${s}.checked)`,
      `create domain ${s}.defaulted_text as text default ${s}.stable_reset()`,
      `create table ${s}.domain_default (id int, at ${s}.defaulted_text)`,
      `create function ${s}.trig() returns trigger language plpgsql as $$begin perform pg_stat_reset(); return new; end$$`,
      `create table ${s}.triggered (id int primary key)`,
      `create trigger t before insert or update or delete on ${s}.triggered for each row execute function ${s}.trig()`,
      `create table ${s}.parent (id int primary key)`,
      `create table ${s}.child (id int, parent int references ${s}.parent on delete cascade)`,
      `create trigger t before delete on ${s}.child for each row execute function ${s}.trig()`,
      `create table ${s}.ruled (id int)`,
      `create rule r as on insert to ${s}.ruled do also insert into ${s}.log (msg) values ('rule')`,
      // Recursion: a cycle of SQL functions.
      `create function ${s}.cyc_a(i int) returns int language sql as 'select ${s}.cyc_b(i)'`,
      `create function ${s}.cyc_b(i int) returns int language sql as 'select ${s}.cyc_a(i)'`,
      // search_path games: a user schema shadowing pg_catalog names.
      `create schema ${s}_shadow`,
      `create function ${s}_shadow.lower(text) returns text language plpgsql as $$begin perform pg_stat_reset(); return $1; end$$`,
      `create function ${s}.pathed(t text) returns text immutable language sql set search_path = ${s}_shadow, pg_catalog as 'select lower(t)'`,
      `create function ${s}.unpathed(t text) returns text immutable language sql set search_path = pg_catalog as 'select lower(t)'`,
      `create operator ${s}_shadow.+ (leftarg = int, rightarg = int, function = ${s}.op_kill)`,
      `create function ${s}.plus(i int) returns int immutable language sql set search_path = ${s}_shadow, pg_catalog as 'select i + 1'`,
      `create function ${s}.abs(int) returns int language plpgsql as $$begin perform pg_stat_reset(); return $1; end$$`,
      // Polymorphic and variadic overloads.
      `create function ${s}.poly(variadic anyarray) returns int language plpgsql as $$begin perform pg_stat_reset(); return 1; end$$`,
      `create function ${s}.row_kill(r ${s}.w) returns boolean language plpgsql as $$begin return pg_terminate_backend(0); end$$`,
    ]
  ) await fixture.admin(statement);
}

async function setUp() {
  const fixture = await openFixture("postgres");
  try {
    await arm(fixture);
  } catch (error) {
    await fixture.admin(
      `drop schema if exists ${fixture.schema}_shadow cascade`,
    );
    await fixture[Symbol.asyncDispose]();
    throw error;
  }
  const driver = openPostgres({
    url: `${fixture.url}?search_path=${fixture.schema}`,
    secrets: [],
  });
  const check = async (sql: string): Promise<Verdict> => {
    const verdict = await driver.check(sql, "read", OPTIONS);
    assert(verdict.ok, `${sql}: ${JSON.stringify(verdict)}`);
    return verdict;
  };
  return {
    s: fixture.schema,
    check,
    /** A statement as the superuser, in the fixture's database. */
    admin: (sql: string) => fixture.admin(sql),
    /** A statement that must not count as a read, naming why. */
    async write(sql: string, why: RegExp) {
      const verdict = await check(sql);
      assertEquals(verdict.tier === "read", false, `${sql} read`);
      const said = verdict.why ?? verdict.reach ?? "";
      assertMatch(said, why, sql);
      return verdict;
    },
    async read(sql: string) {
      const verdict = await check(sql);
      assertEquals(
        [verdict.tier, verdict.why, verdict.denied ?? null],
        ["read", null, null],
        sql,
      );
      return verdict;
    },
    async [Symbol.asyncDispose]() {
      await driver.close();
      await fixture.admin(`drop schema ${fixture.schema}_shadow cascade`);
      await fixture[Symbol.asyncDispose]();
    },
  };
}

type Setup = Awaited<ReturnType<typeof setUp>>;

/** A test on its own armed schema. */
function vetTest(name: string, body: (t: Setup) => Promise<void>): void {
  Deno.test(`postgres: ${name}`, needs("postgres"), async () => {
    await using t = await setUp();
    await body(t);
  });
}

const NOT_LISTED =
  /not on dbport's allowlist|on neither of dbport's allowlists/;

vetTest(
  "functions whose IMMUTABLE or STABLE label lies are writes, wherever they are called",
  async (t) => {
    const { s } = t;
    // The issue's cases: VALUES, LATERAL, scalar subquery, WHERE, ORDER BY, FROM f().
    for (
      const sql of [
        `select ${s}.imm_kill(0)`,
        `values (${s}.imm_kill(0))`,
        `select * from ${s}.w, lateral (select ${s}.imm_kill(0)) k`,
        `select (select ${s}.imm_kill(0))`,
        `select * from ${s}.w where ${s}.imm_kill(id)`,
        `select * from ${s}.w order by ${s}.imm_kill(id)`,
        `select * from ${s}.imm_kill(0)`,
        `select pg_stat_reset()`,
        `select pg_reload_conf()`,
        `select ${s}.stable_reset()`,
        `select ${s}.imm_reload()`,
        `select ${s}.imm_config()`,
        `select ${s}.imm_seq()`,
        `select ${s}.imm_sleep()`,
        `with x as (select ${s}.imm_kill(0)) select * from x`,
        `select count(*) filter (where ${s}.imm_kill(id)) from ${s}.w`,
        `select row_number() over (order by ${s}.imm_kill(id)) from ${s}.w`,
        `select * from ${s}.w group by id having ${s}.imm_kill(id)`,
      ]
    ) await t.write(sql, NOT_LISTED);
    // plpgsql (and SECURITY DEFINER) are never read, whatever their label.
    await t.write(`select ${s}.imm_cancel(0)`, /written in plpgsql/);
    await t.write(`select 1 from ${s}.w where ${s}.imm_cancel(id)`, /plpgsql/);
    await t.write(`select ${s}.definer()`, /SECURITY DEFINER/);
    // A function that does not exist is no read either.
    await t.write(`select ${s}.no_such_fn(1)`, /no function/);
  },
);

vetTest(
  "BEGIN ATOMIC and RETURN bodies (prosqlbody) are read by their stored trees",
  async (t) => {
    const { s } = t;
    await t.write(`select * from ${s}.atomic_ls()`, /pg_ls_dir/);
    await t.write(`select ${s}.atomic_kill(0)`, /pg_terminate_backend/);
    await t.write(`select ${s}.atomic_reset()`, /pg_stat_reset/);
    await t.write(`select ${s}.atomic_write()`, /changes data/);
    await t.write(`select ${s}.atomic_pl()`, /imm_cancel.*plpgsql/);
    await t.write(`select ${s}.atomic_read(1)`, /pg_read_file/);
    await t.read(
      `select ${s}.ok_add(1), ${s}.ok_upper('x'), ${s}.ok_nested(2)`,
    );
    await t.write(`select ${s}.cyc_a(1)`, /cycle/);
  },
);

vetTest(
  "U& identifiers are decoded by the parser, in statements and in bodies",
  async (t) => {
    const { s } = t;
    await t.write(
      `select U&"pg\\005fread\\005ffile"('/etc/passwd')`,
      /pg_read_file/,
    );
    await t.write(`select ${s}.u_read()`, /pg_read_file/);
    await t.write(`select ${s}.u_kill(0)`, /pg_terminate_backend/);
    await t.write(`select ${s}.u_schema()`, /pg_stat_reset/);
    await t.write(
      `select U&"pg!005fterminate!005fbackend" UESCAPE '!' (0)`,
      /pg_terminate_backend/,
    );
    await t.write(
      `select U&"pg\\005fcatalog".U&"pg\\005fcancel\\005fbackend"(0)`,
      /pg_cancel_backend/,
    );
    await t.write(`select U&"\\0070g_sleep"(0)`, /pg_sleep/);
    const denied = await t.check(`select * from U&"pg\\005fauthid"`);
    assertMatch(denied.denied ?? "", /pg_authid/);
  },
);

vetTest(
  "operators, casts, domains, views over views and policies are followed to their functions",
  async (t) => {
    const { s } = t;
    await t.write(
      `select 1 operator(${s}.###) 2`,
      /op_kill.*pg_terminate_backend|pg_terminate_backend/,
    );
    await t.write(
      `select * from ${s}.w where id operator(${s}.###) 0`,
      /pg_terminate_backend/,
    );
    await t.write(`select 'calm'::text::${s}.mood`, /to_mood.*plpgsql/);
    await t.write(`select cast('x' as ${s}.mood)`, /plpgsql/);
    await t.write(`select 1::${s}.checked`, /pg_terminate_backend/);
    await t.write(`select '{1}'::${s}.checked[]`, /pg_terminate_backend/);
    await t.write(
      `select jsonb_populate_record(null::${s}.domained, '{"id": 1}')`,
      /pg_terminate_backend/,
    );
    await t.write(`select * from ${s}.v_kill`, /pg_terminate_backend/);
    await t.write(`select * from ${s}.v_over`, /pg_terminate_backend/);
    await t.write(`select * from ${s}.v_imm`, /pg_terminate_backend/);
    await t.write(`select * from ${s}.v_op`, /pg_terminate_backend/);
    await t.write(`select * from ${s}.guarded`, /pg_terminate_backend/);
    await t.write(`select w.row_kill from ${s}.w`, /row_kill.*plpgsql/);
    await t.read(`select 1 operator(${s}.===) 1, 2::${s}.fine`);
    await t.write(
      `select not (1 operator(${s}.@~@) 2)`,
      /pg_terminate_backend/,
    );
    // A user + on a body's search path is a candidate of its i + 1.
    await t.write(`select ${s}.plus(1)`, /pg_terminate_backend/);
    await t.read(`select 1 operator(pg_catalog.+) 1`);
    await t.write(`select ${s}.evil_sum(id) from ${s}.w`, /evil_sum.*internal/);
    await t.read(`select * from ${s}.v_ok_over`);
    // Over-approximation: every cast to mood counts, so even a literal's
    // (which the server reads with enum_in) is refused while to_mood exists.
    await t.write(`select 'calm'::${s}.mood`, /to_mood/);
  },
);

vetTest(
  "search_path games, overloads and functional notation resolve to every candidate",
  async (t) => {
    const { s } = t;
    // The function's own SET search_path puts a shadowing lower() first.
    await t.write(`select ${s}.pathed('A')`, /lower.*plpgsql/);
    await t.read(`select ${s}.unpathed('A')`);
    // abs(int) in the session's schema is a candidate beside pg_catalog's.
    await t.write(`select abs(1)`, /abs\(integer\).*plpgsql/);
    await t.write(`select ${s}.poly(1, 2, 3)`, /poly.*plpgsql/);
    await t.write(`select ${s}.poly(variadic array[1])`, /poly/);
    // Schema-qualified to pg_catalog: only pg_catalog's candidates.
    await t.read(`select pg_catalog.abs(-1), pg_catalog.lower('A')`);
  },
);

vetTest(
  "credential catalogs are denied, directly, in views and in function bodies",
  async (t) => {
    const { s } = t;
    for (
      const sql of [
        `select rolname, rolpassword from pg_authid`,
        `select * from pg_catalog.pg_shadow`,
        `select * from "pg_user_mappings"`,
        `select umoptions from pg_catalog.pg_user_mapping`,
        `select * from ${s}.v_authid`,
        `select ${s}.atomic_authid()`,
        `with a as (select * from PG_AUTHID) select count(*) from a`,
        `select (select count(*) from pg_authid)`,
        `explain select * from pg_authid`,
      ]
    ) {
      const verdict = await t.check(sql);
      assertMatch(verdict.denied ?? "", /credential catalog/, sql);
    }
    // The masked built-in views stay readable.
    await t.read(`select rolname, rolpassword from pg_roles`);
    await t.read(`select usename, passwd from pg_user`);
  },
);

vetTest(
  "EXPLAIN is planned only when planning can run nothing unknown",
  async (t) => {
    const { s } = t;
    for (
      const sql of [
        `select ${s}.imm_kill(0)`,
        `select ${s}.atomic_kill(0)`,
        `select ${s}.u_kill(0)`,
        `select 1 operator(${s}.###) 2`,
        `select * from ${s}.v_imm`,
        `update ${s}.w set v = ${s}.imm_kill(0)::text where id = 1`,
        `select ${s}.imm_cancel(0)`,
      ]
    ) {
      const verdict = await t.check(sql);
      assert(verdict.noPlan !== null, `${sql} may be planned`);
      const explained = await t.check(`explain ${sql}`);
      assertEquals(explained.tier === "read", false, `explain ${sql} read`);
    }
    // A built-in VOLATILE function called directly is never folded.
    const direct = await t.check(`select pg_sleep(0)`);
    assertEquals(direct.noPlan, null);
    assertEquals(
      (await t.check(`explain select count(*) from ${s}.w`)).tier,
      "read",
    );
  },
);

vetTest(
  "a write is dry-run only when nothing it runs can escape the rollback",
  async (t) => {
    const { s } = t;
    for (
      const [sql, why] of [
        [
          `update ${s}.w set v = "pg_terminate_backend"(a.pid)::text from pg_stat_activity a where false`,
          /pg_terminate_backend/,
        ],
        [
          `update ${s}.w set v = pg_terminate_backend/**/(0)::text where id = 1`,
          /pg_terminate_backend/,
        ],
        [
          `insert into ${s}.log (msg) values (pg_stat_reset()::text)`,
          /pg_stat_reset/,
        ],
        [
          `insert into ${s}.log (msg) values (pg_reload_conf()::text)`,
          /pg_reload_conf/,
        ],
        [
          `insert into ${s}.log (msg) values (${s}.imm_kill(0)::text)`,
          /pg_terminate_backend/,
        ],
        [`insert into ${s}.defaulted (id) values (1)`, /pg_stat_reset/],
        [`insert into ${s}.constrained values (1)`, /pg_terminate_backend/],
        [`insert into ${s}.domained values (1)`, /pg_terminate_backend/],
        [`insert into ${s}.domain_default (id) values (1)`, /pg_stat_reset/],
        [`insert into ${s}.triggered values (1)`, /trig.*plpgsql/],
        [`delete from ${s}.parent where id = 1`, /trig.*plpgsql/],
        [`insert into ${s}.ruled values (1)`, /rules/],
        [
          `with d as (delete from ${s}.triggered returning 1) select 1`,
          /plpgsql/,
        ],
        [
          `update ${s}.w set v = 'x' where ${s}.imm_kill(id)`,
          /pg_terminate_backend/,
        ],
        [`analyze ${s}.w`, /ANALYZE/],
      ] as const
    ) {
      const verdict = await t.check(sql);
      assertMatch(verdict.noDryRun ?? "", why, sql);
    }
    // Triggers do not fire while planning: the estimate stays available.
    assertEquals(
      (await t.check(`insert into ${s}.triggered values (1)`)).noPlan,
      null,
    );
    for (
      const sql of [
        `update ${s}.w set v = upper(v) where id = 1`,
        `insert into ${s}.log (msg) values ('plain')`,
        `delete from ${s}.w where id in (select id from ${s}.w where v like 'a%')`,
        `update ${s}.w set v = ${s}.ok_upper(v) where id = 1`,
        `insert into ${s}.w select id + 10, v from ${s}.w`,
      ]
    ) {
      assertEquals((await t.check(sql)).noDryRun, null, sql);
    }
  },
);

vetTest(
  "ordinary reads stay reads",
  async (t) => {
    const { s } = t;
    for (
      const sql of [
        `select b.title, a.name from ${s}.books b join ${s}.authors a on a.id = b.author_id`,
        `select author_id, count(*), avg(price), string_agg(title, ', ' order by title) from ${s}.books group by author_id having count(*) > 0`,
        `select jsonb_build_object('a', 1) -> 'a', '{"x": [1, 2]}'::jsonb #> '{x,1}', jsonb_path_query_array('{"a":[1,2]}', '$.a[*]')`,
        `select now() - interval '1 day', date_trunc('month', current_date), extract(year from now()), age(timestamp '2020-01-01')`,
        `select x, sum(x) over (order by x rows between 1 preceding and current row), rank() over (order by x desc) from generate_series(1, 5) x`,
        `with recursive r(n) as (select 1 union all select n + 1 from r where n < 5) select n from r`,
        `select upper(name), substring(name from 2), regexp_replace(name, 'a', 'b'), format('%s!', name), name || '?' from ${s}.authors`,
        `select * from pg_catalog.pg_class c join pg_namespace n on n.oid = c.relnamespace where n.nspname = '${s}'`,
        `select table_name, column_name, data_type from information_schema.columns where table_schema = '${s}'`,
        `select pg_get_viewdef('${s}.v_ok'::regclass), pg_total_relation_size('${s}.w'), has_table_privilege('${s}.w', 'select')`,
        `select int4range(1, 5) @> 3, int4multirange(int4range(1, 2)), array_agg(x order by x) from unnest(array[3, 1, 2]) x`,
        `select to_tsvector('english', 'the quick fox') @@ plainto_tsquery('english', 'fox')`,
        `select 1 between 0 and 2, 'a' like 'a%', 'b' ilike 'B', 3 in (1, 2, 3), coalesce(null, 1), nullif(1, 2), greatest(1, 2)`,
        `select case id when 1 then 'one' else 'other' end from ${s}.w order by id using <`,
        `select * from ${s}.w tablesample bernoulli (50) repeatable (1)`,
        `select count(*) from ${s}.w natural join ${s}.w w2`,
        `select * from ${s}.books where author_id = any (array[1, 2]) and price is distinct from 0`,
        `select random() < 2, gen_random_uuid() is not null, clock_timestamp() > now() - interval '1 hour'`,
        `select md5('x'), encode(sha256('x'), 'hex'), xpath('/a/text()', '<a>1</a>'::xml)`,
        `select * from pg_stat_activity where pid = pg_backend_pid()`,
        `explain select * from ${s}.books where author_id = 1`,
        `select * from ${s}.v_ok`,
        `select percentile_cont(0.5) within group (order by price), mode() within group (order by author_id) from ${s}.books`,
      ]
    ) await t.read(sql);
  },
);

vetTest(
  "a user-made implicit cast whose function is not acceptable makes statements writes",
  async (t) => {
    const { s } = t;
    const fixture = await openFixture("postgres");
    try {
      await fixture.admin(
        `create function ${fixture.schema}.w_to_int(${s}.w) returns int language plpgsql as $$begin perform pg_stat_reset(); return 1; end$$`,
      );
      await fixture.admin(
        `create cast (${s}.w as int) with function ${fixture.schema}.w_to_int(${s}.w) as implicit`,
      );
      // Nothing names the cast; the server would apply it unseen.
      await t.write(
        `select pg_catalog.abs(w) from ${s}.w`,
        /w_to_int.*plpgsql/,
      );
      await t.write(`select pg_catalog.abs(x.w) from ${s}.w x`, /w_to_int/);
      const insert = await t.check(
        `insert into ${s}.log (id) select w from ${s}.w`,
      );
      assertMatch(insert.noDryRun ?? "", /w_to_int/);
      // No value of type w in play: the cast cannot run, nothing refused.
      await t.read(`select lower('x')`);
      await t.read(`select id from ${s}.log`);
    } finally {
      await fixture[Symbol.asyncDispose]();
    }
    await t.read(`select lower('x')`);
  },
);

vetTest(
  "an enabled event trigger keeps DDL from a dry run",
  async (t) => {
    const { s } = t;
    const fixture = await openFixture("postgres");
    const name = `${fixture.schema}_evt`;
    try {
      await fixture.admin(
        `create function ${fixture.schema}.on_ddl() returns event_trigger language plpgsql as $$begin null; end$$`,
      );
      // Fires only on a tag no one else uses: harmless to other tests.
      await fixture.admin(
        `create event trigger ${name} on ddl_command_start when tag in ('CREATE CONVERSION') execute function ${fixture.schema}.on_ddl()`,
      );
      const ddl = await t.check(`create table ${s}.fresh (id int)`);
      assertMatch(ddl.noDryRun ?? "", new RegExp(`event trigger ${name}`));
      const schema = await t.check(`create schema ${s}_other`);
      assertMatch(schema.noDryRun ?? "", /event trigger/);
      assertEquals(
        (await t.check(`update ${s}.w set v = 'x' where id = 1`)).noDryRun,
        null,
      );
    } finally {
      await fixture.admin(`drop event trigger if exists ${name}`);
      await fixture[Symbol.asyncDispose]();
    }
  },
);

vetTest(
  "a user cast counts only where a value of its source type is in play; ordered-set aggregates are reads",
  async (t) => {
    const { s } = t;
    const fixture = await openFixture("postgres");
    const o = fixture.schema;
    try {
      // Someone else's schema, not on the path: a plpgsql cast to int.
      await fixture.admin(`create table ${o}.w2 (id int)`);
      await fixture.admin(
        `create function ${o}.w2_to_int(${o}.w2) returns int language plpgsql as $$begin perform pg_stat_reset(); return 1; end$$`,
      );
      await fixture.admin(
        `create cast (${o}.w2 as int) with function ${o}.w2_to_int(${o}.w2)`,
      );
      for (
        const sql of [
          `select '1'::int, id::int, cast(v as varchar)::text from ${s}.w`,
          `select last_value::int from ${s}.log_id_seq`,
          `select percentile_disc(0.5) within group (order by id), percentile_cont(array[0.25, 0.5]) within group (order by id) from ${s}.w`,
          `select mode() within group (order by v) from ${s}.w`,
        ]
      ) await t.read(sql);
      // Where a w2 is in play, the cast can run: a write.
      await t.write(`select x::int from ${o}.w2 x`, /w2_to_int.*plpgsql/);
    } finally {
      await fixture[Symbol.asyncDispose]();
    }
  },
);

vetTest(
  "foreign tables, index and partition-key operator classes and user types' code are followed",
  async (t) => {
    const { s } = t;
    for (
      const statement of [
        `create function ${s}.cmp(a int4, b int4) returns int4 immutable language plpgsql as $$begin return btint4cmp(a, b); end$$`,
        `create operator class ${s}.ops for type int4 using btree as operator 1 <, operator 2 <=, operator 3 =, operator 4 >=, operator 5 >, function 1 ${s}.cmp(int4, int4)`,
        `create type ${s}.r as range (subtype = int4, subtype_opclass = ${s}.ops)`,
        `create type ${s}.rt as (id int, r ${s}.r)`,
        `create table ${s}.ix (id int, v text)`,
        `create index on ${s}.ix (v, id ${s}.ops)`,
        `create table ${s}.pt (id int) partition by range (id ${s}.ops)`,
        `create table ${s}.pt1 partition of ${s}.pt for values from (0) to (10)`,
        // A user operator whose selectivity estimator the planner calls.
        `create function ${s}.mysel(internal, oid, internal, integer) returns float8 stable language internal as 'eqsel'`,
        `create operator ${s}.=~= (leftarg = int, rightarg = int, function = ${s}.op_ok, restrict = ${s}.mysel)`,
        `create table ${s}.plain_ix (id int primary key, r int4range)`,
        `create index on ${s}.plain_ix using gist (r)`,
      ]
    ) await t.admin(statement);
    for (
      const sql of [
        `select '[1,5]'::${s}.r`,
        `select '{[1,2]}'::${s}.r_multirange`,
        `select row(1, '[1,3]')::${s}.rt`,
        `select * from jsonb_populate_record(null::${s}.rt, '{"r":"[1,3]"}')`,
        `select * from ${s}.ix where id = 5`,
        `select * from ${s}.pt1`,
        `select * from ${s}.pt where id = 3`,
      ]
    ) {
      const verdict = await t.write(sql, /cmp\(integer,integer\).*plpgsql/);
      assertMatch(verdict.noPlan ?? "", /cmp/, sql);
    }
    await t.write(
      `select * from ${s}.w where id operator(${s}.=~=) 1`,
      /mysel.*internal/,
    );
    const update = await t.check(`update ${s}.ix set v = 'z' where id = 5`);
    assertMatch(update.noDryRun ?? "", /cmp/);
    // Built-in classes and types stay reads; a plain write still dry-runs.
    await t.read(`select * from ${s}.plain_ix where r && int4range(1, 3)`);
    assertEquals(
      (await t.check(`update ${s}.plain_ix set r = '[1,2)' where id = 1`))
        .noDryRun,
      null,
    );
  },
);

vetTest(
  "a user aggregate's support functions, CALL's procedure, and what a refused or writing SQL body calls and writes are followed; an unreadable body is reach (outsider stop 54)",
  async (t) => {
    const s = t.s;
    for (
      const statement of [
        `create function ${s}.ok_cat(st text, x text) returns text language sql as 'select st || x'`,
        `create function ${s}.rd(x text) returns text language sql as 'select pg_read_file(x)'`,
        `create aggregate ${s}.agg_ok(text) (sfunc = ${s}.ok_cat, stype = text)`,
        `create aggregate ${s}.agg_fin(text) (sfunc = textcat, stype = text, finalfunc = ${s}.rd)`,
        `create aggregate ${s}.agg_m(text) (sfunc = textcat, stype = text, msfunc = textcat, minvfunc = textcat, mstype = text, mfinalfunc = pg_read_file)`,
        `create view ${s}.v_agg as select ${s}.agg_fin(v) from ${s}.w`,
        `create procedure ${s}.pr_copy() language sql as $b$ copy ${s}.log (msg) from program 'true' $b$`,
        `create procedure ${s}.pr_pl() language plpgsql as $b$ begin perform pg_stat_reset(); end $b$`,
        `create procedure ${s}.pr_out(in a int, out b int) language sql as 'select a + 1'`,
        `create function ${s}.w_rd() returns text language sql as $b$ insert into ${s}.log (msg) select ${s}.rd('PG_VERSION'); select 'x' $b$`,
        `create table ${s}.read_default (a int, b text default pg_read_file('PG_VERSION'))`,
        `create function ${s}.w_default() returns text language sql as $b$ insert into ${s}.read_default (a) values (1); select 'x' $b$`,
        `create function ${s}.def_rd() returns text language sql security definer as 'select pg_read_file(''PG_VERSION'')'`,
        `create function ${s}.def_authid() returns bigint language sql security definer as 'select count(*) from pg_authid'`,
        `create function ${s}.unread() returns text language sql as 'select x from (select 1) as system_user(x)'`,
      ]
    ) await t.admin(statement);
    const reach = async (sql: string, why: RegExp) => {
      const verdict = await t.check(sql);
      assertMatch(verdict.reach ?? "", why, sql);
      assertEquals(verdict.noDryRun, verdict.reach, sql);
    };
    // A harmless aggregate is still a write (refused to a readOnly token).
    await t.write(`select ${s}.agg_ok(v) from ${s}.w`, /agg_ok.*internal/);
    await reach(`select ${s}.agg_fin(v) from ${s}.w`, /pg_read_file/);
    await reach(`select * from ${s}.v_agg`, /pg_read_file/);
    await reach(
      `select ${s}.agg_m(v) over (rows current row) from ${s}.w`,
      /pg_read_file.*called in .*agg_m/,
    );
    await reach(
      `create aggregate ${s}.agg_new(text) (sfunc = textcat, stype = text, combinefunc = pg_read_file)`,
      /pg_read_file/,
    );
    // CALL: every candidate of the name, whatever the arity.
    await reach(`call ${s}.pr_copy()`, /COPY/);
    const pl = await t.check(`call ${s}.pr_pl()`);
    assertEquals(pl.reach, null);
    assertMatch(pl.noDryRun ?? "", /pr_pl\(\) is written in plpgsql/);
    assertEquals((await t.check(`call ${s}.pr_out(1, null)`)).noDryRun, null);
    // A body that writes is still followed: what it calls, what it writes.
    await reach(`select ${s}.w_rd()`, /rd\(text\) pg_read_file/);
    await reach(
      `select ${s}.w_default()`,
      /pg_read_file.*called in .*w_default/,
    );
    // A SECURITY DEFINER body is read.
    await reach(`select ${s}.def_rd()`, /pg_read_file/);
    const authid = await t.check(`select ${s}.def_authid()`);
    assertMatch(authid.denied ?? "", /pg_authid/);
    // A body the server accepts and the parser does not: refused.
    await reach(`select ${s}.unread()`, /could not be read by dbport's parser/);
  },
);

vetTest(
  "a GRANT never hands a role what dbport refuses by name: role membership (predefined roles and any other), power attributes, the catalogs and their TOAST, refused functions (outsider stop 54's left-over, stop 55)",
  async (t) => {
    const s = t.s;
    await t.admin(
      `create function ${s}.harmless(x int) returns int language sql as 'select x + 1'`,
    );
    const reach = async (sql: string, why: RegExp) => {
      const verdict = await t.check(sql);
      assertMatch(verdict.reach ?? "", why, sql);
    };
    await reach(
      "grant execute on function pg_read_file(text) to public",
      /pg_read_file/,
    );
    await reach(
      "grant execute on all functions in schema pg_catalog to public",
      /IN SCHEMA pg_catalog/,
    );
    await reach(
      "grant pg_execute_server_program to public",
      /GRANT of a role \(pg_execute_server_program\) changes role membership/,
    );
    await reach("alter group pg_read_server_files add user postgres", /GROUP/);
    await reach(
      "create role s54_never login in role pg_read_all_data",
      /IN ROLE/,
    );
    // Membership in any role, not only a predefined one: which roles hold
    // the server's powers (a superuser login) is not guessed (stop 55).
    const membership = /changes role membership.*server's administrator/;
    for (
      const sql of [
        "grant postgres to s55_carl",
        "grant s55_bob to s55_carl with admin option",
        "revoke s55_bob from s55_carl",
        "revoke pg_read_server_files from public",
        "create role s55_never in role postgres",
        "create user s55_never in group s55_bob",
        "create role s55_never role s55_carl",
        "create group s55_never user s55_carl",
        "create role s55_never admin s55_carl",
        "alter group s55_bob add user s55_carl",
        "alter group s55_bob drop user s55_carl",
      ]
    ) await reach(sql, membership);
    await reach(
      "grant select on pg_toast.pg_toast_1260 to public",
      /pg_toast\.pg_toast_1260/,
    );
    await reach(
      "grant select on all tables in schema pg_toast to public",
      /IN SCHEMA pg_toast/,
    );
    // A text the lexer reads as one BEGIN ATOMIC body and PostgreSQL's
    // parser as three statements (`AS case` is a label): refused.
    await reach(
      "create function s55_f() returns int language sql begin atomic select 1 as case; end; grant postgres to s55_carl; end",
      /parser reads 3 statements/,
    );
    // A foreign table (file_fdw): any change of it is reach, by the parser
    // (ALTER FOREIGN TABLE, OPTIONS) or by the catalog (ALTER TABLE ft …).
    await t.admin(
      `create server ${s}_srv foreign data wrapper file_fdw; create foreign table ${s}.ft (line text) server ${s}_srv options (filename '/dev/null')`,
    );
    try {
      await reach(
        `alter foreign table ${s}.ft options (set filename 'PG_VERSION')`,
        /OPTIONS changes what a foreign table reaches/,
      );
      await reach(`alter table ${s}.ft options (set filename 'x')`, /OPTIONS/);
      await reach(`alter foreign table ${s}.ft add column c text`, /FOREIGN/);
      for (
        const sql of [
          `alter table ${s}.ft add column c text`,
          `alter table ${s}.ft rename column line to other`,
          `alter table ${s}.ft rename to ft2`,
          `alter table ${s}.ft set schema ${s}_shadow`,
        ]
      ) await reach(sql, /foreign table .*ft: renaming it/);
      await reach(`alter server ${s}_srv options (add x 'y')`, /ALTER SERVER/);
      await reach(
        `alter foreign data wrapper file_fdw options (add x 'y')`,
        /FOREIGN DATA WRAPPER/,
      );
    } finally {
      await t.admin(`drop server ${s}_srv cascade`);
    }
    // Nested in CREATE SCHEMA, a GRANT is the same GRANT.
    await reach(
      `create schema ${s}_never grant select on pg_catalog.pg_authid to public`,
      /pg_authid/,
    );
    await reach("create role s54_never superuser", /superuser/);
    await reach("alter role current_user bypassrls", /bypassrls/);
    await reach("grant select on pg_authid to public", /pg_authid/);
    await reach(
      "grant select on pg_catalog.pg_statistic to public",
      /pg_statistic/,
    );
    // Roles are the administrator's whatever their attributes (outsider
    // stop 56: ALTER ROLE … PASSWORD on the superuser login).
    await reach(
      "alter role current_user nosuperuser createdb",
      /^ALTER ROLE acts outside the connection's own database/,
    );
    await reach(
      "create role s55_plain login nosuperuser",
      /^CREATE ROLE acts outside the connection's own database/,
    );
    // The database's own objects: writes as before.
    for (
      const sql of [
        `grant execute on function ${s}.harmless(int) to public`,
        `grant select on ${s}.w to public`,
        `revoke select on ${s}.w from public`,
        `alter table ${s}.w add column s55_z int`,
        `alter table ${s}.w rename to s55_w2`,
        `alter table if exists ${s}.s55_none add column z int`,
        `alter table s55_none rename column a to b`,
        `grant select on all tables in schema ${s} to public`,
      ]
    ) {
      const verdict = await t.check(sql);
      assertEquals([verdict.tier, verdict.reach], ["write", null], sql);
    }
  },
);

vetTest(
  "a name newer grammars read as SQL/JSON syntax is looked up only on a server older than that syntax",
  async (t) => {
    const s = t.s;
    const { vetPostgres } = await import("../../lib/db/postgres/pg_vet.ts");
    const exec = async (text: string) => {
      const results = await t.admin(text);
      const last = results.at(-1);
      return (Array.isArray(last) ? last : results) as Record<
        string,
        unknown
      >[];
    };
    const call = (before: number) => ({
      tier: "read" as const,
      dangerous: false,
      reach: null,
      functions: [{ schema: s, name: "no_such_fn", args: null, before }],
      operators: [],
      castTypes: [],
      relations: [],
      targets: [],
      kinds: ["SelectStmt"],
    });
    // This server (15) is not older than 1: the name is syntax there.
    assertEquals((await vetPostgres(exec, call(1))).tier, "read");
    const older = await vetPostgres(exec, call(99_999_999));
    assertEquals(older.tier, "write");
    assertMatch(older.why ?? "", /no_such_fn\(\) is visible/);
    // PostgreSQL 15: json_object(text[]) is the allowlisted built-in.
    await t.read(`select json_object('{a,b}')`);
    await t.read(`select pg_catalog.json_object('{a,b}'::text[])`);
  },
);

vetTest(
  "an operator's families, an index's, exclusion's or partition key's operator classes and a built-in's C symbol are followed; a statement changing a catalog object is reach (outsider stop 55)",
  async (t) => {
    const s = t.s;
    for (
      const statement of [
        `create function ${s}.lt(text, text) returns boolean language sql immutable as 'select $1 < $2'`,
        `create function ${s}.eq(text, text) returns boolean language sql immutable as 'select $1 = $2'`,
        `create function ${s}.cmp(text, text) returns integer language sql immutable as $b$ select length(pg_read_file('PG_VERSION')) $b$`,
        `create operator ${s}.<<< (function = ${s}.lt, leftarg = text, rightarg = text)`,
        `create operator ${s}.=== (function = ${s}.eq, leftarg = text, rightarg = text)`,
        `create operator class ${s}.opc for type text using btree as operator 1 ${s}.<<<, operator 3 ${s}.===, function 1 ${s}.cmp(text, text)`,
        `create table ${s}.tt (x text)`,
        `create function ${s}.alias(text) returns text language internal strict as 'pg_read_file_all'`,
        `create function ${s}.ren() returns void language sql as $b$ alter function pg_catalog.pg_read_file(text) rename to never_s55 $b$`,
        `create function ${s}.moved() returns void language sql as $b$ alter function pg_read_file(text) set schema public $b$`,
        `create function ${s}.replaced() returns void language sql set search_path = pg_catalog as $b$ create or replace function upper(text) returns text language sql as 'select $1' $b$`,
        `create function ${s}.own_path() returns void language sql set search_path = ${s} as $b$ create or replace function upper(text) returns text language sql as 'select $1' $b$`,
      ]
    ) await t.admin(statement);
    const reach = async (sql: string, why: RegExp) => {
      const verdict = await t.check(sql);
      assertMatch(verdict.reach ?? "", why, `${sql}: ${verdict.reach}`);
    };
    // A sort by a user operator calls its btree family's FUNCTION 1.
    await reach(
      `select x from ${s}.tt order by x using operator(${s}.<<<)`,
      /cmp\(text,text\) pg_read_file/,
    );
    await reach(
      `select row_number() over (order by x using operator(${s}.<<<)) from ${s}.tt`,
      /pg_read_file/,
    );
    await reach(`select 'a' operator(${s}.===) 'b'`, /pg_read_file/);
    // An index, exclusion constraint or partition key naming the class.
    await reach(`create index on ${s}.tt (x ${s}.opc)`, /pg_read_file/);
    await reach(
      `create table ${s}.ex (x text, exclude (x ${s}.opc with operator(${s}.===)))`,
      /pg_read_file/,
    );
    await reach(
      `create table ${s}.pk (x text) partition by range (x ${s}.opc)`,
      /pg_read_file/,
    );
    // A built-in's code under another name, in any schema.
    await reach(`select ${s}.alias('PG_VERSION')`, /pg_read_file_all/);
    // Renaming, moving, re-owning, altering a catalog object; in a body too.
    await reach(`select ${s}.ren()`, /pg_catalog\.pg_read_file/);
    await reach(`select ${s}.moved()`, /pg_read_file/);
    await reach(
      `select ${s}.replaced()`,
      /CreateFunction with pg_catalog on its search path/,
    );
    const own = await t.check(`select ${s}.own_path()`);
    assertEquals([own.tier, own.reach], ["write", null]);
    for (
      const sql of [
        "alter function pg_catalog.upper(text) owner to current_user",
        "alter function pg_catalog.upper(text) immutable",
        "alter function upper(text) set schema pg_catalog",
        "alter schema pg_catalog rename to s55_never",
        "alter table pg_catalog.pg_class rename to s55_never",
        "alter type pg_catalog.int4 owner to current_user",
        "alter text search configuration pg_catalog.english alter mapping for word with simple",
        "create or replace function pg_catalog.upper(text) returns text language sql as 'select $1'",
        "create or replace view pg_catalog.pg_roles as select 1",
      ]
    ) await reach(sql, /server's own catalogs/);
    // The database's own objects: writes as before; built-in sorts read.
    for (
      const sql of [
        `alter function ${s}.lt(text, text) rename to lt2`,
        `alter table ${s}.tt rename column x to pg_x`,
        `create index on ${s}.tt (x)`,
        `create index on ${s}.tt (x text_pattern_ops)`,
      ]
    ) {
      const verdict = await t.check(sql);
      assertEquals([verdict.tier, verdict.reach], ["write", null], sql);
    }
    await t.read(`select x from ${s}.tt order by x using <`);
    await t.read(`select x from ${s}.tt order by x desc`);
  },
);

vetTest(
  "a user's LANGUAGE internal alias of a refused built-in's C symbol (large objects, pg_stat_file, ts_stat, ts_rewrite) → reach naming the symbol as one that reaches files, code, other hosts or SQL text",
  async (t) => {
    const s = t.s;
    // Each symbol's own built-in is refused by name (lo_export, pg_stat_file,
    // ts_stat, ts_rewrite); the alias, under a harmless name in a user
    // schema, only by the symbol it runs.
    const aliases: [string, string, string][] = [
      ["lox", "(oid, text) returns integer", "be_lo_export"],
      ["lor", "(integer, integer) returns bytea", "be_loread"],
      ["stf", "(text) returns record", "pg_stat_file_1arg"],
      ["tss1", "(text) returns setof record", "ts_stat1"],
      ["tss2", "(text, text) returns setof record", "ts_stat2"],
      ["tsr", "(tsquery, tsquery, tsquery) returns tsquery", "tsquery_rewrite"],
      ["tsq", "(tsquery, text) returns tsquery", "tsquery_rewrite_query"],
    ];
    for (const [name, signature, symbol] of aliases) {
      await t.admin(
        `create function ${s}.${name}${signature} language internal strict as '${symbol}'`,
      );
    }
    const calls: Record<string, string> = {
      lox: `${s}.lox(0, '/tmp/x')`,
      lor: `${s}.lor(0, 1)`,
      stf: `${s}.stf('PG_VERSION')`,
      tss1: `* from ${s}.tss1('select 1') as (w text, n int, d int)`,
      tss2: `* from ${s}.tss2('select 1', 'a') as (w text, n int, d int)`,
      tsr: `${s}.tsr('a'::tsquery, 'a'::tsquery, 'b'::tsquery)`,
      tsq: `${s}.tsq('a'::tsquery, 'select 1')`,
    };
    for (const [name, signature, symbol] of aliases) {
      const sql = `select ${calls[name]}`;
      const verdict = await t.check(sql);
      const args = signature.slice(1, signature.indexOf(")")).replaceAll(
        ", ",
        ",",
      );
      assertEquals(
        [verdict.tier, verdict.reach],
        [
          "write",
          // regprocedure text: the fixture's schema is on the search path.
          `${name}(${args}) runs ${symbol}, the code of a function that reaches files, code, other hosts or SQL text`,
        ],
        sql,
      );
    }
  },
);

vetTest(
  "a SQL body that defines objects with pg_catalog anywhere on its search path, or after a setting changes (SET, set_config), is reach: the server creates an unqualified name in the first schema of the path that exists",
  async (t) => {
    const s = t.s;
    const replace =
      `create or replace function upper(text) returns text language sql as 'select $1'`;
    for (
      const statement of [
        `create function ${s}.d_user() returns void language sql set search_path = "$user", pg_catalog as $b$ ${replace} $b$`,
        `create function ${s}.d_missing() returns void language sql set search_path = ${s}_nosuch, pg_catalog as $b$ ${replace} $b$`,
        `create function ${s}.d_info() returns void language sql set search_path = ${s}_nosuch, information_schema as $b$ create view v as select 1 $b$`,
        `create function ${s}.d_set() returns void language sql as $b$ set search_path = pg_catalog; ${replace} $b$`,
        `create function ${s}.d_config() returns void language sql as $b$ select set_config('search_path', 'pg_catalog', true); ${replace} $b$`,
        `create function ${s}.d_make() returns void language sql as $b$ create table made (x int) $b$`,
        `create function ${s}.d_path() returns text language sql as $b$ select set_config('search_path', 'pg_catalog', true) $b$`,
        `create function ${s}.d_two() returns void language sql as $b$ select ${s}.d_path(); create table made (x int) $b$`,
        `create function ${s}.d_tune() returns int language sql as $b$ set work_mem = '4MB'; select 1 $b$`,
        `create function ${s}.d_show() returns void language sql set search_path = pg_catalog as $b$ show work_mem $b$`,
        `create function ${s}.d_analyze() returns void language sql set search_path = ${s}, pg_catalog as $b$ analyze w $b$`,
        `create function ${s}.d_probe() returns void language sql set search_path = ${s}_nosuch, pg_catalog as $b$ create function ${s}_made() returns int language sql as 'select 1' $b$`,
      ]
    ) await t.admin(statement);
    // What the vetting models: with the first schema missing, the server
    // creates the unqualified name in pg_catalog.
    try {
      await t.admin(`select ${s}.d_probe()`);
      assertEquals(
        await t.admin(
          `select pronamespace::regnamespace::text as schema from pg_proc where proname = '${s}_made'`,
        ),
        [{ schema: "pg_catalog" }],
      );
    } finally {
      await t.admin(`drop function if exists pg_catalog.${s}_made()`);
    }
    const onPath = (fn: string, schema: string, kind: string) =>
      `${fn}() runs ${kind} with ${schema} on its search path (an unqualified name is created in the path's first schema that exists): it may change the server's own catalogs; dbport changes the database's own objects only`;
    const moved = (fn: string, kind: string, setter: string) =>
      `${fn}() runs ${kind} after ${setter} changes a setting, the search path among them: an unqualified name may be created in pg_catalog, the server's own catalogs; dbport changes the database's own objects only`;
    for (
      const [sql, reach] of <[string, string][]> [
        [
          `select ${s}.d_user()`,
          onPath("d_user", "pg_catalog", "CreateFunction"),
        ],
        [
          `select ${s}.d_missing()`,
          onPath("d_missing", "pg_catalog", "CreateFunction"),
        ],
        [
          `select ${s}.d_info()`,
          onPath("d_info", "information_schema", "View"),
        ],
        [
          `select ${s}.d_set()`,
          moved("d_set", "CreateFunction", "d_set()"),
        ],
        [
          `select ${s}.d_config()`,
          moved("d_config", "CreateFunction", "set_config()"),
        ],
        [
          `select set_config('search_path', 'pg_catalog', true), ${s}.d_make()`,
          moved("d_make", "Create", "set_config()"),
        ],
        [`select ${s}.d_two()`, moved("d_two", "Create", "set_config()")],
        // ANALYZE is named as such, not as the VACUUM node it shares.
        [
          `select ${s}.d_analyze()`,
          onPath("d_analyze", "pg_catalog", "Analyze"),
        ],
      ]
    ) {
      const verdict = await t.check(sql);
      assertEquals([verdict.tier, verdict.reach], ["write", reach], sql);
    }
    // Alone, a body that creates (beside a built-in that sets nothing), or
    // one that only tunes a setting, is a write and no more; one that only
    // shows a setting with pg_catalog on its path, a read.
    for (
      const sql of [
        `select upper('a'), ${s}.d_make()`,
        `select ${s}.d_tune()`,
      ]
    ) {
      const verdict = await t.check(sql);
      assertEquals([verdict.tier, verdict.reach], ["write", null], sql);
    }
    await t.read(`select ${s}.d_show()`);
  },
);

vetTest(
  "statements that run stored expressions without naming them (ANALYZE, CLUSTER, REINDEX, REFRESH, ALTER TABLE, ALTER DOMAIN, CREATE TRIGGER) → no dry run, naming why; an UPDATE of a plain table → dry run",
  async (t) => {
    const s = t.s;
    await t.admin(`create index w_v on ${s}.w (upper(v))`);
    await t.admin(
      `create materialized view ${s}.mv as select id from ${s}.w`,
    );
    for (
      const [sql, why] of <[string, string][]> [
        [`analyze ${s}.w`, "ANALYZE evaluates index expressions"],
        [`cluster ${s}.w using w_v`, "CLUSTER evaluates index expressions"],
        [`reindex table ${s}.w`, "REINDEX evaluates index expressions"],
        [`refresh materialized view ${s}.mv`, "REFRESH runs the view's query"],
        [
          `alter table ${s}.w add constraint c check (id > 0)`,
          "ALTER TABLE may evaluate stored checks and expressions",
        ],
        [
          `alter domain ${s}.fine add constraint c check (value < 10)`,
          "ALTER DOMAIN checks stored values",
        ],
        [
          `create trigger t2 after insert on ${s}.w for each row execute function ${s}.trig()`,
          "a trigger runs code on later writes",
        ],
      ]
    ) {
      const verdict = await t.check(sql);
      assertEquals([verdict.reach, verdict.noDryRun], [null, why], sql);
    }
    const update = await t.check(`update ${s}.w set v = 'c' where id = 1`);
    assertEquals([update.tier, update.noDryRun], ["write", null]);
  },
);

vetTest(
  "LOCK of a view → reach naming it (locking a view locks what it reads); LOCK of a table → a write",
  async (t) => {
    const s = t.s;
    const view = await t.check(`lock table ${s}.v_ok in access share mode`);
    assertEquals(
      [view.tier, view.reach],
      [
        "write",
        "LOCK of v_ok, not a table (relkind v): locking a view locks every relation it reads, the server's catalogs among them; dbport locks the database's own tables only",
      ],
    );
    const table = await t.check(`lock table ${s}.w in access share mode`);
    assertEquals([table.tier, table.reach], ["write", null]);
  },
);
