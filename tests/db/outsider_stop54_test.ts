/**
 * An outsider's attacks (stop 54) on the last stop's changes: the
 * CREATE FUNCTION allowlist and the "reach" rule (pg_parse.ts
 * `opaqueFunction`, pg_vet.ts `Findings.reach`, vet_sql.ts), PostgreSQL URLs
 * of several hosts (pg_hosts.ts `HostPicker`), and the client-certificate
 * and CA files' reads (pg_tls_files.ts `readTextWithin`). Through the MCP
 * endpoint (execute_query with readWrite and readOnly tokens, a host dialog
 * that denies) and the driver API, against the real PostgreSQL.
 *
 * Every finding below is fixed and its test is "held: …" now: the
 * aggregate, CALL, CALL dry run, SECURITY DEFINER body, unreadable body and
 * SQL/JSON-name findings (pg_parse.ts, pg_vet.ts, vet_sql.ts), the
 * several-host findings and the saved URL with a port per host (pg_hosts.ts
 * `HostPicker#bound`, target.ts `hostList`, connections.ts `keepUnusable`),
 * the certificate files (pg_tls_files.ts `readTextWithin`).
 *
 * Findings:
 * - A readWrite token reads a server file by naming `pg_read_file` as a
 *   user aggregate's `sfunc`, `finalfunc` or `mfinalfunc` (CREATE
 *   AGGREGATE reads the names as types, and the vetting never follows
 *   pg_aggregate: the aggregate is "written in internal", a write).
 * - A readWrite token runs a program (`COPY … FROM PROGRAM`) and reads a
 *   file through `CALL` of a `LANGUAGE sql` procedure it created: CALL's
 *   `funccall` is not a `FuncCall` node in libpg_query's JSON, so pg_parse.ts
 *   `collectCalls` never sees the procedure, whose body is never read.
 * - The same CALL's dry run (the default write preview) runs the program
 *   before the user answers; the user denies, the program has run. An
 *   owner's existing PL/pgSQL procedure too.
 * - Several hosts: a first host that takes the TCP connection and never
 *   answers fails every call at the 10 s connect timeout; the second host,
 *   answering, is not tried in that call (libpq moves on to it).
 * - With two silent hosts before the answering one, no call ever answers
 *   and calls run past their timeout (20 s for 12 s).
 * - A huge `sslrootcert` (a 300 MB file) is read whole, per session: the
 *   event loop stalls for seconds (2.3 s measured for one 400 MB read,
 *   8.8 s and 1.8 GB RSS for four at once), every other client with it.
 *   (Held since: refused by its size, 4 MiB at most, before and while read.)
 * - A readWrite token reads pg_authid and a server file through a
 *   `LANGUAGE sql` function it makes SECURITY DEFINER (the body of a
 *   definer function is never read: pg_vet.ts `judgeFunction` returns at
 *   `functionRefusal`), or whose body dbport's parser cannot read
 *   (`… as system_user(x)`, valid on PostgreSQL 15): "could not be read" is
 *   a write, not a refusal.
 * - A readOnly token runs user functions named `json_array`, `json`,
 *   `json_scalar`, `json_object`, `json_serialize`, `json_value`,
 *   `json_query`, `json_exists`, `merge_action` unvetted: libpg_query's
 *   newer grammar reads them as SQL/JSON or MERGE syntax, PostgreSQL 15 calls
 *   the user's function (here: `pg_read_file`).
 * - A CA file whose reads hang past the stat leaves each timed-out read's
 *   thread blocked after close; ~32 and every file read and host-name
 *   lookup of the server stalls. (Held since: a FIFO swapped in is refused
 *   at its non-blocking open; reads that hang are one per file, at most
 *   FILE_READS_AT_ONCE in all, and refuse the file at once while they hang.)
 * - A saved URL of several hosts with a port each stops the server's start
 *   with the password in the error.
 *
 * Held: readOnly refused aggregates, CALL, SECURITY DEFINER, PL/pgSQL and
 * LANGUAGE internal functions of the owner; a write token's reaching SQL
 * function behind a cast, domain check, default, generated column, an
 * operator (`OPERATOR(s.###)` of pg_read_file) or EXPLAIN ANALYZE denied;
 * hosts answering garbage or closing mid-startup passed over in the call;
 * empty host entries, IPv6 literals, port 0, 500 refused hosts (0.5 s, no
 * password); /dev/zero behind a symlink, /proc and /etc/passwd contents
 * never in messages; TLS sockets on several hosts ended at close.
 * Not attacked: slow DNS (no resolver to slow here; the hung-read finding
 * shows the same pool), a host flapping primary/standby, cancel routing.
 *
 * @module
 */

import { assert, assertEquals } from "@std/assert";
import postgres from "postgres";
import {
  FILE_READS_AT_ONCE,
  readTextWithin,
} from "../../lib/db/postgres/pg_tls_files.ts";
import { openPostgres } from "../../lib/db/postgres/postgres.ts";
import { savedConnection, serverWith } from "../_connections.ts";
import { needs, POSTGRES_URL } from "../_db.ts";
import { recordingDialog } from "../_dialog.ts";
import { TEST_CLIENT } from "../_tls_pg_proxy.ts";
import { callTool } from "../_tool_call.ts";
import { answer, ownSchema, said, servers } from "../_outsider.ts";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

