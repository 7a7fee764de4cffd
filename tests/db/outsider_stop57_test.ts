/**
 * An outsider's attacks (stop 57) on what landed after stop 56: the
 * allowlist of PostgreSQL statement kinds (pg_statement_kinds.ts), a clear
 * session's socket reading into a buffer of its own (pg_socket_reads.ts,
 * pg_wire.ts), and answers over 16K characters written as UTF-8 bytes
 * encoded once (lib/server/answer.ts). Through the MCP endpoint
 * (execute_query with readWrite and readOnly tokens) against the real
 * PostgreSQL 15, in databases and roles of the test's own (attack57_*).
 *
 * Findings ("leaks: …" / "refuses wrongly: …", each ignored because it
 * fails today):
 * - Lone surrogates (U+D800) in a string literal cut the end of the text
 *   libpg_query parses (libpg-query's WASM copy is sized by
 *   lengthBytesUTF8, 4 bytes a surrogate skipping the next unit, and
 *   written 3 bytes a lone surrogate): a readOnly token reads pg_authid's
 *   password verifiers and calls functions off the read allowlist.
 * - COMMENT ON names no object kind the allowlist checks: a readWrite
 *   token comments on another database of the cluster, on a role, on the
 *   catalogs' objects (schema pg_catalog, pg_class, int4, btree, casts,
 *   collations, operator classes), on extensions and languages.
 * - CREATE SCHEMA … AUTHORIZATION other_role hands the schema (and what
 *   it creates) to another role, which ALTER … OWNER TO is refused for.
 * - REVOKE USAGE ON SCHEMA pg_catalog FROM PUBLIC and GRANT USAGE ON TYPE
 *   pg_catalog.int4 change the catalogs' privileges (only GRANT … ALL … IN
 *   SCHEMA pg_catalog is refused).
 * - LOCK TABLE of a view over pg_catalog.pg_database locks the cluster's
 *   shared catalog (LOCK recurses into a view's tables; only a catalog
 *   named in the statement is refused).
 * - set_config('client_encoding', 'LATIN1', true) in a write's SELECT has
 *   the server send the rest of the rows in LATIN1, which dbport reads as
 *   UTF-8: 'é' is answered as U+FFFD.
 * - A readWrite token's FOREIGN KEY … ON DELETE CASCADE, GRANT DELETE, a
 *   rule or trigger ON|AFTER DELETE are read by the lexical classifier as
 *   a DELETE without WHERE: the user is asked ("changes every row")
 *   although Safe Mode is silent.
 * - CREATE TEXT SEARCH DICTIONARY (an object of the database's own) is
 *   refused as the administrator's.
 *
 * Held: ordinary DDL and DML of every common shape; readOnly tokens send
 * no LOCK, NOTIFY, LISTEN, SET, COMMIT, DECLARE, FETCH; SET ROLE, SET
 * SESSION AUTHORIZATION, SET client_encoding and WITH HOLD cursors do not
 * outlive a write's call; GRANT … ALL … IN SCHEMA pg_catalog; concurrent
 * reads of large multibyte rows beside writes and catalog queries, errors
 * mid-result and a session ended mid-read; answers around 16,384
 * characters (modern and legacy) say their exact byte length.
 *
 * @module
 */

import { assert, assertEquals } from "@std/assert";
import postgres from "postgres";
import { classify } from "../../lib/db/sql/classifier.ts";
import { parsePostgres } from "../../lib/db/postgres/pg_parse.ts";
import { needs, POSTGRES_URL } from "../_db.ts";
import { said } from "../_outsider.ts";
import { savedConnection, serverWith } from "../_connections.ts";
import { callTool } from "../_tool_call.ts";
import { initializeSession, modernHeaders, modernRequest } from "../_server.ts";
import type { JsonObject } from "../../lib/protocol/jsonrpc.ts";

/**
 * A database of the test's own with a role of its own (NOLOGIN), the admin
 * on it, a readWrite and a readOnly token on a server over it.
 */
async function own(tag: string, settings: JsonObject = {}) {
  const name = `attack57_${tag}_${crypto.randomUUID().slice(0, 8)}`;
  const role = `${name}_r`;
  const root = postgres(POSTGRES_URL, { max: 1, onnotice: () => {} });
  await root.unsafe(`create database ${name}`);
  await root.unsafe(`create role ${role} nologin`);
  const url = new URL(POSTGRES_URL);
  url.pathname = `/${name}`;
  const admin = postgres(url.href, { max: 2, onnotice: () => {} });
  const saved = savedConnection(
    { engine: "postgres", url: url.href },
    `Attack57${tag}`,
    { externalAccess: "readWrite", safeMode: "silent" },
  );
  const server = await serverWith([saved], {
    maxAnswerChars: 20_000_000,
    maxCellChars: 5_000_000,
    maxResultBytes: 50_000_000,
    ...settings,
  });
  const writer = (await server.mint("readWrite")).plaintext;
  const reader = (await server.mint("readOnly")).plaintext;
  const call = (token: string, query: string, maxRows = 50) =>
    callTool(server, "execute_query", {
      connection_id: saved.id,
      query,
      max_rows: maxRows,
    }, { authorization: `Bearer ${token}` });
  return {
    name,
    role,
    root,
    admin,
    server,
    saved,
    writer,
    reader,
    call,
    write: async (query: string) => said(await call(writer, query)),
    read: async (query: string) => said(await call(reader, query)),
    async drop(extraDatabases: string[] = []) {
      await server[Symbol.asyncDispose]();
      await admin.end();
      for (const db of [name, ...extraDatabases]) {
        await root.unsafe(`drop database if exists ${db} with (force)`);
      }
      await root.unsafe(`drop owned by ${role} cascade`).catch(() => {});
      await root.unsafe(`drop role if exists ${role}`);
      await root.end();
    },
  };
}

