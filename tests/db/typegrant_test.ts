/**
 * What a write token may change by name on PostgreSQL: the database's own
 * objects only, resolved through the catalog as the server resolves them
 * (pg_named_objects.ts, pg_builtin_targets.ts), never the server's own
 * catalogs' rows (pg_vet.ts judgeRelation), and no transaction that
 * outlives the call (pg_statement_kinds.ts). Through the MCP endpoint
 * (execute_query, readWrite and readOnly tokens) against the real
 * PostgreSQL, in databases of the test's own (typegrant_*).
 *
 * Before: a readWrite token on a superuser login ran `comment on type
 * int4`, `revoke usage on type text from public`, `alter type int4 rename
 * to x` (every later `::integer` failed), `comment on operator +(int4,
 * int4)`, `comment on collation "C"`, `alter text search dictionary simple
 * (stopwords = english)`, `alter function md5(text) leakproof`, the same
 * inside `create schema s grant ...` or a SQL function's body, `insert
 * into pg_description`, `update pg_catalog.pg_proc`, and granted an
 * extension's function its script had revoked from PUBLIC (pgstattuple); only names
 * written with a catalog schema, or starting with pg_, were refused.
 *
 * @module
 */

import { assert, assertEquals } from "@std/assert";
import postgres from "postgres";
import { needs, POSTGRES_URL } from "../_db.ts";
import { said } from "../_outsider.ts";
import { savedConnection, serverWith } from "../_connections.ts";
import { callTool } from "../_tool_call.ts";

/**
 * A database of the test's own (information_schema on its search path
 * after public, pgstattuple and citext installed), a readWrite and a readOnly token on it.
 */
async function own(tag: string) {
  const name = `typegrant_${tag}_${crypto.randomUUID().slice(0, 8)}`;
  const root = postgres(POSTGRES_URL, { max: 1, onnotice: () => {} });
  await root.unsafe(`create database ${name}`);
  await root.unsafe(
    `alter database ${name} set search_path = "$user", public, information_schema`,
  );
  const url = new URL(POSTGRES_URL);
  url.pathname = `/${name}`;
  const admin = postgres(url.href, { max: 1, onnotice: () => {} });
  await admin.unsafe("create extension pgstattuple");
  await admin.unsafe("create extension citext");
  const saved = savedConnection(
    { engine: "postgres", url: url.href },
    `Typegrant${tag}`,
    { externalAccess: "readWrite", safeMode: "silent" },
  );
  const server = await serverWith([saved], { approvalTimeoutSeconds: 1 });
  const writer = (await server.mint("readWrite")).plaintext;
  const reader = (await server.mint("readOnly")).plaintext;
  const call = async (token: string, query: string) =>
    said(
      await callTool(server, "execute_query", {
        connection_id: saved.id,
        query,
        max_rows: 20,
      }, { authorization: `Bearer ${token}` }),
    );
  return {
    admin,
    write: (query: string) => call(writer, query),
    read: (query: string) => call(reader, query),
    async drop() {
      await server[Symbol.asyncDispose]();
      await admin.end();
      await root.unsafe(`drop database if exists ${name} with (force)`);
      await root.end();
    },
  };
}

type Db = Awaited<ReturnType<typeof own>>;

/**
 * Each of `cases` ([statement, what its refusal must name]) that a token
 * did not refuse as dbport, naming the object: what it answered instead.
 */
async function notRefused(
  db: Db,
  cases: readonly (readonly [string, string])[],
): Promise<string[]> {
  const wrong: string[] = [];
  for (const [query, object] of cases) {
    const wrote = await db.write(query);
    if (!wrote.startsWith("ERR denied") || !wrote.includes(object)) {
      wrong.push(`write: ${query} -> ${wrote.slice(0, 300)}`);
    }
    const read = await db.read(query);
    if (!read.startsWith("ERR denied") && !read.startsWith("FORBIDDEN")) {
      wrong.push(`read: ${query} -> ${read.slice(0, 300)}`);
    }
  }
  return wrong;
}

/** The comments, names and privileges the refused statements aim at. */
const BUILTIN_STATE = `
  select obj_description('pg_catalog.int4'::regtype, 'pg_type') as int4,
         obj_description('pg_catalog.md5(text)'::regprocedure, 'pg_proc') as md5,
         (select proleakproof from pg_proc where oid = 'pg_catalog.md5(text)'::regprocedure) as leakproof,
         has_type_privilege('public', 'pg_catalog.text', 'USAGE') as text_usage,
         has_function_privilege('public', 'public.pgstattuple(text)', 'EXECUTE') as pgstattuple,
         obj_description('public.citext'::regtype, 'pg_type') as citext,
         (select dictinitoption from pg_ts_dict where oid = 'pg_catalog.simple'::regdictionary) as simple,
         (select count(*) from pg_description where description like 'typegrant%')::int as comments,
         to_regtype('pg_catalog.int4') is not null as int4_named,
         to_regclass('information_schema.tables') is not null as tables`;