Deno.test({
  name:
    "held: a user aggregate's support functions are calls to vet — CREATE AGGREGATE naming pg_read_file as sfunc/finalfunc/mfinalfunc is refused, and calling such an aggregate (a select, a view, a SQL function, a rule, a window, a CTE) is refused as reaching files",
  ...needs("postgres"),
  async fn() {
    // What it does (one call each, readWrite token, superuser login):
    //   create aggregate s.rf(bigint, bigint) (sfunc = pg_read_file,
    //     stype = text, initcond = 'PG_VERSION');   select s.rf(0, 20)
    //   create aggregate s.fa(text) (sfunc = textcat, stype = text,
    //     finalfunc = pg_read_file);                select s.fa('PG_VERSION')
    // What happened (before branch vetfix): each CREATE answers (pg_parse.ts reads `sfunc =
    // pg_read_file` as a TypeName: a cast type, never a function), and each
    // select answers the server file's text, "15\n": pg_vet.ts judges the
    // aggregate's own pg_proc row ("written in internal": a write, allowed to
    // the token) and vet_sql.ts never follows pg_aggregate's aggtransfn,
    // aggfinalfn, aggmtransfn, aggmfinalfn, aggcombinefn, aggserialfn,
    // aggdeserialfn. The same through a view, a SQL function, a rule
    // (`do also select s.fa(…)` on INSERT) and `over (…)` (mfinalfunc).
    // `select pg_read_file('PG_VERSION')` itself is denied.
    const own = ownSchema("a54", "agg");
    const { server, write } = await servers("Aggregates");
    const s = own.schema;
    try {
      assert(
        (await write(`select pg_read_file('PG_VERSION')`)).startsWith(
          "ERR denied",
        ),
      );
      for (
        const ddl of [
          `create schema ${s}`,
          `create aggregate ${s}.rf(bigint, bigint) (sfunc = pg_read_file, stype = text, initcond = 'PG_VERSION')`,
          `create aggregate ${s}.fa(text) (sfunc = textcat, stype = text, finalfunc = pg_read_file)`,
          `create aggregate ${s}.ma(text) (sfunc = textcat, stype = text, msfunc = textcat, minvfunc = textcat, mstype = text, mfinalfunc = pg_read_file)`,
          `create view ${s}.v as select ${s}.fa('PG_VERSION') as x`,
          `create function ${s}.w() returns text language sql as $b$ select ${s}.fa('PG_VERSION') $b$`,
          `create table ${s}.r (a text)`,
          `create rule rr as on insert to ${s}.r do also select ${s}.fa('PG_VERSION')`,
        ]
      ) {
        // Made as the admin when the token's CREATE is refused: the calls
        // below must be refused either way.
        const made = await write(ddl);
        if (!made.startsWith("OK")) await own.admin.unsafe(ddl);
      }
      const leaks: string[] = [];
      for (
        const call of [
          `select ${s}.rf(0, 20)`,
          `select ${s}.fa('PG_VERSION')`,
          `select * from ${s}.v`,
          `select ${s}.w()`,
          `insert into ${s}.r values ('x')`,
          `select ${s}.ma(x) over (rows between current row and current row) from (values ('PG_VERSION')) v(x)`,
          `with x as (select ${s}.fa('PG_VERSION') v) select v from x`,
        ]
      ) {
        const got = await write(call);
        if (!got.startsWith("ERR denied")) leaks.push(`${call} -> ${got}`);
      }
      assertEquals(leaks, [], "the file reached the client, or no refusal");
    } finally {
      await server[Symbol.asyncDispose]();
      await own.drop();
    }
  },
});

Deno.test({
  name:
    "held: CALL's procedure is looked up and vetted like a called function — a LANGUAGE sql procedure running COPY … FROM PROGRAM or pg_read_file is refused as reach, nothing runs",
  ...needs("postgres"),
  async fn() {
    // What it does: `create procedure s.pp() language sql as $b$ copy s.out
    // from program 'echo a54-ran' $b$`, `call s.pp()`, `select * from
    // s.out`; the same with `insert into s.out select
    // pg_read_file('PG_VERSION')`.
    // What happened (before branch vetfix): both CALLs answer OK; s.out then holds "a54-ran" and
    // "15\n". libpg_query's JSON gives CallStmt's call as
    // `{"funccall": {"funcname": …}}`, not wrapped in a `FuncCall` key, so
    // pg_parse.ts `collectCalls` (which acts on the key "FuncCall") records
    // no function: the statement "names nothing", is a write, and the
    // procedure's body is never read (a `select s.pp_as_function()` with the
    // same body is denied).
    const own = ownSchema("a54", "call");
    const { server, write } = await servers("Call");
    const s = own.schema;
    try {
      for (
        const ddl of [
          `create schema ${s}`,
          `create table ${s}.out (x text)`,
          `create procedure ${s}.pp() language sql as $b$ copy ${s}.out from program 'echo a54-ran' $b$`,
          `create procedure ${s}.pr() language sql as $b$ insert into ${s}.out select pg_read_file('PG_VERSION') $b$`,
        ]
      ) {
        const made = await write(ddl);
        if (!made.startsWith("OK")) await own.admin.unsafe(ddl);
      }
      const calls = [
        `${await write(`call ${s}.pp()`)}`,
        `${await write(`call ${s}.pr()`)}`,
      ];
      const rows = await own.admin.unsafe(`select x from ${s}.out`);
      const out = rows.map((row) => String(row.x));
      assertEquals(
        out,
        [],
        `the calls answered ${JSON.stringify(calls)}; ${s}.out holds ${
          JSON.stringify(out)
        } (a program ran; a server file was read)`,
      );
      for (const got of calls) assert(got.startsWith("ERR denied"), got);
    } finally {
      await server[Symbol.asyncDispose]();
      await own.drop();
    }
  },
});

Deno.test({
  name:
    "held: a CALL of a procedure dbport cannot prove harmless (SQL reaching a program, PL/pgSQL) gets no dry run — the user denies, no program has run",
  ...needs("postgres"),
  async fn() {
    // What it does: the owner's database holds procedures (made by the
    // admin: the realistic case) — one LANGUAGE sql, one plpgsql — that run
    // `copy … from program 'echo ran >> /tmp/<mark>'`. A readWrite token
    // calls each on a connection with Safe Mode "alert" (writePreview
    // unset: dryRun), the host dialog denies.
    // What happened (before branch vetfix): the answer is "denied: the user did not approve", the
    // dialog was shown a preview ("Changes 1 row of s.out") — and the mark
    // file holds "ran": the dry run ran the program before anyone answered.
    // The rollback undid the row, not the program.
    const own = ownSchema("a54", "dry");
    const s = own.schema;
    const marks = [`/tmp/${s}_sql`, `/tmp/${s}_plpgsql`];
    await own.admin.unsafe(
      `create schema ${s}; create table ${s}.out (x text);
       create procedure ${s}.ps() language sql as $b$ copy ${s}.out from program 'echo ran >> ${
        marks[0]
      }; echo a54' $b$;
       create procedure ${s}.pl() language plpgsql as $b$ begin execute 'copy ${s}.out from program ''echo ran >> ${
        marks[1]
      }; echo a54'''; end $b$`,
    );
    const saved = savedConnection(
      { engine: "postgres", url: POSTGRES_URL },
      "DryCall",
      { externalAccess: "readWrite", safeMode: "alert" },
    );
    const dialog = await recordingDialog(1);
    const server = await serverWith([saved], { hostDialog: dialog.setting });
    const writer = (await server.mint("readWrite")).plaintext;
    try {
      const answers: string[] = [];
      for (const procedure of ["ps", "pl"]) {
        answers.push(said(
          await callTool(server, "execute_query", {
            connection_id: saved.id,
            query: `call ${s}.${procedure}()`,
          }, { authorization: `Bearer ${writer}` }),
        ));
      }
      for (const got of answers) assert(got.startsWith("ERR "), got);
      const ran: string[] = [];
      for (const mark of marks) {
        const [row] = await own.admin.unsafe(
          `select pg_read_file('${mark}', 0, 100, true) as text`,
        );
        if (row?.text) ran.push(mark);
      }
      assertEquals(
        ran,
        [],
        `programs ran though the user denied (answers: ${
          JSON.stringify(answers)
        }; asked: ${JSON.stringify(await dialog.asked()).slice(0, 300)})`,
      );
    } finally {
      await server[Symbol.asyncDispose]();
      await dialog[Symbol.asyncDispose]();
      for (const mark of marks) {
        await own.admin.unsafe(
          `copy (select 1) to program 'rm -f ${mark}'`,
        ).catch(() => {});
      }
      await own.drop();
    }
  },
});