/** Those of `queries` that `run` did not deny, with what they answered. */
async function notDenied(
  run: (query: string) => Promise<string>,
  queries: string[],
): Promise<string[]> {
  const passed: string[] = [];
  for (const query of queries) {
    const got = await run(query);
    if (!got.startsWith("ERR denied") && !got.startsWith("FORBIDDEN")) {
      passed.push(`${query} -> ${got.slice(0, 120)}`);
    }
  }
  return passed;
}

/** Those of `queries` that `run` denied or failed, with what they said. */
async function notAnswered(
  run: (query: string) => Promise<string>,
  queries: string[],
): Promise<string[]> {
  const failed: string[] = [];
  for (const query of queries) {
    const got = await run(query);
    if (!got.startsWith("OK")) failed.push(`${query} -> ${got.slice(0, 160)}`);
  }
  return failed;
}

/**
 * `select '<k lone surrogates>' as s` + `tail` for the smallest k at which
 * libpg_query's tree holds no function and no relation: the tail is cut off
 * what dbport's parser reads (null when no k up to 400 does).
 */
async function hiddenTail(tail: string): Promise<string | null> {
  for (let k = 1; k <= 400; k++) {
    const text = `select '${"\ud800".repeat(k)}' as s${tail}`;
    const parsed = await parsePostgres(text);
    if (
      parsed.ok && parsed.analysis !== null &&
      parsed.analysis.functions.length === 0 &&
      parsed.analysis.relations.length === 0
    ) {
      return text;
    }
  }
  return null;
}

Deno.test({
  name:
    "held (fixed: pg_parse.ts grammarText): lone surrogates (U+D800) in a string literal hide the statement's tail from libpg_query (its WASM string copy is sized shorter than it writes, and the end is cut) — a readOnly token reads pg_authid's password verifiers and calls functions off the read allowlist; the lexer's tier check is the only layer that still sees the tail",
  ...needs("postgres"),
  async fn() {
    // What I did: the admin made attack57_sg_*_r WITH PASSWORD. A readOnly
    // token sends
    //   select '<k × U+D800>' as s, (select rolpassword from
    //     pg_catalog.pg_authid where rolname = 'attack57_sg_*_r') as p
    //   select '<k × U+D800>' as s,
    //     pg_log_backend_memory_contexts(pg_backend_pid()) as t
    // (JSON "\ud800" escapes; k the smallest count at which dbport's parser
    // reads only `select '…' as s`: 20 to 80 here).
    // What should happen: denied, as the same statements without the
    // surrogates are ("reads pg_catalog.pg_authid, which holds every role's
    // password verifier"; "pg_log_backend_memory_contexts() is not on
    // dbport's allowlist"): the text dbport vets is the text the server
    // runs (lone surrogates refused, or replaced by U+FFFD as postgres.js
    // sends them, before parsing).
    // What happened: `OK [["\ufffd…","SCRAM-SHA-256$4096:…"]]` and
    // `OK [["\ufffd…",true]]`. libpg-query's wasm/index.js allocates
    // lengthBytesUTF8(str) + 1 bytes (4 for a surrogate, skipping the next
    // code unit) but stringToUTF8 writes 3 bytes for each lone surrogate:
    // each pair of them loses 2 bytes at the end of the text, so
    // pg_parse.ts parseOnce() analyses a prefix. Only where the lexical
    // classifier's tier differs (pg_terminate_backend: write) is the text
    // refused ("dbport's lexer and the database's own parser read this
    // statement differently").
    const db = await own("sg");
    await db.root.unsafe(`alter role ${db.role} password 'attack57pw'`);
    try {
      const direct = await db.read(
        `select 'x' as s, (select rolpassword from pg_catalog.pg_authid where rolname = '${db.role}') as p`,
      );
      assert(direct.startsWith("ERR denied"), direct);
      const secretTail =
        `, (select rolpassword from pg_catalog.pg_authid where rolname = '${db.role}') as p`;
      const calledTail =
        ", pg_log_backend_memory_contexts(pg_backend_pid()) as t";
      // Since the fix no count of lone surrogates hides a tail from the
      // parser (pg_parse.ts grammarText).
      assertEquals(await hiddenTail(secretTail), null);
      assertEquals(await hiddenTail(calledTail), null);
      for (const k of [20, 40, 80]) {
        const lone = "\ud800".repeat(k);
        const got = {
          secret: await db.read(`select '${lone}' as s${secretTail}`),
          called: await db.read(`select '${lone}' as s${calledTail}`),
        };
        assertEquals(
          {
            secret: got.secret.includes("SCRAM-SHA-256") ||
              got.secret.includes("md5"),
            called: got.called.startsWith("OK"),
          },
          { secret: false, called: false },
          JSON.stringify(got).replace(/\ufffd+/g, "\ufffd…"),
        );
        assert(got.secret.startsWith("ERR denied"), got.secret);
      }
    } finally {
      await db.drop();
    }
  },
});

