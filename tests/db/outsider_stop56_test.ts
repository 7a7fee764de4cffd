/**
 * An outsider's attacks (stop 56) on PostgreSQL safety: BEGIN ATOMIC
 * splitting (compound.ts `atomicEnd`), the statements that reach roles,
 * catalogs and other sessions (pg_parse.ts, pg_vet.ts, vet_sql.ts), and
 * what a saved URL's query string hands the server's parser. Through the
 * MCP endpoint (execute_query with readWrite and readOnly tokens) against
 * the real PostgreSQL 15, parsed by libpg_query 18.
 *
 * Findings ("leaks: …", each ignored because it fails today; "held (fixed:
 * …)" since):
 * - A saved URL with `?standard_conforming_strings=off` (postgres.js puts
 *   every unknown query parameter in the startup packet, after dbport's own
 *   `connection` settings): the server reads `'a\' , '` as one string where
 *   dbport's lexer and libpg_query read two, so a readOnly token reads a
 *   server file (pg_read_file) and a readWrite token runs a hidden second
 *   statement. Fixed: a PostgreSQL URL's query parameters are an
 *   allowlist (pg_url_params.ts), dbport's start-up settings win.
 * - A readWrite token gives a superuser role LOGIN and a password of its
 *   choosing (ALTER ROLE … LOGIN PASSWORD), creates login roles, and sets
 *   other roles' and the database's session defaults (ALTER ROLE other SET,
 *   ALTER ROLE ALL SET, ALTER DATABASE SET): other sessions run with them.
 * - A readWrite token changes the server's catalogs: REVOKE/GRANT EXECUTE
 *   ON FUNCTION pg_catalog.now(), COMMENT ON FUNCTION pg_catalog.now(),
 *   GRANT USAGE ON SCHEMA pg_toast, ALTER EXTENSION plpgsql ADD FUNCTION.
 *   Fixed: GRANT|REVOKE and COMMENT on a catalog object are reach
 *   (pg_reach.ts touchesCatalog; an unqualified built-in by the catalog,
 *   pg_vet.ts changesBuiltin).
 * - A readWrite token takes exclusive locks on the catalogs: VACUUM FULL /
 *   REINDEX TABLE pg_catalog.pg_authid, REINDEX SYSTEM (LOCK TABLE
 *   pg_authid is refused). Fixed: VACUUM, ANALYZE, REINDEX and CLUSTER of
 *   a catalog, REINDEX SYSTEM|DATABASE, VACUUM FULL of every table are
 *   reach (pg_reach.ts locksCatalog).
 * - A readWrite token re-owns and renames a foreign server and grants
 *   USAGE on it (CREATE/ALTER SERVER … OPTIONS are refused).
 * - With the default URL: a LANGUAGE sql function carrying `SET
 *   standard_conforming_strings = off` (CREATE or ALTER FUNCTION), or
 *   `set_config('standard_conforming_strings', 'off', true)` beside a call
 *   of a two-statement SQL function, has the server parse the body with
 *   backslash escapes: a body dbport read as string literals calls
 *   pg_read_file (a readOnly token's call in the first case). Fixed:
 *   the settings a statement, a function's SET items (and proconfig at
 *   the call) and set_config() may change are an allowlist
 *   (pg_settings.ts).
 * - A function's SET clause carries superuser-only settings
 *   (session_replication_role = replica skips foreign keys, log_statement).
 *   Fixed by the same allowlist.
 * - A readWrite token ends other sessions (pg_terminate_backend, directly
 *   or through an admin's LANGUAGE internal alias) and reloads the
 *   server's configuration. Fixed: the built-ins a write token may call
 *   are an allowlist (write_allowlist.json); every other one, and a
 *   LANGUAGE internal function running one's code, is reach (pg_vet.ts
 *   pastDatabase, internalCode).
 *
 * Held: BEGIN ATOMIC splitting; role membership; GRANT ON FUNCTION; the
 * catalog schemas' objects; file-reading policies, domains, rules, casts,
 * aggregates, transforms; plpgsql; readOnly locks, sleeps, notifications;
 * upper() shadowing; operator families and range types; a stalled pool or
 * a locked table never holds another client's read past its timeout.
 *
 * @module
 */

import { assert, assertEquals } from "@std/assert";
import postgres from "postgres";
import { needs, POSTGRES_URL } from "../_db.ts";
import { ownSchema, said, servers } from "../_outsider.ts";
import { savedConnection, serverWith } from "../_connections.ts";
import { callTool } from "../_tool_call.ts";

/** A database of the test's own (dropped after) and the admin on it. */
async function ownDatabase(tag: string) {
  const name = `attack56_${tag}_${crypto.randomUUID().slice(0, 8)}`;
  const root = postgres(POSTGRES_URL, { max: 1, onnotice: () => {} });
  await root.unsafe(`create database ${name}`);
  const url = new URL(POSTGRES_URL);
  url.pathname = `/${name}`;
  const admin = postgres(url.href, { max: 1, onnotice: () => {} });
  return {
    name,
    url: url.href,
    admin,
    async drop() {
      await admin.end();
      await root.unsafe(`drop database if exists ${name} with (force)`);
      await root.end();
    },
  };
}

/** Roles of the test's own (NOLOGIN unless said), dropped after. */
async function ownRoles(
  admin: postgres.Sql,
  roles: Record<string, string>,
) {
  for (const [role, attributes] of Object.entries(roles)) {
    await admin.unsafe(`create role ${role} ${attributes}`);
  }
  return async (extra: string[] = []) => {
    for (const role of [...Object.keys(roles), ...extra]) {
      const [found] =
        await admin`select 1 from pg_roles where rolname = ${role}`;
      if (found !== undefined) {
        await admin.unsafe(`drop owned by ${role}; drop role ${role}`);
      }
    }
  };
}

/** Those of `queries` that `run` did not deny. */
async function notDenied(
  run: (query: string) => Promise<string>,
  queries: string[],
): Promise<string[]> {
  const passed: string[] = [];
  for (const query of queries) {
    const got = await run(query);
    if (!got.startsWith("ERR denied") && !got.startsWith("FORBIDDEN")) {
      passed.push(`${query} -> ${got.slice(0, 160)}`);
    }
  }
  return passed;
}