Deno.test({
  name:
    "typegrant: COMMENT ON, GRANT|REVOKE, ALTER, RENAME, SET SCHEMA and DROP of a built-in named unqualified (type, domain, function, aggregate, operator, collation, text search configuration and dictionary, catalog table and view) are refused to every token, the refusal naming the object as the catalog resolves it; nothing of the server's own changes",
  ...needs("postgres"),
  async fn() {
    const db = await own("builtin");
    try {
      const before = await db.admin.unsafe(BUILTIN_STATE);
      const cases = [
        ["comment on type int4 is 'typegrant'", "type integer of pg_catalog"],
        ["comment on type int4[] is 'typegrant'", "type integer[]"],
        ["comment on type text is 'typegrant'", "type text of pg_catalog"],
        ["grant usage on type int4 to public", "type integer"],
        ["revoke usage on type text from public", "type text"],
        ["grant usage on domain cardinal_number to public", "cardinal_number"],
        [
          "comment on domain cardinal_number is 'typegrant'",
          "type cardinal_number of information_schema",
        ],
        ["alter type int4 rename to typegrant_int", "type integer"],
        ["alter type text set schema public", "type text"],
        ["alter domain cardinal_number drop not null", "cardinal_number"],
        ["drop type int4", "type integer"],
        ["comment on function now() is 'typegrant'", "function now()"],
        ["comment on function now is 'typegrant'", "function now()"],
        ["comment on function md5(text) is 'typegrant'", "function md5(text)"],
        ["revoke execute on function md5(text) from public", "md5(text)"],
        ["grant execute on routine now to public", "now()"],
        ["alter function md5(text) leakproof", "function md5(text)"],
        ["alter function md5(text) rename to typegrant_md5", "md5(text)"],
        ["alter function md5(text) set schema public", "md5(text)"],
        ["comment on aggregate count(*) is 'typegrant'", "function count()"],
        ["comment on aggregate sum(int4) is 'typegrant'", "sum(integer)"],
        ["alter aggregate sum(int4) rename to typegrant_sum", "sum(integer)"],
        [
          "comment on operator +(int4, int4) is 'typegrant'",
          "operator +(integer,integer)",
        ],
        ["comment on operator -(none, int4) is 'typegrant'", "operator -"],
        ["comment on collation \"C\" is 'typegrant'", 'collation "C"'],
        ['alter collation "C" rename to typegrant_c', 'collation "C"'],
        [
          "comment on text search configuration english is 'typegrant'",
          "text search configuration english",
        ],
        [
          "alter text search configuration english alter mapping for word with simple",
          "text search configuration english",
        ],
        [
          "comment on text search dictionary simple is 'typegrant'",
          "text search dictionary simple",
        ],
        [
          "alter text search dictionary simple (stopwords = english)",
          "text search dictionary simple",
        ],
        // Relations of the catalogs, unqualified (information_schema is on
        // this database's path after public).
        ["comment on table pg_class is 'typegrant'", "pg_class"],
        ["grant select on pg_authid to public", "pg_authid"],
        ["comment on view tables is 'typegrant'", "information_schema"],
        ["grant select on tables to public", "information_schema"],
        ["comment on column tables.table_name is 'typegrant'", "tables"],
        // A schema is named exactly; information_schema is not pinned.
        [
          "drop schema information_schema cascade",
          "schema information_schema, an object",
        ],
        [
          "drop view information_schema.tables",
          "view tables of information_schema",
        ],
        // Statements inside CREATE SCHEMA are the same statements.
        [
          "create schema typegrant_s grant execute on function md5(text) to public",
          "function md5(text)",
        ],
        [
          "create schema typegrant_s grant usage on type text to public",
          "type text",
        ],
      ] as const;
      assertEquals(await notRefused(db, cases), []);
      assertEquals(await db.admin.unsafe(BUILTIN_STATE), before);
    } finally {
      await db.drop();
    }
  },
});