Deno.test({
  name:
    "held (fixed: pg_statement_kinds.ts): COMMENT ON checks its object kind — a readWrite token comments on another database of the cluster, on a role, and on the catalogs' own objects (schema pg_catalog, pg_class, int4, btree, casts, collations, operator classes, extensions, languages)",
  ...needs("postgres"),
  async fn() {
    // What I did: a readWrite token on database attack57_cm_* sends
    //   comment on database attack57_cm_*_other is 'attack57 was here'
    //   comment on role attack57_cm_*_r is '…'
    //   comment on schema pg_catalog / table pg_catalog.pg_class /
    //     type pg_catalog.int4 / access method btree / cast (bigint as
    //     int4) / collation pg_catalog."C" / operator class
    //     pg_catalog.int4_ops using btree / extension plpgsql /
    //     language plpgsql is '…'
    // What should happen: refused as the administrator's, like DROP,
    // RENAME and GRANT of those kinds (pg_statement_kinds.ts): a database's
    // and a role's comments are the cluster's (pg_shdescription, seen from
    // every database: `\l+`, `\du+`, and by every other AI client reading
    // descriptions), the rest are the catalogs'.
    // What happened: `OK []` to every one (CommentStmt is on the allowlist
    // and OBJECT_FIELD names no `objtype` for it; changesCatalog() has no
    // CommentStmt either). Stop 56 reported COMMENT ON FUNCTION
    // pg_catalog.now() and ON TABLE pg_catalog.pg_class (still ignored
    // there); the cluster's shared objects (databases, roles) are new.
    const db = await own("cm");
    const other = `${db.name}_other`;
    await db.root.unsafe(`create database ${other}`);
    try {
      const passed = await notDenied(db.write, [
        `comment on database ${other} is 'attack57 was here'`,
        `comment on role ${db.role} is 'attack57 was here'`,
        "comment on schema pg_catalog is 'attack57'",
        "comment on table pg_catalog.pg_class is 'attack57'",
        "comment on type pg_catalog.int4 is 'attack57'",
        "comment on access method btree is 'attack57'",
        "comment on cast (bigint as int4) is 'attack57'",
        `comment on collation pg_catalog."C" is 'attack57'`,
        "comment on operator class pg_catalog.int4_ops using btree is 'attack57'",
        "comment on extension plpgsql is 'attack57'",
        "comment on language plpgsql is 'attack57'",
      ]);
      const [seen] = await db.root.unsafe(
        `select shobj_description(oid, 'pg_database') as d from pg_database where datname = $1`,
        [other],
      );
      assertEquals(
        { passed, otherDatabase: seen?.d ?? null },
        { passed: [], otherDatabase: null },
      );
    } finally {
      await db.root.unsafe(`comment on role ${db.role} is null`);
      await db.drop([other]);
    }
  },
});

Deno.test({
  name:
    "held (fixed: pg_statement_kinds.ts): CREATE SCHEMA … AUTHORIZATION another_role hands a schema and what it creates to another role — what ALTER … OWNER TO is refused for",
  ...needs("postgres"),
  async fn() {
    // What I did: a readWrite token sends
    //   create schema s_auth authorization attack57_ca_*_r
    //   create schema authorization attack57_ca_*_r
    //     create table owned_by_r (a int)
    // What should happen: refused like `ALTER … OWNER TO` ("hands an
    // object to another role, which is the server administrator's to
    // decide", pg_statement_kinds.ts changesOwner): the other role owns
    // the schema and the table, may grant on them, and a SECURITY DEFINER
    // object it is later given runs as it.
    // What happened: `OK []` to both; pg_namespace shows the role as owner.
    const db = await own("ca");
    try {
      const passed = await notDenied(db.write, [
        `create schema s_auth authorization ${db.role}`,
        `create schema authorization ${db.role} create table owned_by_r (a int)`,
      ]);
      const owned = await db.admin.unsafe(
        `select nspname from pg_namespace where nspowner = $1::regrole order by 1`,
        [db.role],
      );
      assertEquals(
        { passed, owned: owned.map((row) => row.nspname) },
        { passed: [], owned: [] },
      );
    } finally {
      await db.drop();
    }
  },
});

Deno.test({
  name:
    "held (fixed: pg_reach.ts touchesCatalog): REVOKE USAGE ON SCHEMA pg_catalog FROM PUBLIC and GRANT USAGE ON TYPE pg_catalog.int4 change the catalogs' privileges — only GRANT … ALL … IN SCHEMA pg_catalog is refused",
  ...needs("postgres"),
  async fn() {
    // What I did: a readWrite token sends
    //   revoke usage on schema pg_catalog from public
    //   grant usage on type pg_catalog.int4 to attack57_ga_*_r
    //   grant usage on schema pg_catalog to attack57_ga_*_r with grant option
    // What should happen: refused: the catalogs' privileges are the
    // server's (the message of `GRANT … ALL … IN SCHEMA pg_catalog`: "changes
    // who may use the server's catalogs"). REVOKE USAGE ON SCHEMA
    // pg_catalog FROM PUBLIC is every non-superuser application role's
    // outage in that database.
    // What happened: `OK []` to each; pg_namespace.nspacl of pg_catalog
    // lost `=U/postgres`.
    const db = await own("ga");
    try {
      const passed = await notDenied(db.write, [
        "revoke usage on schema pg_catalog from public",
        `grant usage on type pg_catalog.int4 to ${db.role}`,
        `grant usage on schema pg_catalog to ${db.role} with grant option`,
      ]);
      const [acl] = await db.admin.unsafe(
        "select nspacl::text as acl from pg_namespace where nspname = 'pg_catalog'",
      );
      assertEquals(
        {
          passed,
          publicUsage: String(acl?.acl ?? "").includes(",=U/"),
        },
        { passed: [], publicUsage: true },
      );
    } finally {
      await db.drop();
    }
  },
});