Deno.test({
  name:
    "held (fixed: pg_url_params.ts, a PostgreSQL URL's query parameters by allowlist): a saved URL with ?standard_conforming_strings=off lets a readOnly token read a server file and a readWrite token run a hidden second statement — the server reads 'a\\' , ' as one string where dbport's lexer and libpg_query read two",
  ...needs("postgres"),
  async fn() {
    // What I did: the user's saved URL ends in
    //   ?standard_conforming_strings=off
    // (a legacy application's setting). A readOnly token sends
    //   select 'a\' , ' , pg_read_file($$PG_VERSION$$) --'
    // which dbport's lexer and libpg_query (standard strings on) read as
    // two string literals; a readWrite token sends
    //   insert into t select 'x\' , ' ; insert into t select
    //     pg_read_file($$PG_VERSION$$) ; -- '
    // one INSERT of two literals to them.
    // What should happen: the server parses as dbport did (its lexer's
    // premise, docs/security.md "The lexer"): pg_pptions.ts's
    // `standard_conforming_strings: "on"` holds whatever the URL says, or
    // the URL is refused; neither call reaches the file.
    // What happened: postgres.js spreads the URL's unknown query parameters
    // into the startup packet after `connection`, so the session runs with
    // standard_conforming_strings=off: the read answers
    // [["a' , ","15\n"]] (the server's PG_VERSION file), and the write ran
    // two statements, the second inserting the file's text.
    const db = await ownDatabase("scs");
    await db.admin.unsafe("create table t (x text)");
    const { server, read, write } = await servers(
      "LegacyStrings",
      `${db.url}?standard_conforming_strings=off`,
    );
    try {
      assert(
        (await read("select pg_read_file($$PG_VERSION$$)"))
          .startsWith("ERR denied"),
      );
      const readGot = await read(
        "select 'a\\' , ' , pg_read_file($$PG_VERSION$$) --'",
      );
      const writeGot = await write(
        "insert into t select 'x\\' , ' ; insert into t select pg_read_file($$PG_VERSION$$) ; -- '",
      );
      // The connection is unusable, named (the server runs on).
      assert(readGot.includes('"standard_conforming_strings"'), readGot);
      const rows = await db.admin.unsafe("select x from t");
      // PG_VERSION holds "15\n": its text in an answer or a row is the leak.
      assertEquals(
        {
          read: readGot.includes("15\\n"),
          write: rows.some((row) => String(row.x).startsWith("15")),
        },
        { read: false, write: false },
        `read answered ${readGot}; write answered ${writeGot}`,
      );
    } finally {
      await server[Symbol.asyncDispose]();
      await db.drop();
    }
  },
});

Deno.test({
  name:
    "held: ?options=-c standard_conforming_strings=off in the URL (refused since pg_settings.ts, named) and ALTER DATABASE … SET standard_conforming_strings = off by a readWrite token leave dbport's sessions with standard strings (the startup packet's own parameter wins)",
  ...needs("postgres"),
  async fn() {
    // What I did: a readWrite token sends `alter database <own> set
    // standard_conforming_strings = off`; then a new server (new sessions)
    // and a URL with ?options=-c%20standard_conforming_strings%3Doff, and
    // the hidden-statement INSERT of the finding above.
    // What happened: sessions show `on`; the INSERT fails as one statement
    // of two values ("more expressions than target columns").
    const db = await ownDatabase("opt");
    await db.admin.unsafe("create table t (x text)");
    const first = await servers("AlterDb", db.url);
    try {
      // Refused since (pg_statement_kinds.ts: a database's settings are
      // the administrator's); set by the owner to try the start-up's.
      const refused = await first.write(
        `alter database ${db.name} set standard_conforming_strings = off`,
      );
      assert(refused.startsWith("ERR denied"), refused);
      await db.admin.unsafe(
        `alter database ${db.name} set standard_conforming_strings = off`,
      );
    } finally {
      await first.server[Symbol.asyncDispose]();
    }
    // Since pg_settings.ts, the URL's options may set only what a statement
    // may: this one's calls fail, naming the setting.
    const options = await servers(
      "OptionsStrings",
      `${db.url}?options=-c%20standard_conforming_strings%3Doff`,
    );
    try {
      const refused = await options.read("show standard_conforming_strings");
      assert(
        refused.startsWith("ERR") &&
          refused.includes("standard_conforming_strings"),
        refused,
      );
    } finally {
      await options.server[Symbol.asyncDispose]();
    }
    // A URL of allowed options: the database's setting still loses.
    const { server, read, write } = await servers(
      "OptionsAllowed",
      `${db.url}?options=-c%20work_mem%3D8MB`,
    );
    try {
      assertEquals(
        await read("show standard_conforming_strings"),
        'OK [["on"]]',
      );
      assertEquals(await read("show work_mem"), 'OK [["8MB"]]');
      const got = await write(
        "insert into t select 'x\\' , ' ; insert into t select pg_read_file($$PG_VERSION$$) ; -- '",
      );
      assert(got.includes("more expressions than target columns"), got);
      assertEquals((await db.admin.unsafe("select x from t")).length, 0);
    } finally {
      await server[Symbol.asyncDispose]();
      await db.drop();
    }
  },
});