Deno.test({
  name:
    "held: a SECURITY DEFINER function's LANGUAGE sql body is read — pg_authid and pg_read_file behind it are refused as for the same function without SECURITY DEFINER (and a token's CREATE … SECURITY DEFINER is refused)",
  ...needs("postgres"),
  async fn() {
    // What it does: `create function s.d() returns text language sql
    // security definer as $b$ select string_agg(rolname || ':' ||
    // coalesce(rolpassword, '(null)'), ',') from pg_authid $b$`, and s.df()
    // whose body is `select pg_read_file('PG_VERSION')`; `select s.d()`,
    // `select s.df()`. (Or an owner's existing SECURITY DEFINER function:
    // the same calls.)
    // What happened (before branch vetfix): both answer — every role with its rolpassword column,
    // and "15\n". pg_vet.ts `judgeFunction` returns at `functionRefusal`
    // ("is SECURITY DEFINER: it runs as its owner": a write, allowed to the
    // token) before `parseBody`, so neither `reach` nor the credential
    // catalog is looked for in the body. Without SECURITY DEFINER both are
    // denied.
    const own = ownSchema("a54", "definer");
    const { server, write } = await servers("Definer");
    const s = own.schema;
    try {
      for (
        const ddl of [
          `create schema ${s}`,
          `create function ${s}.d() returns text language sql security definer as $b$ select string_agg(rolname || ':' || coalesce(rolpassword, '(null)'), ',') from pg_authid $b$`,
          `create function ${s}.df() returns text language sql security definer as $b$ select pg_read_file('PG_VERSION') $b$`,
          `create function ${s}.i() returns text language sql as $b$ select pg_read_file('PG_VERSION') $b$`,
        ]
      ) {
        const made = await write(ddl);
        if (!made.startsWith("OK")) await own.admin.unsafe(ddl);
      }
      assert((await write(`select ${s}.i()`)).startsWith("ERR denied"));
      const leaks: string[] = [];
      for (const call of [`select ${s}.d()`, `select ${s}.df()`]) {
        const got = await write(call);
        if (!got.startsWith("ERR denied")) {
          leaks.push(`${call} -> ${got.slice(0, 120)}`);
        }
      }
      assertEquals(leaks, [], "pg_authid or a server file reached the client");
    } finally {
      await server[Symbol.asyncDispose]();
      await own.drop();
    }
  },
});

Deno.test({
  name:
    "held: a LANGUAGE sql function whose body dbport's parser cannot read (`… as system_user(x)`, valid on PostgreSQL 15) is refused, not run as 'a write' — a body that cannot be read may reach anything",
  ...needs("postgres"),
  async fn() {
    // What it does: `create function s.k() returns text language sql as
    // $b$ select x from (select pg_read_file('PG_VERSION')) as
    // system_user(x) $b$` — valid on PostgreSQL 15, where `system_user` is
    // an ordinary name; libpg_query (a newer grammar, where SYSTEM_USER is
    // a reserved keyword) rejects it. Then `select s.k()`; the same with
    // `from pg_authid as system_user`.
    // What happened (before branch vetfix): both answer — "15\n" and every role with its
    // rolpassword column. pg_vet.ts `judgeFunction`: `parseBody` answers
    // null, "the body of s.k() could not be read" is recorded as a write
    // (`found.fail`), never as reach: the write token runs it. (A readOnly
    // token is refused: a write.)
    const own = ownSchema("a54", "unread");
    const { server, write } = await servers("UnreadBody");
    const s = own.schema;
    try {
      for (
        const ddl of [
          `create schema ${s}`,
          `create function ${s}.k() returns text language sql as $b$ select x from (select pg_read_file('PG_VERSION')) as system_user(x) $b$`,
          `create function ${s}.k2() returns text language sql as $b$ select string_agg(rolname || ':' || coalesce(rolpassword, '(null)'), ',') from pg_authid as system_user $b$`,
        ]
      ) {
        const made = await write(ddl);
        if (!made.startsWith("OK")) await own.admin.unsafe(ddl);
      }
      const leaks: string[] = [];
      for (const call of [`select ${s}.k()`, `select ${s}.k2()`]) {
        const got = await write(call);
        if (got.startsWith("OK")) leaks.push(`${call} -> ${got.slice(0, 120)}`);
      }
      assertEquals(leaks, [], "pg_authid or a server file reached the client");
    } finally {
      await server[Symbol.asyncDispose]();
      await own.drop();
    }
  },
});