Deno.test({
  name:
    "held (fixed: pg_reach.ts locksCatalog, pg_lock_targets.ts): LOCK TABLE pg_catalog.pg_database, or a view over it, locks the cluster's shared catalog (LOCK recurses into a view's tables; of the catalogs only pg_authid is refused by name)",
  ...needs("postgres"),
  async fn() {
    // What I did: a readWrite token sends
    //   create view lv as select d.datname from pg_catalog.pg_database d, t
    //   lock table lv in row share mode
    // while the admin holds ACCESS EXCLUSIVE on the database's own t, so
    // the LOCK waits there after it has locked pg_database; the admin
    // reads pg_locks meanwhile. (ROW SHARE, which blocks no one, to show
    // the reach; `in access exclusive mode` is the same statement: queued
    // behind any reader of pg_database it blocks every new connection to
    // every database of the cluster until the call's timeout.)
    // What should happen: refused, as `lock table pg_catalog.pg_authid`
    // is, both named and through the view (a LOCK's view followed to its
    // tables, or LOCK of a view refused): a catalog is the server's.
    // What happened: `lock table pg_catalog.pg_database in row share mode`
    // answers `OK []`; through the view, pg_locks shows dbport's session holding RowShareLock
    // on pg_database (relation 1262, database 0: shared) and waiting on t.
    const db = await own("lk");
    await db.admin.unsafe("create table t (a int)");
    try {
      assertEquals(
        await db.write(
          "create view lv as select d.datname from pg_catalog.pg_database d, t",
        ),
        "OK []",
      );
      const named = (await db.write(
          "lock table pg_catalog.pg_database in row share mode",
        )).startsWith("ERR denied")
        ? "denied"
        : "ran";
      const held = await db.admin.reserve();
      await held.unsafe("begin");
      await held.unsafe("lock table t in access exclusive mode");
      const locking = db.write("lock table lv in row share mode");
      let shared: string[] = [];
      for (let i = 0; i < 50 && shared.length === 0; i++) {
        await new Promise((resolve) => setTimeout(resolve, 100));
        const rows = await db.root.unsafe(
          `select l.mode from pg_locks l join pg_stat_activity a using (pid)
           where a.datname = $1 and l.relation = 'pg_catalog.pg_database'::regclass
             and l.granted and a.pid <> pg_backend_pid()`,
          [db.name],
        );
        shared = rows.map((row) => String(row.mode));
      }
      await held.unsafe("rollback");
      held.release();
      const got = (await locking).startsWith("ERR denied") ? "denied" : "ran";
      assertEquals(
        { shared, named, got },
        { shared: [], named: "denied", got: "denied" },
      );
    } finally {
      await db.drop();
    }
  },
});

Deno.test({
  name:
    "held (fixed: pg_settings.ts): set_config('client_encoding', 'LATIN1', true) in a write's SELECT has the server send its rows in LATIN1, which dbport reads as UTF-8 — 'é' is answered as U+FFFD",
  ...needs("postgres"),
  async fn() {
    // What I did: the table holds 'é'; a readWrite token sends
    //   select set_config('client_encoding', 'LATIN1', true) as s, x from t
    //   select x, set_config('client_encoding', 'WIN1252', true) as s from t
    // What should happen: the answer is the row's value ('é'), or the
    // statement is refused (a session's client_encoding is the reader's
    // premise, like standard_conforming_strings): what the answer says is
    // what the database holds.
    // What happened: `OK [["LATIN1","\ufffd"]]` and `OK [["\ufffd",
    // "WIN1252"]]`: the server converts each row at send time with the
    // setting the target list just changed, and postgres.js decodes the
    // bytes as UTF-8. (SET client_encoding alone does not outlive the
    // call: "held" below.) extra_float_digits, DateStyle, IntervalStyle
    // and bytea_output change an answer's text the same way, within the
    // server's own formats.
    const db = await own("enc");
    await db.admin.unsafe(
      "create table t (x text); insert into t values ('é')",
    );
    try {
      const got = [
        await db.write(
          "select set_config('client_encoding', 'LATIN1', true) as s, x from t",
        ),
        await db.write(
          "select x, set_config('client_encoding', 'WIN1252', true) as s from t",
        ),
      ];
      assertEquals(
        got.map((line) => line.includes("\ufffd")),
        [false, false],
        got.join("\n"),
      );
    } finally {
      await db.drop();
    }
  },
});