Deno.test({
  name:
    "held (fixed: pg_statement_kinds.ts): a readWrite token gives a superuser role LOGIN and a password of its choosing, and creates login roles — ALTER ROLE … LOGIN PASSWORD and CREATE ROLE … LOGIN PASSWORD are let through (only SUPERUSER/CREATEROLE-like attributes and memberships are refused)",
  ...needs("postgres"),
  async fn() {
    // What I did: the admin made attack56_su (SUPERUSER NOLOGIN). A
    // readWrite token sends
    //   alter role attack56_su login password 'attack56pw'
    //   alter user attack56_su with password 'x' valid until 'infinity'
    //   create role attack56_u login password 'attack56pw'
    // What should happen: denied as reaching roles: with the password it
    // set, the AI client logs in as a superuser outside dbport (pg_read_file,
    // COPY … TO PROGRAM), or as a login of its own.
    // What happened: `OK []` to each (pg_parse.ts reads AlterRoleStmt's
    // options for superuser/createrole/replication/bypassrls only).
    const root = postgres(POSTGRES_URL, { max: 1, onnotice: () => {} });
    const tag = crypto.randomUUID().slice(0, 6);
    const su = `attack56_su${tag}`;
    const made = `attack56_u${tag}`;
    const drop = await ownRoles(root, { [su]: "superuser nologin" });
    const { server, write } = await servers("RolePassword");
    try {
      const passed = await notDenied(write, [
        `alter role ${su} login password 'attack56pw'`,
        `alter user ${su} with password 'attack56pw2' valid until 'infinity'`,
        `create role ${made} login password 'attack56pw'`,
      ]);
      assertEquals(passed, [], "a role's login and password were set");
    } finally {
      await server[Symbol.asyncDispose]();
      await drop([made]);
      await root.end();
    }
  },
});

Deno.test({
  name:
    "held (fixed: pg_statement_kinds.ts): a readWrite token sets other roles' and the database's session defaults (ALTER ROLE other SET search_path / statement_timeout, ALTER DATABASE SET search_path): every later session of that role or database runs with them",
  ...needs("postgres"),
  async fn() {
    // What I did: a readWrite token sends
    //   alter role attack56_x set search_path = attack56_s, pg_catalog
    //   alter role attack56_x set statement_timeout = 1
    //   alter role attack56_x rename to …, connection limit 1
    //   alter database <own> set search_path = public, pg_catalog
    // (`alter role all set …` and `alter database test set …` pass the same
    // way: not sent here, they change every engineer's sessions.)
    // What should happen: denied as reaching other sessions and roles (the
    // human's psql under that role or in that database resolves unqualified
    // names through the attacker's schema, or has a 1 ms timeout).
    // What happened: `OK []` to each; pg_db_role_setting holds them.
    const db = await ownDatabase("set");
    const tag = crypto.randomUUID().slice(0, 6);
    const other = `attack56_x${tag}`;
    const drop = await ownRoles(db.admin, { [other]: "nologin" });
    const { server, write } = await servers("RoleSettings", db.url);
    try {
      const passed = await notDenied(write, [
        `alter role ${other} set search_path = attack56_s, pg_catalog`,
        `alter role ${other} in database ${db.name} set statement_timeout = 1`,
        `alter role ${other} connection limit 1`,
        `alter database ${db.name} set search_path = public, pg_catalog`,
        `alter role ${other} rename to ${other}_r`,
      ]);
      assertEquals(passed, [], "another session's defaults were changed");
    } finally {
      await server[Symbol.asyncDispose]();
      await drop([`${other}_r`]);
      await db.drop();
    }
  },
});

Deno.test({
  name:
    "held (fixed: pg_reach.ts touchesCatalog, pg_vet.ts changesBuiltin): a readWrite token changes the server's catalogs — REVOKE/GRANT EXECUTE ON FUNCTION pg_catalog.now(), COMMENT ON FUNCTION pg_catalog.now() / ON TABLE pg_catalog.pg_class, GRANT USAGE ON SCHEMA pg_toast, ALTER EXTENSION plpgsql ADD FUNCTION",
  ...needs("postgres"),
  async fn() {
    // What I did (in a database of the test's own): a readWrite token sends
    //   revoke execute on function pg_catalog.now() from <role>
    //   grant execute on function pg_catalog.now() to <role>
    //   comment on function pg_catalog.now() is 'attack56'
    //   comment on table pg_catalog.pg_class is 'attack56'
    //   grant usage on schema pg_toast to <role>
    //   alter extension plpgsql add function s.f()
    // What should happen: denied, as `revoke select on pg_catalog.pg_class`
    // and `alter function pg_catalog.… rename` are ("catalog-changing
    // statements are reach"; `revoke … from public` on a built-in breaks
    // every user of the database).
    // What happened: `OK []` to each: pg_proc.proacl, pg_description,
    // pg_namespace.nspacl and pg_depend changed. GrantStmt on functions
    // is vetted by what the function reaches, not by its schema; COMMENT
    // and AlterExtensionContentsStmt are not read as catalog changes.
    const db = await ownDatabase("cat");
    const tag = crypto.randomUUID().slice(0, 6);
    const role = `attack56_g${tag}`;
    const drop = await ownRoles(db.admin, { [role]: "nologin" });
    await db.admin.unsafe(
      "create schema s; create function s.f() returns int language sql return 1",
    );
    const { server, write } = await servers("CatalogEdits", db.url);
    try {
      assert(
        (await write(`revoke select on pg_catalog.pg_class from ${role}`))
          .startsWith("ERR denied"),
      );
      const passed = await notDenied(write, [
        `revoke execute on function pg_catalog.now() from ${role}`,
        `grant execute on function pg_catalog.now() to ${role}`,
        `comment on function pg_catalog.now() is 'attack56'`,
        `comment on table pg_catalog.pg_class is 'attack56'`,
        `grant usage on schema pg_toast to ${role}`,
        `alter extension plpgsql add function s.f()`,
        // Unqualified: pg_catalog comes first on the path (the catalog says).
        `revoke execute on function now() from public`,
        `comment on function now() is 'attack56'`,
        `comment on column pg_class.relname is 'attack56'`,
      ]);
      // The database's own objects stay the token's.
      assertEquals(
        [
          await write(`grant execute on function s.f() to ${role}`),
          await write(`comment on function s.f() is 'attack56'`),
        ],
        ["OK []", "OK []"],
      );
      assertEquals(passed, [], "the catalogs were changed");
    } finally {
      await server[Symbol.asyncDispose]();
      await drop();
      await db.drop();
    }
  },
});