Deno.test({
  name:
    "held: on PostgreSQL 15, json_array, json_scalar, json, json_object, json_serialize, json_value, json_query, json_exists, merge_action (SQL/JSON or MERGE syntax in dbport's newer grammar) are vetted as calls of user functions of those names — a readOnly token is refused",
  ...needs("postgres"),
  async fn() {
    // What it does: in a database of the test's own, the owner has made
    // `public.json_array(x text) returns text language sql as $b$ select
    // pg_read_file(x) $b$` (and json_scalar, json, json_object,
    // json_serialize alike; a readWrite token may make them too). A
    // readOnly token sends `select json_array('PG_VERSION'::text)`.
    // What happened (before branch vetfix): it answers "15\n" — the server file. libpg_query
    // (PostgreSQL 17/18's grammar) reads `json_array(…)`, `json_scalar(…)`,
    // `json(…)`, `json_serialize(…)`, `json_value/json_query/json_exists(…)`
    // and `merge_action()` as SQL/JSON or MERGE support nodes (no
    // FuncCall: no function to vet) and `json_object(text)` as
    // `pg_catalog.json_object` (allowlisted); PostgreSQL 15 has no such
    // syntax and calls public.json_array(text) on the search path. The
    // same holds for a PL/pgSQL function of those names.
    const database = `a54_json_${crypto.randomUUID().slice(0, 8)}`;
    const admin = postgres(POSTGRES_URL, { max: 1, onnotice: () => {} });
    await admin.unsafe(`create database ${database}`);
    const url = new URL(POSTGRES_URL);
    url.pathname = `/${database}`;
    // [name, its arguments (definition), a call's arguments]
    const names: [string, string, string][] = [
      ["json_array", "x text", "'PG_VERSION'::text"],
      ["json_scalar", "x text", "'PG_VERSION'::text"],
      ["json", "x text", "'PG_VERSION'::text"],
      ["json_object", "x text", "'PG_VERSION'::text"],
      ["json_serialize", "x text", "'PG_VERSION'::text"],
      ["json_value", "x text, p text", "'PG_VERSION'::text, '$'"],
      ["json_query", "x text, p text", "'PG_VERSION'::text, '$'"],
      ["json_exists", "x text, p text", "'PG_VERSION'::text, '$'"],
      ["merge_action", "", ""],
    ];
    const owner = postgres(url.toString(), { max: 1, onnotice: () => {} });
    const saved = savedConnection(
      { engine: "postgres", url: url.toString() },
      "JsonNames",
    );
    try {
      for (const [name, params] of names) {
        await owner.unsafe(
          `create function public.${name}(${params}) returns text language sql as $b$ select pg_read_file('PG_VERSION') $b$`,
        );
      }
      await using server = await serverWith([saved]);
      const leaks: string[] = [];
      for (const [name, , args] of names) {
        const got = said(
          await callTool(server, "execute_query", {
            connection_id: saved.id,
            query: `select ${name}(${args}) as x`,
          }),
        );
        if (got.startsWith("OK")) leaks.push(`${name}(…) -> ${got}`);
      }
      assertEquals(leaks, [], "a readOnly token read a server file");
    } finally {
      await owner.end();
      await admin.unsafe(`drop database if exists ${database} with (force)`);
      await admin.end();
    }
  },
});

Deno.test({
  name:
    "held: a readOnly token is refused user aggregates, CALL, the owner's SECURITY DEFINER, plpgsql and LANGUAGE internal functions; a write token's reaching SQL function behind a cast, a domain check, a default or a generated column is refused as reach",
  ...needs("postgres"),
  async fn() {
    const own = ownSchema("a54", "ro");
    const s = own.schema;
    await own.admin.unsafe(
      `create schema ${s};
       create aggregate ${s}.fa(text) (sfunc = textcat, stype = text, finalfunc = pg_read_file);
       create view ${s}.v as select ${s}.fa('PG_VERSION') as x;
       create function ${s}.def() returns text language sql security definer as $b$ select current_user::text $b$;
       create function ${s}.pl() returns text language plpgsql as $b$ begin return pg_read_file('PG_VERSION'); end $b$;
       create function ${s}.alias(text) returns text language internal strict as 'pg_read_file_all';
       create procedure ${s}.pr() language sql as $b$ select 1 $b$;
       create function ${s}.sf(x text) returns text language sql immutable as $b$ select pg_read_file(x) $b$;
       create type ${s}.ct as (a text);
       create function ${s}.cf(x text) returns ${s}.ct language sql as $b$ select row(pg_read_file(x))::${s}.ct $b$;
       create cast (text as ${s}.ct) with function ${s}.cf(text)`,
    );
    // The owner's objects work as the owner's: a refusal below is dbport's.
    const [row] = await own.admin.unsafe(
      `select ${s}.alias('PG_VERSION') as a, ${s}.pl() as b, ${s}.fa('PG_VERSION') as c`,
    );
    const made = [row?.a, row?.b, row?.c].map((v) => String(v).trim());
    assert(made[0] !== "", JSON.stringify(made));
    assertEquals(made, [made[0], made[0], made[0]]);
    const { server, write, read } = await servers("ReadOnlyHeld");
    try {
      const problems: string[] = [];
      for (
        const call of [
          `select ${s}.fa('PG_VERSION')`,
          `select * from ${s}.v`,
          `select ${s}.def()`,
          `select ${s}.pl()`,
          `select ${s}.alias('PG_VERSION')`,
          `call ${s}.pr()`,
        ]
      ) {
        const got = await read(call);
        if (got.startsWith("OK")) problems.push(`readOnly ${call} -> ${got}`);
      }
      for (
        const call of [
          `select 'PG_VERSION'::text::${s}.ct`,
          `create domain ${s}.d as text check (${s}.sf(value) is not null)`,
          `create table ${s}.t (a text default ${s}.sf('PG_VERSION'))`,
          `create table ${s}.g (b text generated always as (${s}.sf('PG_VERSION')) stored)`,
          `select ${s}.sf('PG_VERSION')`,
          `explain analyze select ${s}.sf('PG_VERSION')`,
        ]
      ) {
        const got = await write(call);
        if (!got.startsWith("ERR denied")) {
          problems.push(`readWrite ${call} -> ${got}`);
        }
      }
      assertEquals(problems, []);
    } finally {
      await server[Symbol.asyncDispose]();
      await own.drop();
    }
  },
});

/**
 * A listener taking TCP connections that never answers them: on
 * 127.0.0.2 at the database's port when it may (a saved URL's hosts share
 * one port), else on a port of its own.
 */