Deno.test({
  name:
    "held (fixed: classifier_words.ts): FOREIGN KEY … ON DELETE CASCADE, GRANT DELETE and a rule or trigger ON|AFTER DELETE are read as a DELETE without WHERE — a readWrite token's call waits for the user's approval (\"changes every row\") although Safe Mode is silent",
  ...needs("postgres"),
  async fn() {
    // What I did: Safe Mode "silent", a readWrite token sends
    //   create table c (a int references p(id) on delete cascade)
    //   create table c2 (a int references p(id) on update cascade)
    //   grant delete on p to attack57_fk_*_r
    //   create rule r as on delete to p do also nothing
    // What should happen: each runs at once (the parser reads a CreateStmt,
    // a GrantStmt, a RuleStmt, none changing every row).
    // What happened: the lexical classifier (lib/db/sql/classifier.ts
    // scan(): DELETE|UPDATE after ON or GRANT counted as a statement
    // without WHERE) sets `dangerous`, consentReasons() asks "the statement
    // changes every row (no WHERE)", and the call waits for an approval no
    // one gives (here 1 s: user_cancelled; by default 120 s).
    const queries = [
      "create table c (a int references p(id) on delete cascade)",
      "create table c2 (a int references p(id) on update cascade)",
      "grant delete on p to public",
    ];
    const lexical = queries.filter((query) => {
      const verdict = classify(query, "postgres");
      return verdict.ok && verdict.dangerous;
    });
    // Since stop 59 a rule asks as code that runs later (standing_code.ts),
    // never as a DELETE without WHERE.
    const rule = classify(
      "create rule r as on delete to p do also nothing",
      "postgres",
    );
    assertEquals(
      rule.ok && rule.danger,
      "it installs a rule, which rewrites later statements on its table",
    );
    const db = await own("fk", { approvalTimeoutSeconds: 1 });
    await db.admin.unsafe("create table p (id int primary key)");
    try {
      const failed = await notAnswered(db.write, queries);
      assertEquals({ lexical, failed }, { lexical: [], failed: [] });
    } finally {
      await db.drop();
    }
  },
});

Deno.test({
  name:
    "held (fixed: pg_statement_kinds.ts): CREATE TEXT SEARCH DICTIONARY (an object of the database's own, like the TEXT SEARCH CONFIGURATION that passes) is refused as the server administrator's",
  ...needs("postgres"),
  async fn() {
    // What I did: a readWrite token sends
    //   create text search dictionary d1 (template = simple)
    //   create text search configuration c1 (copy = simple)
    // What should happen: both run (a dictionary of a built-in template is
    // an object of the database's own schema; a template or parser, which
    // name C functions, is the administrator's).
    // What happened: the configuration `OK []`; the dictionary "CREATE TEXT
    // SEARCH DICTIONARY acts outside the connection's own database"
    // (DefineStmt OBJECT_TSDICTIONARY is not in DATABASE_OBJECTS).
    const db = await own("ts");
    try {
      const failed = await notAnswered(db.write, [
        "create text search configuration c1 (copy = simple)",
        "create text search dictionary d1 (template = simple)",
      ]);
      assertEquals(failed, []);
    } finally {
      await db.drop();
    }
  },
});