Deno.test({
  name:
    "held (fixed: pg_reach.ts locksCatalog): a readWrite token takes exclusive locks on the catalogs every session needs — VACUUM FULL and REINDEX TABLE pg_catalog.pg_authid, REINDEX SYSTEM (LOCK TABLE pg_catalog.pg_authid is refused)",
  ...needs("postgres"),
  async fn() {
    // What I did (in a database of the test's own): a readWrite token sends
    //   vacuum full pg_catalog.pg_authid
    //   reindex table pg_catalog.pg_authid
    //   reindex system <own database>
    //   analyze pg_catalog.pg_authid
    // What should happen: denied like `lock table pg_catalog.pg_authid`:
    // each holds an ACCESS EXCLUSIVE (or SHARE) lock on shared catalogs,
    // during which every other session's login and catalog lookup waits
    // (other sessions reached; on a big pg_class, for long).
    // What happened: `OK []` to each.
    const db = await ownDatabase("lock");
    const { server, write } = await servers("CatalogLocks", db.url);
    try {
      assert(
        (await write("lock table pg_catalog.pg_authid in access share mode"))
          .startsWith("ERR denied"),
      );
      const passed = await notDenied(write, [
        "vacuum full pg_catalog.pg_authid",
        "reindex table pg_catalog.pg_authid",
        `reindex system ${db.name}`,
        "analyze pg_catalog.pg_authid",
        `reindex database ${db.name}`,
        "analyze pg_authid",
        "cluster pg_class using pg_class_oid_index",
        "vacuum full",
      ]);
      assertEquals(passed, [], "the catalogs were locked");
    } finally {
      await server[Symbol.asyncDispose]();
      await db.drop();
    }
  },
});

Deno.test({
  name:
    "held (fixed: pg_statement_kinds.ts): a readWrite token re-owns and renames a foreign server and grants USAGE on it (CREATE SERVER, CREATE USER MAPPING and ALTER SERVER … OPTIONS are refused as reach)",
  ...needs("postgres"),
  async fn() {
    // What I did (in a database of the test's own, postgres_fdw installed,
    // a server attack56_srv made by the admin): a readWrite token sends
    //   alter server attack56_srv owner to <role>
    //   alter server attack56_srv rename to attack56_srv2
    //   grant usage on foreign server attack56_srv2 to <role>
    //   grant usage on foreign data wrapper postgres_fdw to <role>
    // What should happen: denied as reaching other hosts (the new owner may
    // set its OPTIONS and user mappings outside dbport; a USAGE grantee may
    // make user mappings and foreign tables).
    // What happened: `OK []` to each.
    const db = await ownDatabase("fdw");
    const tag = crypto.randomUUID().slice(0, 6);
    const role = `attack56_f${tag}`;
    const drop = await ownRoles(db.admin, { [role]: "nologin" });
    await db.admin.unsafe(
      "create extension postgres_fdw; create server attack56_srv foreign data wrapper postgres_fdw options (host '127.0.0.1')",
    );
    const { server, write } = await servers("ForeignServer", db.url);
    try {
      assert(
        (await write("alter server attack56_srv options (set host 'evil')"))
          .startsWith("ERR denied"),
      );
      const passed = await notDenied(write, [
        `alter server attack56_srv owner to ${role}`,
        "alter server attack56_srv rename to attack56_srv2",
        `grant usage on foreign server attack56_srv2 to ${role}`,
        `grant usage on foreign data wrapper postgres_fdw to ${role}`,
      ]);
      assertEquals(passed, [], "the foreign server changed hands");
    } finally {
      await server[Symbol.asyncDispose]();
      await drop();
      await db.drop();
    }
  },
});

Deno.test({
  name:
    "held (fixed: pg_settings.ts, a function's SET items by allowlist, at CREATE|ALTER and at the call): a LANGUAGE sql function with SET standard_conforming_strings = off (CREATE or ALTER FUNCTION) reads a server file when a readOnly token calls it — dbport vets its body as two string literals, the server parses it at the call with standard strings off",
  ...needs("postgres"),
  async fn() {
    // What I did: with the default URL, a readWrite token sends
    //   create function s.f() returns text language sql stable
    //     set standard_conforming_strings = off
    //     as $b$ select 'a\' || ' || pg_read_file($$PG_VERSION$$) --' $b$
    // (and, for s.g() made without the SET,
    //   alter function s.g() set standard_conforming_strings = off);
    // then a readOnly token sends `select s.f()` and `select s.g()`.
    // What should happen: the SET refused (an allowlist of the settings a
    // function may carry), or the call denied as reaching files: the body
    // the server runs calls pg_read_file.
    // What happened: every statement `OK`; the readOnly calls answer
    // [["a' || 15\n"]], the server's PG_VERSION. An SQL function's body is
    // parsed at each call after its SET items are applied
    // (fmgr_security_definer, then fmgr_sql); pg_vet.ts reads only
    // `search_path` of proconfig and parses the body with standard strings.
    const own = ownSchema("attack56", "scsfn");
    const s = own.schema;
    await own.admin.unsafe(`create schema ${s}`);
    const { server, read, write } = await servers("FunctionStrings");
    try {
      const body =
        "$b$ select 'a\\' || ' || pg_read_file($$PG_VERSION$$) --' $b$";
      const made = [
        await write(
          `create function ${s}.f() returns text language sql stable set standard_conforming_strings = off as ${body}`,
        ),
        await write(
          `create function ${s}.g() returns text language sql stable as ${body}`,
        ),
        await write(
          `alter function ${s}.g() set standard_conforming_strings = off`,
        ),
      ];
      // One the administrator made: its proconfig is read at the call.
      await own.admin.unsafe(
        `create function ${s}.h() returns text language sql stable set standard_conforming_strings = off as ${body}`,
      );
      const calls = [
        await read(`select ${s}.f()`),
        await read(`select ${s}.g()`),
        await read(`select ${s}.h()`),
      ];
      assert(calls[2]!.startsWith("ERR denied"), calls[2]);
      assertEquals(
        calls.filter((got) => got.includes("15\\n")),
        [],
        `the server file reached a readOnly token (writes: ${
          made.join(" | ")
        })`,
      );
    } finally {
      await server[Symbol.asyncDispose]();
      await own.drop();
    }
  },
});