Deno.test({
  name:
    "typegrant: an extension's member (pgstattuple(text), which its script revokes from PUBLIC; the type citext) is the administrator's: GRANT, COMMENT, RENAME refused, naming the extension",
  ...needs("postgres"),
  async fn() {
    const db = await own("ext");
    try {
      const before = await db.admin.unsafe(BUILTIN_STATE);
      assertEquals(
        await notRefused(db, [
          [
            "grant execute on function pgstattuple(text) to public",
            "function pgstattuple(text), a member of the extension pgstattuple",
          ],
          [
            "comment on function pgstattuple(text) is 'typegrant'",
            "the extension pgstattuple",
          ],
          [
            "alter function pgstattuple(text) rename to typegrant_u",
            "the extension pgstattuple",
          ],
          [
            "comment on type citext is 'typegrant'",
            "type citext, a member of the extension citext",
          ],
        ]),
        [],
      );
      assertEquals(await db.admin.unsafe(BUILTIN_STATE), before);
    } finally {
      await db.drop();
    }
  },
});

Deno.test({
  name:
    "typegrant: what a SQL function's body changes by name is resolved on the body's own search path, and a write into the server's catalogs (directly, through a view, in a body) is refused: the function's call names the built-in",
  ...needs("postgres"),
  async fn() {
    const db = await own("body");
    try {
      const before = await db.admin.unsafe(BUILTIN_STATE);
      for (
        const create of [
          "create function typegrant_c() returns void language sql as $$ comment on type int4 is 'typegrant' $$",
          "create function typegrant_d() returns void language sql set search_path = public, information_schema as $$ comment on domain cardinal_number is 'typegrant' $$",
          "create function typegrant_w() returns void language sql as $$ insert into pg_description values (1, 1259, 0, 'typegrant') $$",
          "create view typegrant_v as select * from pg_description",
        ]
      ) assertEquals(await db.write(create), "OK []", create);
      assertEquals(
        await notRefused(db, [
          ["select typegrant_c()", "typegrant_c() runs COMMENT ON int4"],
          // Refused before its COMMENT is resolved: information_schema is on
          // its path (pg_vet_bodies.ts definesInCatalog).
          [
            "select typegrant_d()",
            "typegrant_d() runs Comment with information_schema",
          ],
          ["select typegrant_w()", "writes pg_catalog.pg_description"],
          [
            "insert into pg_description values (1, 1259, 0, 'typegrant')",
            "writes pg_catalog.pg_description",
          ],
          [
            "update pg_catalog.pg_proc set proleakproof = true where proname = 'md5'",
            "writes pg_catalog.pg_proc",
          ],
          [
            "update typegrant_v set description = 'typegrant' where objoid = 23",
            "writes pg_catalog.pg_description",
          ],
          [
            "delete from information_schema.sql_features where false",
            "information_schema.sql_features",
          ],
        ]),
        [],
      );
      assertEquals(await db.admin.unsafe(BUILTIN_STATE), before);
    } finally {
      await db.drop();
    }
  },
});