Deno.test({
  name:
    "held: a demanding user's DDL and DML of every common shape passes the allowlist with a readWrite token (partitions, generated and identity columns, ALTER TABLE variants, CREATE INDEX CONCURRENTLY, views, materialized views, comments, column and sequence grants, types, domains, schemas, EXPLAIN ANALYZE of a write, CALL, MERGE, WITH … INSERT … RETURNING, VACUUM, ANALYZE, CLUSTER, REINDEX, LOCK, statistics, policies, aggregates, collations)",
  ...needs("postgres"),
  async fn() {
    // What I did: each statement below as its own call of a readWrite
    // token, in order. What happened: each answers OK (DROP and TRUNCATE
    // are destructive: the user's, by design; plpgsql, CREATE EXTENSION, DO
    // and COPY are refused by design and left out).
    // Since stop 62, what changes code or values already installed asks
    // (docs/security.md "Every row, by effect"): CREATE OR REPLACE VIEW,
    // ALTER TYPE ... RENAME VALUE, ALTER FUNCTION ... RENAME. Approvals
    // are cut at 1 s so those answer at once; the rest still run.
    const db = await own("ddl", { approvalTimeoutSeconds: 1 });
    await db.admin.unsafe(
      "create table t (id int primary key, x text); insert into t values (1, 'é'), (2, '日本'); create sequence sq",
    );
    try {
      const failed = await notAnswered(db.write, [
        "create table p (id int, d date) partition by range (d)",
        "create table p_2024 partition of p for values from ('2024-01-01') to ('2025-01-01')",
        "alter table p detach partition p_2024",
        "alter table p attach partition p_2024 for values from ('2024-01-01') to ('2025-01-01')",
        "create table g (a int, b int generated always as (a * 2) stored, id int generated always as identity)",
        "alter table g alter column a set not null, add column c text default 'x', alter column b set statistics 100",
        "alter table g add constraint g_a_check check (a > 0) not valid",
        "alter table g validate constraint g_a_check",
        "alter table g rename column c to c2",
        "alter table g rename to g2",
        "create index concurrently gi on g2 (a)",
        "create unique index if not exists gi2 on g2 (a) include (id) where a > 0",
        "alter index gi rename to gi3",
        "create view v as select id, x from t",
        "alter view v rename to v2",
        "create materialized view mv as select * from t",
        "refresh materialized view mv",
        "comment on column t.x is 'the x'",
        `grant select (x), update (x) on t to ${db.role}`,
        `grant usage, select on sequence sq to ${db.role}`,
        `grant select on all tables in schema public to ${db.role}`,
        `grant select on t to ${db.role} with grant option`,
        "create type mood as enum ('a', 'b')",
        "alter type mood add value 'c'",
        "create type comp as (a int, b text)",
        "alter type comp add attribute c int",
        "create type rng as range (subtype = int4)",
        "create domain posint as int check (value > 0)",
        "alter domain posint add constraint big check (value < 1000000)",
        "create schema if not exists s1",
        "alter schema s1 rename to s2",
        "alter table g2 set schema s2",
        "explain insert into t values (5, 'x')",
        "explain (analyze, buffers) update t set x = x where id = 1",
        "create procedure pr() language sql as $$ insert into t values (8, 'p') $$",
        "call pr()",
        "with i as (insert into t values (9, 'w') returning id) select * from i",
        "merge into t using (select 10 as id) s on t.id = s.id when not matched then insert values (s.id, 'm')",
        "create function f(a int) returns int language sql immutable return a + 1",
        "vacuum (analyze) t",
        "analyze t",
        "alter table t cluster on t_pkey",
        "cluster t",
        "reindex table t",
        "lock table t in share mode",
        "create statistics st on id, x from t",
        "alter table t enable row level security",
        "create policy pol on t using (true)",
        "alter sequence sq restart with 100",
        "alter table t replica identity full",
        "create aggregate ag (int) (sfunc = int4pl, stype = int)",
        "create collation c1 (provider = icu, locale = 'und')",
        "create temp table tt (a int)",
        "create unlogged table ul (a int)",
        "alter table ul set logged",
        "alter table t set (fillfactor = 90)",
        "set local statement_timeout = '5s'",
      ]);
      assertEquals(failed, []);
      const asked = [
        "create or replace view v2 as select id, x from t",
        "alter type mood rename value 'c' to 'd'",
        "alter function f(int) rename to f1",
      ];
      for (const query of asked) {
        const got = await db.write(query);
        assert(got.startsWith("ERR user_cancelled"), `${query} -> ${got}`);
      }
    } finally {
      await db.drop();
    }
  },
});

Deno.test({
  name:
    "held: a readOnly token sends no LOCK, NOTIFY, LISTEN, SET, COMMIT, ROLLBACK, SET TRANSACTION READ WRITE, DECLARE … WITH HOLD, FETCH, PREPARE TRANSACTION or ANALYZE; a readWrite token's GRANT … ALL … IN SCHEMA pg_catalog|information_schema is refused",
  ...needs("postgres"),
  async fn() {
    // What I did: each below as its own call; the admin LISTENs on
    // attack57ch meanwhile. What happened: each readOnly call is refused
    // ("a statement that writes needs the scope tools:write"); no
    // notification arrives; the GRANTs are denied as reach.
    const db = await own("ro");
    await db.admin.unsafe("create table t (x text)");
    const heard: string[] = [];
    const listening = await db.admin.listen(
      "attack57ch",
      (payload) => heard.push(payload),
    );
    try {
      const passed = await notDenied(db.read, [
        "lock table t in access share mode",
        "notify attack57ch, 'from reader'",
        "listen attack57ch",
        `set role ${db.role}`,
        "set client_encoding = 'LATIN1'",
        "commit",
        "rollback",
        "commit and chain",
        "set transaction read write",
        "set session characteristics as transaction read write",
        "declare c cursor with hold for select * from t",
        "fetch all from c",
        "prepare transaction 'attack57'",
        "analyze t",
      ]);
      const granted = await notDenied(db.write, [
        `grant execute on all functions in schema pg_catalog to ${db.role}`,
        `grant select on all tables in schema pg_catalog to ${db.role}`,
        `grant select on all tables in schema information_schema to ${db.role}`,
      ]);
      await new Promise((resolve) => setTimeout(resolve, 200));
      assertEquals({ passed, granted, heard }, {
        passed: [],
        granted: [],
        heard: [],
      });
    } finally {
      await listening.unlisten();
      await db.drop();
    }
  },
});