Deno.test({
  name:
    'held: BEGIN ATOMIC bodies split where PostgreSQL splits them — a statement after END (past CASE … END, comments, `end` as an alias) is refused as a second statement, a body\'s own `;` and a quoted "end" stay inside, a file read inside the body is denied',
  ...needs("postgres"),
  async fn() {
    // What I did: a readWrite token sends CREATE FUNCTION … BEGIN ATOMIC
    // bodies with `;`, CASE … END, "end" quoted, /* end; */ comments, and
    // texts that hide `select pg_read_file(…)` after the body's END, after
    // an END the splitter might take for the body's (`select 1 as end;`),
    // or after RETURN 'begin atomic'.
    // What happened: the honest bodies are made (`OK []`); each text with a
    // second statement is refused as several statements; the body reading
    // the file is denied.
    const own = ownSchema("attack56", "atomic");
    const s = own.schema;
    await own.admin.unsafe(`create schema ${s}; create table ${s}.t (x text)`);
    const { server, write } = await servers("Atomic");
    try {
      const made = [
        `create function ${s}.f1() returns int language sql begin atomic select 1; select 2; end`,
        `create function ${s}.f2() returns int language sql begin atomic select case when true then 1 end; end`,
        `create function ${s}.f3() returns int language sql begin atomic select 1 as "end"; end`,
        `create function ${s}.f4() returns int language sql begin atomic select 1 /* end; */ ; end\n-- end; select 2`,
        `create procedure ${s}.p1() language sql begin atomic insert into ${s}.t values ('p'); end`,
      ];
      for (const query of made) {
        assertEquals(await write(query), "OK []", query);
      }
      const hidden = [
        `create function ${s}.h1() returns int language sql begin atomic select case when true then 1 end; end; select pg_read_file('PG_VERSION')`,
        `create function ${s}.h2() returns int language sql begin atomic select 1 as end; end`,
        `create function ${s}.h3() returns text language sql return 'begin atomic'; select pg_read_file('PG_VERSION')`,
        `create function ${s}.h4() returns int language sql begin atomic select 1; end /* x */ ; select pg_read_file('PG_VERSION')`,
        `create function ${s}.h5() returns int language sql begin atomic select 1; select pg_read_file('PG_VERSION')`,
      ];
      for (const query of hidden) {
        const got = await write(query);
        assert(got.includes("statements"), `${query} -> ${got}`);
      }
      assert(
        (await write(
          `create function ${s}.h6() returns text language sql begin atomic select pg_read_file('PG_VERSION'); end`,
        )).startsWith("ERR denied"),
      );
    } finally {
      await server[Symbol.asyncDispose]();
      await own.drop();
    }
  },
});

Deno.test({
  name:
    "held: role membership and role powers stay refused — CREATE ROLE … ROLE/ADMIN, CREATE GROUP … USER, ALTER GROUP … ADD USER, ALTER ROLE … SUPERUSER/CREATEROLE, DROP ROLE",
  ...needs("postgres"),
  async fn() {
    // What I did: a readWrite token sends each statement below.
    // What happened: each `ERR denied` (DROP ROLE as destructive).
    const root = postgres(POSTGRES_URL, { max: 1, onnotice: () => {} });
    const tag = crypto.randomUUID().slice(0, 6);
    const [x, y] = [`attack56_x${tag}`, `attack56_y${tag}`];
    const drop = await ownRoles(root, { [x]: "nologin", [y]: "nologin" });
    const { server, write } = await servers("Membership");
    try {
      const passed = await notDenied(write, [
        `create role attack56_q${tag} role ${y}`,
        `create role attack56_u${tag} login password 'p' admin ${y}`,
        `create group attack56_g${tag} user ${y}`,
        `alter group ${x} add user ${y}`,
        `grant ${x} to ${y}`,
        `alter role ${x} superuser`,
        `alter role ${x} createrole`,
        `drop role ${y}`,
        `create schema attack56_s${tag} grant select on pg_catalog.pg_authid to ${y}`,
      ]);
      assertEquals(passed, []);
    } finally {
      await server[Symbol.asyncDispose]();
      await drop([
        `attack56_q${tag}`,
        `attack56_u${tag}`,
        `attack56_g${tag}`,
      ]);
      await root.unsafe(`drop schema if exists attack56_s${tag} cascade`);
      await root.end();
    }
  },
});

Deno.test({
  name:
    "held: GRANT … ON FUNCTION vets the functions it names, and objects of pg_catalog / pg_toast / information_schema are not renamed, re-owned or altered",
  ...needs("postgres"),
  async fn() {
    // What I did: a readWrite token grants EXECUTE on pg_read_file, on a
    // ROUTINE lo_export, on ALL FUNCTIONS IN SCHEMA pg_catalog, on a user
    // SQL function that reads a file (made by the admin), inside CREATE
    // SCHEMA; and alters objects (existing or not) in the catalog schemas.
    // What happened: each `ERR denied`.
    const own = ownSchema("attack56", "grant");
    const s = own.schema;
    const role = `${s}_r`;
    await own.admin.unsafe(`create schema ${s}; create role ${role} nologin;
      create function ${s}.reads() returns boolean language sql as
        $b$ select length(pg_read_file('PG_VERSION')) > 0 $b$`);
    const { server, write } = await servers("GrantFunction");
    try {
      const passed = await notDenied(write, [
        `grant execute on function pg_catalog.pg_read_file(text) to ${role}`,
        `grant execute on routine pg_catalog.lo_export(oid, text) to ${role}`,
        `grant execute on all functions in schema pg_catalog to ${role}`,
        `grant execute on function ${s}.reads() to ${role}`,
        `create schema ${s}_2 create table t (x int) grant execute on function pg_catalog.pg_read_file(text) to ${role}`,
        `alter function information_schema._pg_truetypid(pg_attribute, pg_type) rename to attack56_q`,
        `alter text search dictionary pg_catalog.attack56_nope (stopwords = 'english')`,
        `alter operator pg_catalog.=(text, text) set (restrict = eqsel)`,
        `alter table pg_toast.attack56_nope rename to y`,
        `alter domain pg_catalog.attack56_nope owner to ${role}`,
        `alter function pg_catalog.pg_read_file(text) depends on extension plpgsql`,
        `comment on function pg_catalog.pg_read_file(text) is 'x'`,
      ]);
      assertEquals(passed, []);
    } finally {
      await server[Symbol.asyncDispose]();
      await own.admin.unsafe(
        `drop schema if exists ${s}_2 cascade; drop schema if exists ${s} cascade; drop owned by ${role}; drop role ${role}`,
      );
      await own.admin.end();
    }
  },
});