Deno.test({
  name:
    "typegrant: the database's own objects still pass - COMMENT, GRANT, RENAME and ALTER of a type, table, function named like a built-in, operator, collation, text search configuration and dictionary of a typegrant_ schema, called qualified; an unqualified type of public; writes of its own tables",
  ...needs("postgres"),
  async fn() {
    const db = await own("mine");
    try {
      const steps = [
        "create schema typegrant_own",
        "comment on schema typegrant_own is 'typegrant mine'",
        "comment on schema public is 'typegrant mine'",
        "grant usage on schema typegrant_own to public",
        "alter schema typegrant_own rename to typegrant_own2",
        "alter schema typegrant_own2 rename to typegrant_own",
        "create type typegrant_own.ty as (a int)",
        "comment on type typegrant_own.ty is 'typegrant mine'",
        "grant usage on type typegrant_own.ty to public",
        "create type typegrant_mood as enum ('a', 'b')",
        "comment on type typegrant_mood is 'typegrant mine'",
        "alter type typegrant_mood add value 'c'",
        "create domain typegrant_own.dom as int",
        "comment on domain typegrant_own.dom is 'typegrant mine'",
        "alter domain typegrant_own.dom set not null",
        "create table typegrant_own.t (a int)",
        "grant select on typegrant_own.t to public",
        "comment on table typegrant_own.t is 'typegrant mine'",
        "comment on column typegrant_own.t.a is 'typegrant mine'",
        "alter table typegrant_own.t add column b int",
        "create index on typegrant_own.t (a)",
        "insert into typegrant_own.t values (1, 2)",
        "update typegrant_own.t set b = 3 where a = 1",
        "create function typegrant_own.md5(text) returns text language sql as $$ select 'mine' $$",
        "comment on function typegrant_own.md5(text) is 'typegrant mine'",
        "grant execute on function typegrant_own.md5(text) to public",
        "create function typegrant_own.plus(int4, int4) returns int4 language sql as $$ select $1 + $2 $$",
        "create operator typegrant_own.=== (function = typegrant_own.plus, leftarg = int4, rightarg = int4)",
        "comment on operator typegrant_own.=== (int4, int4) is 'typegrant mine'",
        'create collation typegrant_own.coll from "C"',
        "comment on collation typegrant_own.coll is 'typegrant mine'",
        "create text search configuration typegrant_own.cfg (copy = english)",
        "alter text search configuration typegrant_own.cfg alter mapping for word with simple",
        "create text search dictionary typegrant_own.dict (template = simple)",
        "alter text search dictionary typegrant_own.dict (stopwords = english)",
        "comment on text search dictionary typegrant_own.dict is 'typegrant mine'",
        "create schema typegrant_s2 grant usage on type typegrant_own.ty to public",
        "begin",
        "savepoint typegrant_a",
        "commit",
      ];
      const failed: string[] = [];
      for (const step of steps) {
        const got = await db.write(step);
        if (!got.startsWith("OK")) failed.push(`${step} -> ${got}`);
      }
      assertEquals(failed, []);
      assertEquals(
        await db.write("select typegrant_own.md5('a') as m"),
        'OK [["mine"]]',
      );
      // A routine renamed asks since stop 62 (code already installed may
      // call it by its old name): asked, not refused.
      const renamed = await db.write(
        "alter function typegrant_own.md5(text) rename to typegrant_md6",
      );
      assert(renamed.startsWith("ERR user_cancelled"), renamed);
      // An argument's type named by a column's %TYPE is not resolved:
      // refused, the type itself to be named.
      const pct = await db.write(
        "comment on function typegrant_own.plus(typegrant_own.t.a%type, int4) is 'typegrant pct'",
      );
      assert(pct.startsWith("ERR denied") && pct.includes("%TYPE"), pct);
      assertEquals(
        await db.write(
          "comment on function typegrant_own.plus(int4, int4) is 'typegrant mine'",
        ),
        "OK []",
      );
      const [row] = await db.admin.unsafe(
        "select count(*)::int as n from pg_description where description = 'typegrant mine'",
      );
      assertEquals(row?.n, 12);
    } finally {
      await db.drop();
    }
  },
});

Deno.test({
  name:
    "typegrant: PREPARE TRANSACTION, COMMIT PREPARED and ROLLBACK PREPARED are refused to every token by dbport, before the server (max_prepared_transactions = 0 here) sees them: a prepared transaction outlives the session, holding its locks",
  ...needs("postgres"),
  async fn() {
    const db = await own("prepared");
    try {
      for (
        const query of [
          "prepare transaction 'typegrant_x'",
          "commit prepared 'typegrant_x'",
          "rollback prepared 'typegrant_x'",
        ]
      ) {
        const wrote = await db.write(query);
        assert(wrote.startsWith("ERR denied"), `${query} -> ${wrote}`);
        assert(
          wrote.includes("PREPARE TRANSACTION") &&
            wrote.includes("outlives dbport's session") &&
            wrote.includes("holding its locks"),
          `${query} -> ${wrote}`,
        );
        // The server's own answers ("prepared transactions are disabled",
        // "prepared transaction with identifier ... does not exist").
        assert(!wrote.includes("SQLSTATE"), `${query} -> ${wrote}`);
        const read = await db.read(query);
        assert(
          read.startsWith("ERR denied") || read.startsWith("FORBIDDEN"),
          `${query} -> ${read}`,
        );
        assert(!read.includes("SQLSTATE"), `${query} -> ${read}`);
      }
    } finally {
      await db.drop();
    }
  },
});

Deno.test({
  name:
    "typegrant: a name holding $' or $` (a table \"typegrant$'t\") is vetted, not pasted into the vetting query's text (String.replace read them as the query's own remainder or head: every statement naming it failed with dbport's own syntax error)",
  ...needs("postgres"),
  async fn() {
    const db = await own("dollar");
    try {
      await db.admin.unsafe(
        `create table "typegrant$'t" (a int); insert into "typegrant$'t" values (7);
         create table "typegrant$\`u" (a int); insert into "typegrant$\`u" values (8)`,
      );
      assertEquals(await db.read(`select a from "typegrant$'t"`), "OK [[7]]");
      assertEquals(await db.read('select a from "typegrant$`u"'), "OK [[8]]");
      assertEquals(
        await db.write(`update "typegrant$'t" set a = 9 where a = 7`),
        "OK []",
      );
      // The names a statement changes are resolved the same way.
      assertEquals(
        await db.write(`comment on table "typegrant$'t" is 'typegrant'`),
        "OK []",
      );
    } finally {
      await db.drop();
    }
  },
});