Deno.test({
  name:
    "held: SET ROLE, SET SESSION AUTHORIZATION, SET client_encoding, SET standard_conforming_strings and a WITH HOLD cursor sent by a readWrite token do not outlive its call: the next calls run as the login, read UTF-8 and standard strings, and find no cursor",
  ...needs("postgres"),
  async fn() {
    // What I did: a readWrite token sends each SET (and the cursor) as its
    // own call, then readOnly and readWrite calls read current_user,
    // session_user, the multibyte row and FETCH the cursor. With one
    // session in the pool (max 1 is the pool's own; several calls in turn)
    // the next call meets the same session.
    // What happened: DISCARD ALL after every write resets each; the cursor
    // is gone ("cursor "c" does not exist").
    const db = await own("set");
    await db.admin.unsafe(
      "create table t (id int, x text); insert into t values (1, 'é😀日本')",
    );
    try {
      // Since stop 56 the four settings are refused (pg_settings.ts); were
      // one let through, the calls after must still not see it.
      const refused = [
        `set role ${db.role}`,
        `set session authorization ${db.role}`,
        "set client_encoding = 'LATIN1'",
        "set standard_conforming_strings = off",
      ];
      const denied = [];
      for (const query of refused) {
        const got = await db.write(query);
        if (!got.startsWith("ERR denied")) denied.push(`${query} -> ${got}`);
      }
      assertEquals(denied, [], "a setting was not refused");
      const sets = await notAnswered(db.write, [
        "declare c cursor with hold for select * from t",
      ]);
      const after = {
        user: await db.read("select current_user, session_user"),
        userW: await db.write("select current_user, session_user"),
        text: await db.read("select x from t"),
        textW: await db.write("select x from t"),
        strings: await db.read("show standard_conforming_strings"),
        cursor: (await db.write("fetch all from c")).includes(
          'cursor "c" does not exist',
        ),
      };
      assertEquals({ sets, ...after }, {
        sets: [],
        user: 'OK [["postgres","postgres"]]',
        userW: 'OK [["postgres","postgres"]]',
        text: 'OK [["é😀日本"]]',
        textW: 'OK [["é😀日本"]]',
        strings: 'OK [["on"]]',
        cursor: true,
      });
    } finally {
      await db.drop();
    }
  },
});

/** Row `i` of the big table: 2-, 3- and 4-byte characters, ~7i KB. */
function bigValue(i: number): string {
  return `é日😀${i}a`.repeat(i * 300);
}

/** The rows of `select id, v from big order by id`. */
const BIG_ROWS = Array.from({ length: 40 }, (_, k) => [k + 1, bigValue(k + 1)]);

/** A call's rows, or its error's text. */
// deno-lint-ignore no-explicit-any
function rowsOf(got: { json: any }): unknown {
  const result = got.json.result;
  if (result === undefined || result.isError === true) {
    return `ERR ${result?.content?.[0]?.text ?? JSON.stringify(got.json.error)}`
      .slice(0, 300);
  }
  return result.structuredContent.rows;
}

Deno.test({
  name:
    "held: eight concurrent reads of 40 rows of up to 300 KB of 2-, 3- and 4-byte characters (rows split across the socket's 64 KiB reads), beside writes returning the same values and catalog reads, each answer exactly the table's values; an error mid-result and a session ended mid-read leave the next answers exact",
  ...needs("postgres"),
  async fn() {
    // What I did: rows i = 1..40 of `repeat('é日😀' || i || 'a', i * 300)`
    // (3 MB a read); eight readOnly reads at once, three rounds, with
    // readWrite `insert … returning` of a row's value and readOnly catalog
    // reads interleaved; then `case when id = 35 then (1 / (id - 35))::text
    // else v end` (division by zero after 34 rows, ~2 MB, were sent); then
    // a read streaming the rows before a 60-million-row count, its backend ended
    // (pg_terminate_backend of dbport's own session in this database) once
    // it ran; every answer compared with the values computed here.
    // What happened: every answer equal; the error and the ended session
    // answer as errors, never as rows; the next reads equal.
    const db = await own("wire");
    await db.admin.unsafe(
      "create table big (id int primary key, v text); create table w (id int, v text)",
    );
    await db.admin.unsafe(
      "insert into big select i, repeat('é日😀' || i::text || 'a', i * 300) from generate_series(1, 40) i",
    );
    const readAll = "select id, v from big order by id";
    try {
      const wrong: string[] = [];
      for (let round = 0; round < 3; round++) {
        const reads = Array.from(
          { length: 8 },
          () => db.call(db.reader, readAll).then(rowsOf),
        );
        const k = 30 + round * 3;
        const writes = [
          db.call(
            db.writer,
            `insert into w select id, v from big where id = ${k} returning v`,
          ).then(rowsOf),
          db.call(
            db.reader,
            "select relname from pg_class where relname in ('big', 'w') order by 1",
          ).then(rowsOf),
        ];
        const got = await Promise.all([...reads, ...writes]);
        got.slice(0, 8).forEach((rows, n) => {
          if (JSON.stringify(rows) !== JSON.stringify(BIG_ROWS)) {
            wrong.push(
              `round ${round} read ${n}: ${String(rows).slice(0, 200)}`,
            );
          }
        });
        if (JSON.stringify(got[8]) !== JSON.stringify([[bigValue(k)]])) {
          wrong.push(`round ${round} write: ${String(got[8]).slice(0, 200)}`);
        }
        if (JSON.stringify(got[9]) !== JSON.stringify([["big"], ["w"]])) {
          wrong.push(`round ${round} catalog: ${JSON.stringify(got[9])}`);
        }
      }
      const midError = rowsOf(
        await db.call(
          db.reader,
          "select id, case when id = 35 then (1 / (id - 35))::text else v end from big order by id",
        ),
      );
      const afterError = rowsOf(await db.call(db.reader, readAll));
      const ending = db.call(
        db.reader,
        "select id, v from big union all select -1, (select count(*)::text from generate_series(1, 60000000))",
      ).then(rowsOf);
      let ended = false;
      for (let i = 0; i < 60 && !ended; i++) {
        await new Promise((resolve) => setTimeout(resolve, 100));
        const [row] = await db.root.unsafe(
          `select pg_terminate_backend(pid) as done from pg_stat_activity
           where datname = $1 and state = 'active' and query like '%generate_series(1, 60000000)%'
             and query not like '%pg_stat_activity%'`,
          [db.name],
        );
        ended = row?.done === true;
      }

      const whenEnded = await ending;
      const afterEnd = await Promise.all(
        Array.from(
          { length: 3 },
          () => db.call(db.reader, readAll).then(rowsOf),
        ),
      );
      assertEquals({
        wrong,
        midError: String(midError).includes("division by zero"),
        afterError: JSON.stringify(afterError) === JSON.stringify(BIG_ROWS),
        ended,
        whenEnded: String(whenEnded).startsWith("ERR"),
        afterEnd: afterEnd.map((rows) =>
          JSON.stringify(rows) === JSON.stringify(BIG_ROWS)
        ),
      }, {
        wrong: [],
        midError: true,
        afterError: true,
        ended: true,
        whenEnded: true,
        afterEnd: [true, true, true],
      });
    } finally {
      await db.drop();
    }
  },
});