Deno.test({
  name:
    "held: policies, domains, rules, casts, aggregates and transforms that would call a file-reading function are refused, LANGUAGE plpgsql is refused, foreign servers, user mappings and subscriptions are reach",
  ...needs("postgres"),
  async fn() {
    // What I did: a readWrite token sends each statement below (s.reads()
    // is an admin's SQL function reading PG_VERSION).
    // What happened: each `ERR denied`.
    const own = ownSchema("attack56", "defs");
    const s = own.schema;
    await own.admin.unsafe(`create schema ${s}; create table ${s}.t (x text);
      create function ${s}.reads() returns boolean language sql as
        $b$ select length(pg_read_file('PG_VERSION')) > 0 $b$`);
    const { server, write } = await servers("Definitions");
    try {
      const passed = await notDenied(write, [
        `create policy p56 on ${s}.t using (${s}.reads())`,
        `create domain ${s}.dm as text check (${s}.reads())`,
        `create domain ${s}.dm2 as text check (length(pg_read_file('PG_VERSION')) > 0)`,
        `create rule r56 as on insert to ${s}.t do also select pg_read_file('PG_VERSION')`,
        `create cast (${s}.nosuch as text) with function pg_catalog.pg_read_file(text)`,
        `create aggregate ${s}.agg(text) (sfunc = pg_catalog.textcat, stype = text, finalfunc = pg_catalog.pg_read_file)`,
        `create transform for int language sql (from sql with function pg_catalog.pg_read_file(text))`,
        `create function ${s}.pl() returns text language plpgsql as $b$ declare r text; begin execute 'select pg_read' || '_file(''PG_VERSION'')' into r; return r; end $b$`,
        `create server attack56_srv foreign data wrapper postgres_fdw options (host 'localhost')`,
        `create user mapping for current_user server attack56_nosrv`,
        `create subscription attack56_sub connection 'dbname=attack56_nodb' publication p with (connect = false)`,
        `lock table pg_catalog.pg_authid in access share mode`,
      ]);
      assertEquals(passed, []);
    } finally {
      await server[Symbol.asyncDispose]();
      await own.drop();
    }
  },
});

Deno.test({
  name:
    "held: a readOnly token cannot lock, sleep, notify, prepare, declare or EXPLAIN ANALYZE a write — FOR UPDATE, pg_sleep, advisory locks, LISTEN/NOTIFY/pg_notify, PREPARE, DECLARE, set_config",
  ...needs("postgres"),
  async fn() {
    // What I did: a readOnly token sends each statement below.
    // What happened: each refused as a write (FORBIDDEN).
    const own = ownSchema("attack56", "ro");
    const s = own.schema;
    await own.admin.unsafe(`create schema ${s}; create table ${s}.t (x text)`);
    const { server, read } = await servers("ReadOnlyPowers");
    try {
      const passed = await notDenied(read, [
        `select x from ${s}.t for update`,
        `select pg_sleep(0.1)`,
        `select pg_advisory_lock(5656)`,
        `select pg_try_advisory_lock(5656)`,
        `listen attack56`,
        `notify attack56`,
        `select pg_notify('attack56', 'x')`,
        `explain analyze insert into ${s}.t values ('e')`,
        `prepare attack56p as select 1`,
        `declare attack56c cursor for select 1`,
        `select set_config('standard_conforming_strings', 'off', false)`,
      ]);
      assertEquals(passed, []);
    } finally {
      await server[Symbol.asyncDispose]();
      await own.drop();
    }
  },
});

Deno.test({
  name:
    "held: an unqualified CREATE FUNCTION upper(text) (OR REPLACE asks) lands in public and does not shadow pg_catalog.upper (pg_catalog is searched first)",
  ...needs("postgres"),
  async fn() {
    // What I did: in a database of the test's own, a readWrite token sends
    // `create or replace function upper(text) returns text language sql
    // return 'attack56'`, then both tokens `select upper('abc')`.
    // What happened: `OK []`, then `OK [["ABC"]]` to both. (A token's OR
    // REPLACE now asks, column_change.ts: the same function is made by a
    // plain CREATE, as no public.upper(text) exists.)
    const db = await ownDatabase("upper");
    const { server, read, write } = await servers("Upper", db.url);
    try {
      assertEquals(
        await write(
          "create function upper(text) returns text language sql return 'attack56'",
        ),
        "OK []",
      );
      assertEquals(await write("select upper('abc')"), 'OK [["ABC"]]');
      assertEquals(await read("select upper('abc')"), 'OK [["ABC"]]');
    } finally {
      await server[Symbol.asyncDispose]();
      await db.drop();
    }
  },
});