function muteHost(port: number) {
  let listener: Deno.Listener;
  try {
    listener = Deno.listen({ hostname: "127.0.0.2", port });
  } catch {
    listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  }
  const addr = listener.addr as Deno.NetAddr;
  const conns: Deno.Conn[] = [];
  void (async () => {
    for await (const conn of listener) conns.push(conn);
  })().catch(() => {});
  return {
    /** The URL's hosts: the mute host first, then the database. */
    hosts: addr.hostname === "127.0.0.2"
      ? `127.0.0.2,localhost:${port}`
      : `127.0.0.1:${addr.port},localhost:${port}`,
    get accepted() {
      return conns.length;
    },
    close() {
      for (const conn of conns) {
        try {
          conn.close();
        } catch { /* closed */ }
      }
      listener.close();
    },
  };
}

const server = new URL(POSTGRES_URL);
const PG_PORT = Number(server.port || 5432);

Deno.test({
  name:
    "held: several hosts — a first host that takes the connection and never answers is given up after its own deadline (4 s, libpq's per-host connect_timeout) and the second host answers within the same call, the silent host connected once",
  ...needs("postgres"),
  async fn() {
    // What it does: `postgres://postgres@127.0.0.2,localhost:5432/test` (a
    // URL a saved connection may hold) where 127.0.0.2:5432 accepts TCP and never sends a byte (a hung server, a
    // middlebox); a read with a 15 s timeout.
    // What happens: "connect_timeout: the database did not answer within
    // 10 s" at 10.2 s; the picker returned host 1's socket once TCP
    // connected, and its startup is bounded only by postgres.js's connect
    // timeout, which fails the call. The next call answers (host 1 is then
    // "down"): every 5 s (UNFIT_MS) one call pays 10 s again.
    // (A host that answers garbage or closes mid-startup is passed over in
    // the same call: held below.)
    const mute = muteHost(PG_PORT);
    const driver = openPostgres({
      url: `postgres://postgres@${mute.hosts}/test?application_name=a54_mute`,
      secrets: [],
      wiredReads: true,
    });
    let first: { said: string; ms: number };
    try {
      first = await answer(driver, "select 1 as one", 15_000);
    } finally {
      await driver.close();
      mute.close();
    }
    assertEquals(mute.accepted, 1);
    assert(
      first.said === 'answered [["1"]]' || first.said === "answered [[1]]",
      `after ${Math.round(first.ms)} ms: ${first.said}`,
    );
  },
});

Deno.test({
  name:
    "held: several hosts — with two silent hosts before the answering one, the answering third host serves the calls (each silent host given up after 4 s and then tried last for 30 s), each call within its timeout",
  ...needs("postgres"),
  sanitizeOps: false,
  sanitizeResources: false,
  async fn() {
    // What it does: `postgres://postgres@127.0.0.2,127.0.0.3,127.0.0.1:5432
    // /test`, 127.0.0.2:5432 and 127.0.0.3:5432 taking connections and
    // never answering; three reads in a row, 12 s timeout each.
    // What happens (measured with 15 s timeouts): 10.1 s connect_timeout,
    // then 20.1 s and 20.0 s "the statement timeout of 15 s ran out while
    // the query waited for a database session", then 10.0 s again: no call
    // answered in 60 s, the silent hosts took 17 connections. A host is
    // "down" (tried last) for UNFIT_MS = 5 s from its failure, which takes
    // the connect timeout (10 s): by the next call the other silent host's
    // mark has run out, so it is first again; 127.0.0.1 is never reached.
    const conns: Deno.Conn[] = [];
    const listeners: Deno.Listener[] = [];
    try {
      for (const hostname of ["127.0.0.2", "127.0.0.3"]) {
        listeners.push(Deno.listen({ hostname, port: PG_PORT }));
      }
    } catch {
      for (const listener of listeners) listener.close();
      // 127.0.0.2/3 cannot be bound here: not tried.
      return;
    }
    for (const listener of listeners) {
      void (async () => {
        for await (const conn of listener) conns.push(conn);
      })().catch(() => {});
    }
    const driver = openPostgres({
      url:
        `postgres://postgres@127.0.0.2,127.0.0.3,127.0.0.1:${PG_PORT}/test?application_name=a54_mute2`,
      secrets: [],
      wiredReads: true,
    });
    const calls: string[] = [];
    try {
      for (let i = 0; i < 3; i++) {
        const got = await answer(driver, "select 1 as one", 12_000);
        calls.push(`${Math.round(got.ms)} ms ${got.said.slice(0, 90)}`);
      }
    } finally {
      await driver.close();
      for (const conn of conns) {
        try {
          conn.close();
        } catch { /* closed */ }
      }
      for (const listener of listeners) listener.close();
    }
    const answered = calls.filter((line) => line.includes("answered"));
    const late = calls.filter((line) => Number(line.split(" ")[0]) > 13_000);
    assert(
      answered.length > 0 && late.length === 0,
      `calls: ${
        JSON.stringify(calls)
      }; the silent hosts took ${conns.length} connections`,
    );
  },
});

/** A host that reads the startup message, then does `what`. */
function badHost(what: "garbage" | "close" | "slow-close") {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  let accepted = 0;
  void (async () => {
    for await (const conn of listener) {
      accepted++;
      void (async () => {
        try {
          await conn.read(new Uint8Array(1024));
          if (what === "garbage") {
            await conn.write(
              new TextEncoder().encode("HTTP/1.1 400 Bad Request\r\n\r\n"),
            );
          }
          if (what === "slow-close") await sleep(1500);
          conn.close();
        } catch { /* closed */ }
      })();
    }
  })().catch(() => {});
  return {
    port: (listener.addr as Deno.NetAddr).port,
    get accepted() {
      return accepted;
    },
    close: () => listener.close(),
  };
}