/** A tools/call of execute_query as raw HTTP: its bytes against its length. */
async function rawCall(
  url: string,
  headers: Record<string, string>,
  body: JsonObject,
) {
  const response = await fetch(url, {
    method: "POST",
    headers,
    body: JSON.stringify(body),
  });
  const bytes = new Uint8Array(await response.arrayBuffer());
  const length = response.headers.get("content-length");
  const text = new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  return { length: length === null ? null : Number(length), bytes, text };
}

Deno.test({
  name:
    "held: answers around 16,384 characters (ASCII, 2-byte, 4-byte and U+FFFD from a lone surrogate in the query) say their exact byte length and decode as UTF-8 to the values sent, to modern and legacy sessions",
  ...needs("postgres"),
  async fn() {
    // What I did: `select repeat(c, n)` for c in a, é, 😀 and n stepping
    // through the lengths that put the answer's text either side of 16,384
    // characters (ENCODE_ONCE_CHARS); a query of 4,000 lone surrogates
    // (U+D800: the server gets U+FFFD; under 4,096 characters, so no parse
    // worker and its idle timer); the same through a legacy
    // (2025-11-25) session. Content-Length against the bytes read, the
    // bytes decoded strictly, the value against the expected.
    // What happened: every length equals the bytes; every value equals.
    const db = await own("ans");
    try {
      const bad: string[] = [];
      const check = async (
        headers: Record<string, string>,
        query: string,
        expected: string | null,
        label: string,
      ) => {
        const params = {
          name: "execute_query",
          arguments: { connection_id: db.saved.id, query },
        };
        const body: JsonObject = "mcp-session-id" in headers
          ? {
            jsonrpc: "2.0",
            id: crypto.randomUUID(),
            method: "tools/call",
            params,
          }
          : modernRequest("tools/call", params, crypto.randomUUID());
        const base = "mcp-session-id" in headers ? {} : modernHeaders(body);
        const got = await rawCall(db.server.url, {
          ...base,
          authorization: `Bearer ${db.reader}`,
          ...headers,
        }, body);
        const json = got.text.startsWith("{")
          ? JSON.parse(got.text)
          : JSON.parse(
            got.text.split("\n").find((line) => line.startsWith("data: "))!
              .slice(6),
          );
        const value = json.result?.structuredContent?.rows?.[0]?.[0];
        if (got.length !== null && got.length !== got.bytes.length) {
          bad.push(`${label}: length ${got.length}, bytes ${got.bytes.length}`);
        }
        if (expected !== null && value !== expected) {
          bad.push(
            `${label}: value ${String(value).slice(0, 40)}… ${
              got.text.slice(0, 300)
            }`,
          );
        }
        return got.text.length;
      };
      const sizes = new Set<string>();
      for (const c of ["a", "é", "😀"]) {
        const unit = c.length;
        // The value is in the answer twice (content text, structuredContent).
        for (let n = 7_750; n <= 8_150; n += 7) {
          const chars = Math.round(n / unit);
          const length = await check(
            {},
            `select repeat('${c}', ${chars})`,
            c.repeat(chars),
            `${c} x ${chars}`,
          );
          sizes.add(length > 16_384 ? "over" : "under");
        }
      }
      await check(
        {},
        `select '${"\ud800".repeat(4000)}' as s`,
        // The answer is an error quoting the text (the finding above);
        // its length and its bytes are what is checked here.
        null,
        "lone surrogates",
      );
      const session = await initializeSession(db.server.url, "2025-11-25", {
        authorization: `Bearer ${db.reader}`,
      });
      const legacy = {
        "content-type": "application/json",
        "accept": "application/json, text/event-stream",
        "mcp-protocol-version": "2025-11-25",
        "mcp-session-id": session,
      };
      for (const chars of [8_000, 8_190, 8_200, 20_000]) {
        await check(
          legacy,
          `select repeat('é', ${chars})`,
          "é".repeat(chars),
          `legacy é x ${chars}`,
        );
      }
      await fetch(db.server.url, {
        method: "DELETE",
        headers: { ...legacy, authorization: `Bearer ${db.reader}` },
      }).then((response) => response.body?.cancel());
      assertEquals({ bad, sizes: [...sizes].sort() }, {
        bad: [],
        sizes: ["over", "under"],
      });
    } finally {
      await db.drop();
    }
  },
});