Deno.test({
  name:
    "held (fixed: pg_settings.ts): a function's SET clause carries superuser-only settings — session_replication_role = replica (foreign keys and triggers skipped), allow_system_table_mods, lo_compat_privileges, log_statement = 'none' (the server's statement log silenced)",
  ...needs("postgres"),
  async fn() {
    // What I did: a readWrite token sends
    //   create function s.f() returns int language sql
    //     set session_replication_role = replica
    //     as $b$ insert into s.child values (999) returning 1 $b$
    // (s.child references s.parent, which has no 999), then
    // `select s.f()`; and functions with SET allow_system_table_mods = on,
    // lo_compat_privileges = on, log_statement = 'none'.
    // What should happen: denied — these are PGC_SUSET settings, the
    // server's powers over its own checks and logs (only search_path is
    // read from a function's SET today), as `set … session_preload_libraries`
    // is for ALTER ROLE.
    // What happened: each `OK []`; `select s.f()` answers [[1]] and s.child
    // holds the orphan row that a plain INSERT is refused (23503).
    const own = ownSchema("attack56", "suset");
    const s = own.schema;
    await own.admin.unsafe(`create schema ${s};
      create table ${s}.parent (id int primary key);
      create table ${s}.child (pid int references ${s}.parent (id))`);
    const { server, write } = await servers("FunctionSettings");
    try {
      assert(
        (await write(`insert into ${s}.child values (999)`))
          .includes("23503"),
      );
      const passed = await notDenied(write, [
        `create function ${s}.f() returns int language sql set session_replication_role = replica as $b$ insert into ${s}.child values (999) returning 1 $b$`,
        `create function ${s}.g() returns int language sql set allow_system_table_mods = on as $b$ select 1 $b$`,
        `create function ${s}.h() returns int language sql set lo_compat_privileges = on as $b$ select 1 $b$`,
        `create function ${s}.i() returns int language sql set log_statement = 'none' as $b$ select 1 $b$`,
      ]);
      // Made by the administrator, the function's proconfig is read at
      // each call (pg_vet.ts): the call is refused too.
      await own.admin.unsafe(
        `create function ${s}.f() returns int language sql set session_replication_role = replica as $b$ insert into ${s}.child values (999) returning 1 $b$`,
      );
      const call = await write(`select ${s}.f()`);
      assert(
        call.startsWith("ERR denied") &&
          call.includes("session_replication_role"),
        call,
      );
      const orphans = await own.admin.unsafe(
        `select 1 from ${s}.child where pid = 999`,
      ).catch(() => []);
      assertEquals({ passed, orphans: orphans.length }, {
        passed: [],
        orphans: 0,
      });
    } finally {
      await server[Symbol.asyncDispose]();
      await own.drop();
    }
  },
});

Deno.test({
  name:
    "held: one readWrite client's six sleeping writes and a table rewrite holding ACCESS EXCLUSIVE do not hold a readOnly client's read past its own 2 s timeout",
  ...needs("postgres"),
  async fn() {
    // What I did: a readWrite token sends six `select pg_sleep(4)` at once
    // (timeout 30 s), then a readOnly token `select 1` (timeout 2 s); then
    // the readWrite token rewrites a table (`alter table … add column y
    // text default (pg_sleep(2))::text`, two rows) and the readOnly token
    // reads that table with a 2 s timeout, and pg_class.
    // What happened: `select 1` answers at once (the writes get at most
    // three of the pool's four sessions); the locked read fails at ~2 s
    // ("statement timeout of 2 s"); pg_class answers at once.
    const own = ownSchema("attack56", "stall");
    const s = own.schema;
    await own.admin.unsafe(
      `create schema ${s}; create table ${s}.t (x text); insert into ${s}.t values ('a'), ('b')`,
    );
    const saved = savedConnection(
      { engine: "postgres", url: POSTGRES_URL },
      "Stall",
      { externalAccess: "readWrite", safeMode: "silent" },
    );
    const server = await serverWith([saved]);
    const writer = (await server.mint("readWrite")).plaintext;
    const reader = (await server.mint("readOnly")).plaintext;
    const call = async (token: string, query: string, timeout: number) => {
      const started = performance.now();
      const got = said(
        await callTool(server, "execute_query", {
          connection_id: saved.id,
          query,
          timeout_seconds: timeout,
        }, { authorization: `Bearer ${token}` }),
      );
      return { got, ms: performance.now() - started };
    };
    try {
      const hogs = Array.from(
        { length: 6 },
        () => call(writer, "select pg_catalog.pg_sleep(4)", 30),
      );
      await new Promise((resolve) => setTimeout(resolve, 500));
      const first = await call(reader, "select 1", 2);
      assertEquals(first.got, "OK [[1]]");
      assert(first.ms < 1500, `select 1 took ${first.ms} ms`);
      await Promise.all(hogs);
      const rewrite = call(
        writer,
        `alter table ${s}.t add column y text default (pg_catalog.pg_sleep(2))::text`,
        30,
      );
      await new Promise((resolve) => setTimeout(resolve, 500));
      const locked = await call(reader, `select * from ${s}.t`, 2);
      assert(locked.ms < 3500, `the locked read took ${locked.ms} ms`);
      const catalog = await call(
        reader,
        "select count(*) > 0 from pg_catalog.pg_class",
        2,
      );
      assertEquals(catalog.got, "OK [[true]]");
      await rewrite;
    } finally {
      await server[Symbol.asyncDispose]();
      await own.drop();
    }
  },
});

Deno.test({
  name:
    "held (fixed: pg_settings.ts, set_config's setting by allowlist): a readWrite token reads a server file with set_config('standard_conforming_strings', 'off', true) beside a call of a two-statement SQL function made moments before — no SET clause needed, the body is parsed at its first call, after set_config ran",
  ...needs("postgres"),
  async fn() {
    // What I did: a readWrite token sends
    //   create function s.g() returns text language sql volatile as
    //     $b$ select 1; select 'a\' || ' || pg_read_file($$PG_VERSION$$) --' $b$
    // (vetted as two harmless SELECTs; two statements, so never inlined),
    // then
    //   select set_config('standard_conforming_strings', 'off', true) as s,
    //          s.g() as g
    // What should happen: denied (set_config of standard_conforming_strings
    // changes how every later body is read; settings a statement may set
    // should be allowlisted), or the file unread.
    // What happened: [["off","a' || 15\n"]]: PG_VERSION's text. (A readOnly
    // token is refused set_config; `select s.g()` alone answers the
    // harmless string.)
    const own = ownSchema("attack56", "setcfg");
    const s = own.schema;
    await own.admin.unsafe(`create schema ${s}`);
    const { server, write } = await servers("SetConfigStrings");
    try {
      assertEquals(
        await write(
          `create function ${s}.g() returns text language sql volatile as $b$ select 1; select 'a\\' || ' || pg_read_file($$PG_VERSION$$) --' $b$`,
        ),
        "OK []",
      );
      const got = await write(
        `select set_config('standard_conforming_strings', 'off', true) as s, ${s}.g() as g`,
      );
      assert(!got.includes("15\\n"), `the server file was read: ${got}`);
    } finally {
      await server[Symbol.asyncDispose]();
      await own.drop();
    }
  },
});