Deno.test({
  name:
    "held: several hosts — a first host answering garbage, closing mid-startup or closing late is passed over within the same call; empty entries, IPv6 literals, port 0, target_session_attrs variants answer; 500 refused hosts fail at once without the password",
  ...needs("postgres"),
  sanitizeOps: false,
  sanitizeResources: false,
  async fn() {
    const lines: string[] = [];
    for (const what of ["garbage", "close", "slow-close"] as const) {
      const bad = badHost(what);
      const driver = openPostgres({
        url:
          `postgres://postgres@127.0.0.1:${bad.port},localhost:${PG_PORT}/test`,
        secrets: [],
        wiredReads: true,
      });
      try {
        const got = await answer(driver, "select 1 as one", 8000);
        if (!got.said.startsWith("answered") || got.ms > 4000) {
          lines.push(`${what}: ${Math.round(got.ms)} ms ${got.said}`);
        }
      } finally {
        await driver.close();
        bad.close();
      }
    }
    const answering = [
      `127.0.0.1:1,,localhost:${PG_PORT}`,
      `[::1]:${PG_PORT},127.0.0.1:${PG_PORT}`,
      `127.0.0.1:0,localhost:${PG_PORT}`,
      `127.0.0.1:${PG_PORT},localhost:${PG_PORT}/test?target_session_attrs=read-write`,
      `127.0.0.1:${PG_PORT},localhost:${PG_PORT}/test?target_session_attrs=prefer-standby`,
    ];
    for (const hosts of answering) {
      const url = hosts.includes("/test")
        ? `postgres://postgres@${hosts}`
        : `postgres://postgres@${hosts}/test`;
      const driver = openPostgres({ url, secrets: [], wiredReads: true });
      try {
        const got = await answer(driver, "select 1 as one", 8000);
        if (!got.said.startsWith("answered")) lines.push(`${url}: ${got.said}`);
      } finally {
        await driver.close();
      }
    }
    const many = Array.from(
      { length: 500 },
      (_, i) => `127.0.0.1:${21000 + i}`,
    ).join(",");
    const driver = openPostgres({
      url: `postgres://postgres:a54-pass-word@${many}/test`,
      secrets: ["a54-pass-word"],
      wiredReads: true,
    });
    try {
      const got = await answer(driver, "select 1", 8000);
      if (
        !got.said.includes("no host of the URL accepted a connection") ||
        got.ms > 3000 || got.said.includes("a54-pass-word")
      ) lines.push(`500 hosts: ${Math.round(got.ms)} ms ${got.said}`);
    } finally {
      await driver.close();
    }
    assertEquals(lines, []);
  },
});

Deno.test({
  name:
    "held: a huge sslrootcert (300 MB, once read whole per session: the event loop stalled for seconds) is refused at once by its size, naming the parameter, the loop never held",
  ...needs("postgres"),
  async fn() {
    // What it does: `sslmode=verify-full&sslrootcert=<a 300 MB sparse
    // file>` (a wrong path: a disk image, a log); one read.
    // What happens: pg_tls_files.ts `readTextWithin` stats the file (regular:
    // accepted) and `Deno.readTextFile`s all of it — the decode into one
    // string runs on the event loop. Measured with 400 MB: the loop stalled
    // 2.3 s, RSS 530 MB, for one session; four sessions at once: 8.8 s
    // stalled, RSS 1.8 GB, and the reads ran past their 15 s timeout.
    const dir = await Deno.makeTempDir({ prefix: "a54-big-" });
    const file = `${dir}/ca.pem`;
    const handle = await Deno.open(file, { create: true, write: true });
    await handle.truncate(300 * 1024 * 1024);
    handle.close();
    let stall = 0;
    let last = performance.now();
    const ticking = setInterval(() => {
      const now = performance.now();
      stall = Math.max(stall, now - last - 10);
      last = now;
    }, 10);
    const url = new URL(POSTGRES_URL);
    url.searchParams.set("application_name", "a54_big");
    url.searchParams.set("sslmode", "verify-full");
    url.searchParams.set("sslrootcert", file);
    const driver = openPostgres({
      url: url.toString(),
      secrets: [],
      wiredReads: true,
    });
    let got: { said: string; ms: number };
    try {
      got = await answer(driver, "select 1", 15_000);
    } finally {
      await driver.close();
      clearInterval(ticking);
      await Deno.remove(dir, { recursive: true });
    }
    assert(
      stall < 300,
      `the event loop stalled ${Math.round(stall)} ms (the read: ${
        Math.round(got.ms)
      } ms, ${got.said})`,
    );
    // Refused at once by its size, naming the parameter (the path is
    // redacted for clients as any path of the URL).
    assert(
      got.ms < 2000 && got.said.includes("sslrootcert") &&
        got.said.includes("more than the 4 MiB read at most"),
      `${Math.round(got.ms)} ms: ${got.said}`,
    );
  },
});

Deno.test("held: a CA/key file that grows past the bound after its stat (/proc's files stat as 0 bytes) is refused as it is read, never read whole", async () => {
  const said = await readTextWithin("/proc/self/maps", 5_000, undefined, () => {
  }, 64).then(
    (text) => `read ${text.length}`,
    (error) => String(error.message),
  );
  assertEquals(
    said,
    "it grew past the 64 bytes read at most (a PEM certificate, key or CA bundle is kilobytes)",
  );
});

Deno.test({
  name:
    "held: reads that never end (FIFOs a caller lets through: a stand-in for a hung file system) — one read per file however many ask, at most FILE_READS_AT_ONCE at once, the file refused at once while its read hangs, every other file read and name lookup of the process served, and read again once the hang ends",
  sanitizeOps: false,
  sanitizeResources: false,
  async fn() {
    const dir = await Deno.makeTempDir({ prefix: "a54-hung-" });
    const fifos = Array.from({ length: 6 }, (_, i) => `${dir}/f${i}.pem`);
    for (const fifo of fifos) {
      const made = await new Deno.Command("mkfifo", { args: [fifo] })
        .output();
      assert(made.success, "mkfifo");
    }
    await Deno.writeTextFile(`${dir}/ok.pem`, "a CA");
    const accept = () => {};
    const outcome = (read: Promise<string>) => {
      const started = performance.now();
      return read.then(
        (text) => `read ${text}`,
        (error) => `${error.message}`,
      ).then((said) => ({ said, ms: performance.now() - started }));
    };
    const threads = () => [...Deno.readDirSync("/proc/self/task")].length;
    const before = threads();
    const lines: string[] = [];
    try {
      // 10 callers per FIFO, 6 FIFOs: 60 reads asked, each at most 600 ms.
      const all = await Promise.all(
        fifos.flatMap((fifo) =>
          Array.from(
            { length: 10 },
            () => outcome(readTextWithin(fifo, 600, undefined, accept)),
          )
        ),
      );
      const late = all.filter((got) =>
        !got.said.startsWith("its read did not end within 0.6 s") ||
        got.ms > 1500
      );
      if (late.length > 0) lines.push(`hung: ${JSON.stringify(late[0])}`);
      const grew = threads() - before;
      if (grew > FILE_READS_AT_ONCE + 2) {
        lines.push(`${grew} more threads after 60 hung reads`);
      }
      // Asked again while they hang: at once, saying so.
      const again = await outcome(readTextWithin(fifos[0]!, 600, undefined));
      if (again.ms > 200 || !again.said.includes("has not ended")) {
        lines.push(`again: ${JSON.stringify(again)}`);
      }
      // Every slot hangs: another such file fails at once too.
      const other = await outcome(readTextWithin(`${dir}/ok.pem`, 600));
      if (other.ms > 200 || !other.said.includes("have not ended")) {
        lines.push(`other: ${JSON.stringify(other)}`);
      }
      // The rest of the process is served at once.
      const within = async (work: Promise<unknown>, what: string) => {
        const started = performance.now();
        await work;
        const ms = performance.now() - started;
        if (ms > 1000) lines.push(`${what} waited ${Math.round(ms)} ms`);
      };
      await within(Deno.readTextFile("/etc/hostname"), "a file read");
      await within(
        Deno.connect({ hostname: "localhost", port: PG_PORT }).then((c) =>
          c.close()
        ),
        "a connect to localhost (its name lookup)",
      );
    } finally {
      // The hung reads end: a writer opened and closed on each FIFO (the
      // paths removed first: a read still queued then finds none).
      const writers = fifos.map((fifo) =>
        Deno.openSync(fifo, { read: true, write: true })
      );
      for (const fifo of fifos) Deno.removeSync(fifo);
      for (const writer of writers) writer.close();
    }
    // Once they ended, the files are read again (a file put right).
    await sleep(300);
    await Deno.writeTextFile(fifos[0]!, "put right");
    const fixed = await outcome(readTextWithin(fifos[0]!, 2000));
    if (fixed.said !== "read put right") {
      lines.push(`fixed: ${JSON.stringify(fixed)}`);
    }
    const ok = await outcome(readTextWithin(`${dir}/ok.pem`, 2000));
    if (ok.said !== "read a CA") lines.push(`ok: ${JSON.stringify(ok)}`);
    await Deno.remove(dir, { recursive: true });
    assertEquals(lines, []);
  },
});