Deno.test({
  name:
    "held (fixed: write_allowlist.json, pg_vet.ts pastDatabase and internalCode): a readWrite token ends another session (pg_terminate_backend, pg_cancel_backend, or an admin's LANGUAGE internal alias of them) and reloads the server's configuration (pg_reload_conf) — signals are refused to readOnly only, not as reach",
  ...needs("postgres"),
  async fn() {
    // What I did: a session of the test's own (application_name
    // attack56_victim_<tag>) runs pg_sleep(20); a readWrite token sends
    //   select pg_terminate_backend(pid) from pg_stat_activity
    //     where application_name = 'attack56_victim_<tag>'
    // and `select pg_reload_conf()`, `select pg_cancel_backend(0)`, and
    // `select s.t(0, 0)` where s.t is an admin's LANGUAGE internal function
    // whose C symbol is pg_terminate_backend (refusedSymbol lets it by).
    // What should happen: denied as reaching other sessions and the
    // server's configuration, as pg_read_file is refused by name.
    // What happened: `OK [[true]]`: the victim's sleep fails with "terminating
    // connection due to administrator command"; the others `OK`.
    const own = ownSchema("attack56", "signal");
    const s = own.schema;
    const tag = crypto.randomUUID().slice(0, 8);
    await own.admin.unsafe(`create schema ${s};
      create function ${s}.t(int, bigint) returns boolean language internal strict as 'pg_terminate_backend'`);
    const victim = postgres(POSTGRES_URL, {
      max: 1,
      onnotice: () => {},
      connection: { application_name: `attack56_victim_${tag}` },
    });
    const sleeping = victim.unsafe("select pg_sleep(20)").then(
      () => "slept",
      (error) => `ended: ${error}`,
    );
    const { server, write } = await servers("Signals");
    try {
      await new Promise((resolve) => setTimeout(resolve, 500));
      const passed = await notDenied(write, [
        `select pg_terminate_backend(pid) from pg_stat_activity where application_name = 'attack56_victim_${tag}'`,
        "select pg_cancel_backend(0)",
        `select ${s}.t(0, 0)`,
        "select pg_reload_conf()",
        "select pg_rotate_logfile()",
        "select pg_stat_reset()",
        "select pg_switch_wal()",
      ]);
      assertEquals(
        passed,
        [],
        await Promise.race([
          sleeping,
          new Promise((resolve) => setTimeout(() => resolve("asleep"), 1000)),
        ]) as string,
      );
    } finally {
      await server[Symbol.asyncDispose]();
      await own.admin.unsafe(
        `select pg_cancel_backend(pid) from pg_stat_activity where application_name = 'attack56_victim_${tag}'`,
      );
      await sleeping;
      await victim.end({ timeout: 1 });
      await own.drop();
    }
  },
});

Deno.test({
  name:
    "held: a HASHES/MERGES operator's hash family, a range type's subtype_opclass and subtype_diff are followed — joins, ANY, range constructors and columns of such types are denied when a support function reads a file",
  ...needs("postgres"),
  async fn() {
    // What I did: the admin made s.=== (HASHES, MERGES) in a btree class
    // whose FUNCTION 1 reads PG_VERSION and a hash class whose FUNCTION 1
    // does too, a range type s.rng (subtype_opclass s.opc); a readWrite
    // token made s.rng2 (subtype_diff = a file-reading function, `OK []`:
    // it runs nothing yet). Then the statements below.
    // What happened: each `ERR denied` naming the support function.
    const own = ownSchema("attack56", "fam");
    const s = own.schema;
    const reads = (type: string) =>
      `select ('a56 ' || pg_read_file('PG_VERSION'))::${type}`;
    await own.admin.unsafe(`create schema ${s};
      create function ${s}.lt(text, text) returns boolean language sql immutable as $b$ select $1 < $2 $b$;
      create function ${s}.eq(text, text) returns boolean language sql immutable as $b$ select $1 = $2 $b$;
      create function ${s}.cmp(text, text) returns integer language sql immutable as $b$ ${
      reads("integer")
    } $b$;
      create function ${s}.hsh(text) returns integer language sql immutable as $b$ ${
      reads("integer")
    } $b$;
      create function ${s}.diff(float8, float8) returns float8 language sql immutable as $b$ ${
      reads("float8")
    } $b$;
      create operator ${s}.<<< (function = ${s}.lt, leftarg = text, rightarg = text);
      create operator ${s}.=== (function = ${s}.eq, leftarg = text, rightarg = text, hashes, merges);
      create operator class ${s}.opc for type text using btree as
        operator 1 ${s}.<<<, operator 3 ${s}.===, function 1 ${s}.cmp(text, text);
      create operator class ${s}.hopc for type text using hash as
        operator 1 ${s}.===, function 1 ${s}.hsh(text);
      create type ${s}.rng as range (subtype = text, subtype_opclass = ${s}.opc);
      create table ${s}.t (x text); insert into ${s}.t values ('b'), ('a')`);
    const { server, read, write } = await servers("Families");
    try {
      assertEquals(
        await write(
          `create type ${s}.rng2 as range (subtype = float8, subtype_diff = ${s}.diff)`,
        ),
        "OK []",
      );
      const passed = [
        ...await notDenied(read, [
          `select a.x from ${s}.t a join ${s}.t b on a.x operator(${s}.===) b.x`,
          `select x from ${s}.t where x operator(${s}.===) any (array['a', 'b'])`,
          `select ${s}.rng('a', 'b')`,
          `select '[a,b]'::${s}.rng`,
          `select ${s}.rng2(1, 2) && ${s}.rng2(1.5, 3)`,
        ]),
        ...await notDenied(write, [
          `create table ${s}.q (r ${s}.rng2)`,
          `create table ${s}.h (x text) partition by hash (x ${s}.hopc)`,
          `alter table ${s}.t add constraint ex exclude using btree (x ${s}.opc with operator(${s}.===))`,
        ]),
      ];
      assertEquals(passed, []);
    } finally {
      await server[Symbol.asyncDispose]();
      await own.drop();
    }
  },
});