Deno.test({
  name:
    "held: sslcert/sslrootcert through a symlink to /dev/zero is refused at once; /proc/self/environ and /etc/passwd are refused without their contents in the message",
  ...needs("postgres"),
  async fn() {
    const dir = await Deno.makeTempDir({ prefix: "a54-files-" });
    await Deno.symlink("/dev/zero", `${dir}/zero.pem`);
    const passwd = (await Deno.readTextFile("/etc/passwd")).split(":")[0]!;
    const problems: string[] = [];
    try {
      for (
        const [param, file] of [
          ["sslcert", `${dir}/zero.pem`],
          ["sslrootcert", `${dir}/zero.pem`],
          ["sslcert", "/proc/self/environ"],
          ["sslcert", "/etc/passwd"],
          ["sslkey", "/etc/passwd"],
        ] as const
      ) {
        const url = new URL(POSTGRES_URL);
        url.searchParams.set("application_name", "a54_files");
        if (param === "sslrootcert") {
          url.searchParams.set("sslmode", "verify-full");
          url.searchParams.set("sslrootcert", file);
        } else {
          url.searchParams.set("sslmode", "require");
          url.searchParams.set(
            "sslcert",
            param === "sslcert" ? file : TEST_CLIENT.cert,
          );
          url.searchParams.set(
            "sslkey",
            param === "sslkey" ? file : TEST_CLIENT.key,
          );
        }
        const driver = openPostgres({
          url: url.toString(),
          secrets: [],
          wiredReads: true,
        });
        try {
          const got = await answer(driver, "select 1", 8000);
          if (
            got.said.startsWith("answered") || got.ms > 3000 ||
            got.said.includes(`${passwd}:`) || got.said.includes("PATH=")
          ) problems.push(`${param}=${file}: ${got.said}`);
        } finally {
          await driver.close();
        }
      }
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
    assertEquals(problems, []);
  },
});

Deno.test({
  name:
    "held: a client CA file swapped for a FIFO past the stat (once: each read hung, ~32 and every file read and DNS lookup of the server stalled) is refused at once as a FIFO, and after every driver closed an unrelated file read and a name lookup are served at once",
  ...needs("postgres"),
  sanitizeOps: false,
  sanitizeResources: false,
  async fn() {
    // What it does: `sslmode=verify-full&sslrootcert=<dir>/ca.pem`, where
    // another process swaps ca.pem between a real CA file and a FIFO
    // nobody writes (what a hung NFS mount does without the swap: a stat
    // that answers, a read that never ends). 40 drivers read at once, in
    // rounds, then all are closed.
    // What happens: a session whose stat saw the regular file and whose
    // open met the FIFO fails "its read did not end within 10 s" — and the
    // blocking read stays in Deno's blocking thread pool: `readTextWithin`
    // gives up on the promise, not the thread; the failure is not cached, so
    // every session tries again. Measured: 79 of 160 sessions so; the
    // process went from 7 to 36 threads and stayed there after every driver
    // closed; then `Deno.readTextFile('/etc/hostname')` and
    // `Deno.connect({hostname: "localhost"})` (getaddrinfo) each waited
    // more than 3 s (for ever): every other connection by host name, the
    // activity log, exports, SQLite. (Found with readTextWithin alone: 30
    // blocked reads leave the pool working, 40 stall it.)
    // Now: pg_tls.ts opens a file its stat calls regular non-blocking and
    // stats the opened file: a FIFO is refused at once, no thread waits
    // (and hung reads are bounded: the next test).
    const dir = await Deno.makeTempDir({ prefix: "a54-race-" });
    const fifo = `${dir}/fifo`;
    const made = await new Deno.Command("mkfifo", { args: [fifo] }).output();
    assert(made.success, "mkfifo");
    const { TEST_CA_FILE } = await import("../_tls_pg_proxy.ts");
    await Deno.copyFile(TEST_CA_FILE, `${dir}/real.pem`);
    await Deno.symlink(`${dir}/real.pem`, `${dir}/ca.pem`);
    const flipper = new Deno.Command("sh", {
      args: [
        "-c",
        `while :; do ln -sfn ${fifo} ${dir}/t1 && mv -T ${dir}/t1 ${dir}/ca.pem; ln -sfn ${dir}/real.pem ${dir}/t2 && mv -T ${dir}/t2 ${dir}/ca.pem; done`,
      ],
      stdout: "null",
      stderr: "null",
    }).spawn();
    let hung = 0;
    let waited = 0;
    let stalled = "";
    try {
      const started = performance.now();
      for (
        let round = 0;
        hung < 70 && performance.now() - started < 70_000;
        round++
      ) {
        const drivers = Array.from({ length: 40 }, (_, i) =>
          openPostgres({
            url:
              `${POSTGRES_URL}?application_name=a54_race${i}&sslmode=verify-full&sslrootcert=${dir}/ca.pem`,
            secrets: [],
            wiredReads: true,
          }));
        const said = await Promise.all(
          drivers.map((driver) => answer(driver, "select 1", 12_000)),
        );
        // A read that met the FIFO: refused at once as one (the opened
        // file's own stat), or — as before — one that never ended.
        hung += said.filter((got) =>
          got.said.includes("did not end") || got.said.includes("a FIFO")
        ).length;
        waited += said.filter((got) =>
          got.said.includes("did not end")
        )
          .length;
        await Promise.all(drivers.map((driver) => driver.close()));
      }
      flipper.kill();
      await flipper.status;
      // Every driver is closed: an unrelated file read and a name lookup.
      const within = <T>(work: Promise<T>, what: string) =>
        Promise.race([
          work.then(() => ""),
          sleep(2000).then(() => `${what} waited over 2 s`),
        ]);
      stalled = [
        await within(Deno.readTextFile("/etc/hostname"), "a file read"),
        await within(
          Deno.connect({ hostname: "localhost", port: PG_PORT }).then((c) =>
            c.close()
          ),
          "a connect to localhost (its name lookup)",
        ),
      ].filter((line) => line !== "").join("; ");
    } finally {
      try {
        flipper.kill();
      } catch { /* ended */ }
      // Release the blocked reads: a writer for each (another process:
      // this one's file operations may be the ones stalled).
      await new Deno.Command("sh", {
        args: [
          "-c",
          `for i in $(seq 400); do timeout 0.2 sh -c ': > ${fifo}' || break; done; rm -rf ${dir}`,
        ],
      }).output();
      await sleep(500);
    }
    // Fewer than ~32 leave the pool working (measured): not a verdict.
    assert(hung >= 40, `only ${hung} reads met the FIFO (the race missed)`);
    assertEquals(
      stalled,
      "",
      `after ${hung} reads that met the FIFO (${waited} did not end), all drivers closed`,
    );
    // Never waited for: the FIFO is refused at its open.
    assertEquals(waited, 0, `${waited} of ${hung} reads waited out 10 s`);
  },
});

Deno.test({
  name:
    "held: a saved several-host URL with a port per host (libpq's `h1:5432,h2:5433`) is read, and the server starts; no message of it quotes the connection's password (a URL that cannot be used is kept, named, and fails alone when used)",
  async fn() {
    // What it does: connections.json holds a good connection and one whose
    // URL is `postgres://postgres:<password>@127.0.0.1:5432,127.0.0.1:5433/test`
    // (what a libpq user writes; a hand-edited or older file); the server
    // starts.
    // What happens: startServer throws "Cannot read …/connections.json:
    // connections[1].url is not a valid URL, got \"postgres://postgres:
    // <password>@…\"" — the password in clear, on the owner's terminal and
    // in whatever log an MCP host keeps of a stdio server's stderr; no
    // connection is served.
    const password = "a54-Start-Secret";
    const good = savedConnection(
      { engine: "postgres", url: POSTGRES_URL },
      "Good",
    );
    const bad = savedConnection({
      engine: "postgres",
      url: `postgres://postgres:${password}@127.0.0.1:5432,127.0.0.1:5433/test`,
    }, "PortPerHost");
    let failure = "";
    try {
      const server = await serverWith([good, bad]);
      await server[Symbol.asyncDispose]();
    } catch (error) {
      failure = error instanceof Error ? error.message : String(error);
      // serverWith's home, left behind by a start that threw.
      const home = failure.match(/\/tmp\/dbport-tools-[A-Za-z0-9]+/)?.[0];
      if (home) await Deno.remove(home, { recursive: true }).catch(() => {});
    }
    assert(
      !failure.includes(password),
      `the start failed with the password: ${failure}`,
    );
  },
});

Deno.test({
  name:
    "held: several hosts under TLS — a driver closed while its session's TLS waits on a silent first host ends that socket within the close",
  ...needs("postgres"),
  sanitizeOps: false,
  sanitizeResources: false,
  async fn() {
    const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
    const port = (listener.addr as Deno.NetAddr).port;
    let open = 0;
    const held: Promise<void>[] = [];
    const serving = (async () => {
      for await (const conn of listener) {
        open++;
        held.push((async () => {
          const buffer = new Uint8Array(64);
          try {
            while ((await conn.read(buffer)) !== null) { /* silent */ }
          } catch { /* reset */ }
          open--;
          try {
            conn.close();
          } catch { /* closed */ }
        })());
      }
    })();
    const lines: string[] = [];
    try {
      for (
        const params of [
          "sslmode=require",
          "sslmode=require&target_session_attrs=primary",
        ]
      ) {
        const driver = openPostgres({
          url:
            `postgres://postgres@127.0.0.1:${port},localhost:${PG_PORT}/test?${params}`,
          secrets: [],
          wiredReads: true,
        });
        const read = await answer(driver, "select 1", 1500);
        const before = open;
        const started = performance.now();
        await driver.close();
        const closeMs = performance.now() - started;
        await sleep(300);
        if (before !== 1 || open !== 0 || closeMs > 2000) {
          lines.push(
            `${params}: ${read.said}; open ${before} -> ${open}, close ${
              Math.round(closeMs)
            } ms`,
          );
        }
      }
    } finally {
      listener.close();
      await serving.catch(() => {});
      for (let i = 0; i < 60 && open > 0; i++) await sleep(250);
      await Promise.all(held);
    }
    assertEquals(lines, []);
  },
});
