/**
 * Issue 32's attacks on PostgreSQL through the tools, each with its effect
 * observed: a victim session still alive, a side table that a remote write
 * (dblink) would have filled still empty. A readOnly client's reads, an
 * explain_query without analyze (the planner folds IMMUTABLE functions with
 * constant arguments), and a readWrite client's write the user denies
 * (whose dry run once acted) run nothing dbport does not know.
 */

import { assert, assertEquals, assertMatch } from "@std/assert";
import postgres from "postgres";
import type { JsonObject } from "../../lib/protocol/jsonrpc.ts";
import { savedConnection, serverWith } from "../_connections.ts";
import { type Fixture, needs, openFixture, POSTGRES_URL } from "../_db.ts";
import { recordingDialog } from "../_dialog.ts";
import type { TestServer } from "../_server.ts";
import { callTool } from "../_tool_call.ts";
import { servers } from "../_outsider.ts";

/** A session of its own that the attacks try to end. */
async function victim() {
  const sql = postgres(POSTGRES_URL, { max: 1, onnotice: () => {} });
  const [row] = await sql.unsafe(
    "select pg_backend_pid() as pid",
  ) as unknown as {
    pid: number;
  }[];
  return {
    pid: row!.pid,
    async alive(): Promise<boolean> {
      try {
        await sql.unsafe("select 1");
        return true;
      } catch {
        return false;
      }
    },
    async [Symbol.asyncDispose]() {
      await sql.end({ timeout: 1 });
    },
  };
}

/**
 * The schema of dblink, when the server has it (made in public once; never
 * dropped, since other tests may use it), or null.
 */
async function dblink(fixture: Fixture): Promise<string | null> {
  for (let attempt = 0; attempt < 3; attempt++) {
    const [row] = await fixture.admin(
      "select extnamespace::regnamespace::text as schema from pg_extension where extname = 'dblink'",
    ) as { schema: string }[];
    if (row !== undefined) return row.schema;
    try {
      await fixture.admin(
        "create extension if not exists dblink schema public",
      );
    } catch (error) {
      // Another test creating it at the same moment: look again.
      if (!/already exists|duplicate key/.test(String(error))) {
        // CI never skips: there the server must have dblink.
        if (Deno.env.get("CI")) throw error;
        // deno-lint-ignore no-console
        console.error(`SKIPPED: the dblink cases (${String(error)})`);
        return null;
      }
    }
  }
  return null;
}

async function arm(fixture: Fixture, pid: number, remote: string | null) {
  const s = fixture.schema;
  const statements = [
    `create table ${s}.log (id serial primary key, msg text)`,
    `create table ${s}.side (msg text)`,
    `create table ${s}.w (id int primary key, v text)`,
    `insert into ${s}.w values (1, 'a')`,
    `create function ${s}.kill(pid int) returns boolean immutable language sql as 'select pg_terminate_backend(pid)'`,
    `create function ${s}.kill_pl(pid int) returns boolean immutable language plpgsql as $$begin return pg_terminate_backend(pid); end$$`,
    `create function ${s}.kill_atomic(pid int) returns boolean immutable language sql begin atomic select pg_terminate_backend(pid); end`,
    `create function ${s}.kill_u(pid int) returns boolean immutable language sql as $$select U&"pg\\005fterminate\\005fbackend"(pid)$$`,
    `create view ${s}.v_kill as select ${s}.kill(${pid}) as killed`,
  ];
  if (remote !== null) {
    const link = `host=127.0.0.1 port=${
      new URL(POSTGRES_URL).port || 5432
    } dbname=${new URL(POSTGRES_URL).pathname.slice(1)} user=${
      new URL(POSTGRES_URL).username
    }`;
    statements.push(
      `create function ${s}.remote(msg text) returns text immutable language sql begin atomic select ${remote}.dblink_exec('${link}', 'insert into ${s}.side values (' || quote_literal(msg) || ')'); end`,
    );
  }
  for (const statement of statements) await fixture.admin(statement);
}

async function setUp() {
  const fixture = await openFixture("postgres");
  const target = await victim();
  let remote: string | null;
  try {
    remote = await dblink(fixture);
    await arm(fixture, target.pid, remote);
  } catch (error) {
    await target[Symbol.asyncDispose]();
    await fixture[Symbol.asyncDispose]();
    throw error;
  }
  const url = `${fixture.url}?search_path=${fixture.schema}`;
  const fenced = savedConnection({ engine: "postgres", url }, "Fenced", {
    externalAccess: "readOnly",
    safeMode: "silent",
  });
  const open = savedConnection({ engine: "postgres", url }, "Open", {
    externalAccess: "readWrite",
    safeMode: "alert",
  });
  const dialog = await recordingDialog(1);
  const server = await serverWith([fenced, open], {
    hostDialog: dialog.setting,
  });
  return {
    fixture,
    target,
    remote,
    server,
    dialog,
    fenced,
    open,
    reader: (await server.mint("readOnly")).plaintext,
    writer: (await server.mint("readWrite")).plaintext,
    async sideRows(): Promise<number> {
      const [row] = await fixture.admin(
        `select count(*)::int as n from ${fixture.schema}.side`,
      ) as { n: number }[];
      return row!.n;
    },
    async [Symbol.asyncDispose]() {
      await server[Symbol.asyncDispose]();
      await dialog[Symbol.asyncDispose]();
      await target[Symbol.asyncDispose]();
      await fixture[Symbol.asyncDispose]();
    },
  };
}

/** A tool call that must not have run: a protocol error or a tool error. */
async function refused(
  server: TestServer,
  token: string,
  tool: string,
  args: JsonObject,
  why: RegExp,
): Promise<string> {
  const answer = await callTool(server, tool, args, {
    authorization: `Bearer ${token}`,
  });
  const result = answer.json.result;
  const said = answer.json.error?.message ?? result?.content?.[0]?.text ?? "";
  assert(
    answer.json.error !== undefined || result?.isError === true,
    `${JSON.stringify(args)} ran: ${JSON.stringify(result?.structuredContent)}`,
  );
  assertMatch(said, why, JSON.stringify(args));
  return said;
}

/** A refusal as reaching other hosts (dblink_exec's C symbol). */
const REACHES = /dblink_exec.*reaches files, code, other hosts/;
/** A built-in on neither allowlist: refused to every token (stop 56). */
const PAST =
  /pg_(terminate_backend|stat_reset|reload_conf)\(\) is on neither of dbport's allowlists/;

function attacks(s: string, pid: number, remote: string | null): string[] {
  return [
    `select ${s}.kill(${pid})`,
    `values (${s}.kill(${pid}))`,
    `select * from ${s}.w, lateral (select ${s}.kill(${pid})) k`,
    `select (select ${s}.kill(${pid}))`,
    `select * from ${s}.w where ${s}.kill(${pid})`,
    `select * from ${s}.w order by ${s}.kill(${pid})`,
    `select * from ${s}.kill(${pid})`,
    `select ${s}.kill_pl(${pid})`,
    `select ${s}.kill_atomic(${pid})`,
    `select ${s}.kill_u(${pid})`,
    `select * from ${s}.v_kill`,
    ...(remote !== null ? [`select ${s}.remote('read')`] : []),
  ];
}

Deno.test(
  "postgres: a readOnly client's reads through lying functions kill no session and write nowhere",
  needs("postgres"),
  async () => {
    await using t = await setUp();
    const s = t.fixture.schema;
    for (const query of attacks(s, t.target.pid, t.remote)) {
      await refused(
        t.server,
        t.reader,
        "execute_query",
        { connection_id: t.fenced.id, query },
        /tools:write|scope|denied|read only/i,
      );
    }
    assert(await t.target.alive(), "the victim session was killed");
    assertEquals(await t.sideRows(), 0, "dblink wrote");
  },
);

Deno.test(
  "postgres: explain_query without analyze plans none of them (constant folding would run them)",
  needs("postgres"),
  async () => {
    await using t = await setUp();
    const s = t.fixture.schema;
    for (const query of attacks(s, t.target.pid, t.remote)) {
      for (const token of [t.reader, t.writer]) {
        await refused(
          t.server,
          token,
          "explain_query",
          {
            connection_id: token === t.reader ? t.fenced.id : t.open.id,
            query,
          },
          // dblink_exec behind a SQL body is refused outright, as the same
          // call named in the statement is (its C symbol, stop 55); so is
          // pg_terminate_backend in a SQL body (stop 56). A plpgsql body is
          // unread: not planned.
          query.includes(".remote(")
            ? REACHES
            : query.includes("kill_pl")
            ? /does not plan this statement/
            : PAST,
        );
      }
    }
    await refused(
      t.server,
      t.writer,
      "explain_query",
      {
        connection_id: t.open.id,
        query:
          `update ${s}.w set v = ${s}.kill(${t.target.pid})::text where id = 1`,
      },
      PAST,
    );
    assert(await t.target.alive(), "planning killed the victim session");
    assertEquals(await t.sideRows(), 0, "planning wrote through dblink");
    // An ordinary plan is still there.
    const plain = await callTool(t.server, "explain_query", {
      connection_id: t.fenced.id,
      query: `select * from ${s}.w where id = 1`,
    }, { authorization: `Bearer ${t.reader}` });
    assertEquals(
      plain.json.result?.isError,
      undefined,
      JSON.stringify(plain.json),
    );
  },
);

Deno.test(
  "postgres: a denied write's preview ran nothing: no dry run where a function could escape it",
  needs("postgres"),
  async () => {
    await using t = await setUp();
    const s = t.fixture.schema;
    const pid = t.target.pid;
    // Built-ins on neither allowlist: refused outright, nothing asked
    // (stop 56; they were asked with no dry run before).
    for (
      const query of [
        `update ${s}.w set v = "pg_terminate_backend"(a.pid)::text from pg_stat_activity a where a.pid = ${pid}`,
        `update ${s}.w set v = pg_terminate_backend/**/(${pid})::text where id = 1`,
        `insert into ${s}.log (msg) values (pg_stat_reset()::text)`,
        `insert into ${s}.log (msg) values (pg_reload_conf()::text)`,
        `insert into ${s}.log (msg) values (${s}.kill(${pid})::text)`,
      ]
    ) {
      await refused(
        t.server,
        t.writer,
        "execute_query",
        { connection_id: t.open.id, query },
        PAST,
      );
    }
    const writes = [
      `update ${s}.w set v = 'x' where ${s}.kill_pl(${pid})`,
    ];
    // dblink_exec behind a SQL body: denied outright, no question asked.
    if (t.remote !== null) {
      await refused(
        t.server,
        t.writer,
        "execute_query",
        {
          connection_id: t.open.id,
          query: `insert into ${s}.log (msg) values (${s}.remote('dry run'))`,
        },
        REACHES,
      );
    }
    for (const query of writes) {
      await refused(
        t.server,
        t.writer,
        "execute_query",
        { connection_id: t.open.id, query },
        /did not approve/,
      );
    }
    assert(await t.target.alive(), "a dry run killed the victim session");
    assertEquals(await t.sideRows(), 0, "a dry run committed through dblink");
    const asked = await t.dialog.asked();
    assertEquals(asked.length, writes.length);
    for (const question of asked) {
      const preview = question.preview as JsonObject;
      assertEquals(preview.exact, false, JSON.stringify(question));
      assertMatch(String(preview.note), /no dry run/);
    }
    // A plain write is still measured by a dry run.
    await refused(
      t.server,
      t.writer,
      "execute_query",
      {
        connection_id: t.open.id,
        query: `update ${s}.w set v = upper(v) where id = 1`,
      },
      /did not approve/,
    );
    const last = (await t.dialog.asked()).at(-1)!;
    assertEquals((last.preview as JsonObject).exact, true);
  },
);

/**
 * The outside attack's bypasses (notes of issue 32): code the executor and
 * planner call by type, index, partition key or foreign table, never by
 * name. Each setup's effect is a remote write (dblink) into `side`, or a
 * file a foreign table's program touches.
 */
async function armHidden(fixture: Fixture, remote: string): Promise<string> {
  const s = fixture.schema;
  const u = new URL(POSTGRES_URL);
  const link = `host=127.0.0.1 port=${u.port || 5432} dbname=${
    u.pathname.slice(1)
  } user=${u.username}`;
  // Armed only once set up (building the index calls the class's code).
  const effect =
    `if exists (select from ${s}.armed) then perform ${remote}.dblink_exec('${link}', 'insert into ${s}.side values (''ran'')'); end if`;
  const marker = `/tmp/${s}_ran`;
  for (
    const statement of [
      `create table ${s}.armed (on_ boolean)`,
      `create function ${s}.cmp(a int4, b int4) returns int4 immutable language plpgsql as $$begin ${effect}; return btint4cmp(a, b); end$$`,
      `create operator class ${s}.ops for type int4 using btree as operator 1 <, operator 2 <=, operator 3 =, operator 4 >=, operator 5 >, function 1 ${s}.cmp(int4, int4)`,
      `create function ${s}.hashf(a int4) returns int4 immutable language plpgsql as $$begin ${effect}; return hashint4(a); end$$`,
      `create operator class ${s}.hops for type int4 using hash as operator 1 =, function 1 ${s}.hashf(int4)`,
      `create function ${s}.fx(a int4) returns int4 immutable language plpgsql as $$begin ${effect}; return a; end$$`,
      // A range type over int4 compared by the user's class.
      `create type ${s}.r as range (subtype = int4, subtype_opclass = ${s}.ops)`,
      `create table ${s}.rt (id int primary key, r ${s}.r)`,
      `insert into ${s}.rt values (1, '[1,5]'), (2, '[2,9]')`,
      // Indexes with the user's classes on plain int columns.
      `create table ${s}.ix (id int, v text)`,
      `insert into ${s}.ix select g, 'v' from generate_series(1, 3000) g`,
      `create index on ${s}.ix (id ${s}.ops)`,
      `analyze ${s}.ix`,
      `create table ${s}.hx (id int, v text)`,
      `insert into ${s}.hx select g, 'v' from generate_series(1, 3000) g`,
      `create index on ${s}.hx using hash (id ${s}.hops)`,
      `analyze ${s}.hx`,
      // Partition keys: a user class, a user expression.
      `create table ${s}.pt (id int, v text) partition by range (id ${s}.ops)`,
      `create table ${s}.pt1 partition of ${s}.pt for values from (0) to (10)`,
      `insert into ${s}.pt values (3, 'a')`,
      `create table ${s}.pe (id int, v text) partition by range (${s}.fx(id))`,
      `create table ${s}.pe1 partition of ${s}.pe for values from (0) to (100)`,
      `create view ${s}.v_ix as select * from ${s}.ix where id < 10`,
      `insert into ${s}.armed values (true)`,
    ]
  ) await fixture.admin(statement);
  // file_fdw: a foreign table whose scan runs a program.
  try {
    await fixture.admin(
      `create extension if not exists file_fdw schema public`,
    );
  } catch (error) {
    if (!/already exists|duplicate key/.test(String(error))) throw error;
  }
  for (
    const statement of [
      `create server ${s}_fs foreign data wrapper file_fdw`,
      `create foreign table ${s}.ft (a text) server ${s}_fs options (program 'touch ${marker}; echo 1')`,
      `create table ${s}.par (a text)`,
      `create foreign table ${s}.ftc () inherits (${s}.par) server ${s}_fs options (program 'touch ${marker}; echo 1')`,
      `create view ${s}.v_ft as select * from ${s}.ft`,
    ]
  ) await fixture.admin(statement);
  return marker;
}

async function programRan(fixture: Fixture, marker: string): Promise<boolean> {
  const [row] = await fixture.admin(
    `select (pg_stat_file('${marker}', true)).size is not null as ran`,
  ) as { ran: boolean }[];
  return row!.ran;
}

Deno.test(
  "postgres: foreign tables, index and partition-key operator classes and range types run nothing on a read, a plan or a denied write's dry run",
  needs("postgres"),
  async () => {
    await using t = await setUp();
    if (t.remote === null) return;
    const s = t.fixture.schema;
    const marker = await armHidden(t.fixture, t.remote);
    try {
      const reads: [string, RegExp][] = [
        [`select * from ${s}.ft`, /ft is a foreign table.*tools:write/s],
        [`select * from ${s}.v_ft`, /ft is a foreign table/],
        [`select * from ${s}.par`, /ftc is a foreign table/],
        [`select '[1,5]'::${s}.r`, /cmp\(integer,integer\).*plpgsql/],
        [`select r from ${s}.rt order by r`, /cmp/],
        [
          `select * from jsonb_populate_record(null::${s}.rt, '{"r":"[1,3]"}')`,
          /cmp/,
        ],
        [`select row(1, '[1,3]')::${s}.rt`, /cmp/],
        [`explain select '[1,5]'::${s}.r`, /cmp/],
        [`select * from ${s}.ix where id = 5`, /cmp/],
        [`select * from ${s}.v_ix`, /cmp/],
        [`select * from ${s}.hx where id = 7`, /hashf/],
        [`select * from ${s}.pt where id = 3`, /cmp/],
        [`select * from ${s}.pt1 where id = 3`, /cmp/],
        [`select * from ${s}.pe where id = 3`, /fx/],
      ];
      for (const [query, why] of reads) {
        await refused(t.server, t.reader, "execute_query", {
          connection_id: t.fenced.id,
          query,
        }, why);
      }
      for (
        const query of [
          `select '[1,5]'::${s}.r`,
          `select * from ${s}.pt where id = 3`,
          `select * from ${s}.ft`,
          `select * from ${s}.par`,
        ]
      ) {
        await refused(t.server, t.reader, "explain_query", {
          connection_id: t.fenced.id,
          query,
        }, /does not plan this statement/);
      }
      const writes = [
        `update ${s}.rt set r = '[1,7]' where id = 1`,
        `insert into ${s}.ix values (99999, 'y')`,
        `insert into ${s}.pt values (5, 'y')`,
        `insert into ${s}.pt1 values (5, 'y')`,
        `insert into ${s}.pe values (5, 'y')`,
        `update ${s}.w set v = '[1,5]'::${s}.r::text where id = 1`,
      ];
      for (const query of writes) {
        await refused(t.server, t.writer, "execute_query", {
          connection_id: t.open.id,
          query,
        }, /did not approve/);
      }
      assertEquals(await t.sideRows(), 0, "a user operator class's code ran");
      assertEquals(await programRan(t.fixture, marker), false);
      for (const question of await t.dialog.asked()) {
        const preview = question.preview as JsonObject;
        assertEquals(preview.exact, false, JSON.stringify(question));
        assertMatch(String(preview.note), /no dry run/);
      }
    } finally {
      await t.fixture.admin(`drop server if exists ${s}_fs cascade`);
    }
  },
);

Deno.test(
  "postgres: a readWrite token's SQL function whose search path puts a missing schema before pg_catalog cannot replace pg_catalog.upper (the server creates in the path's first schema that exists)",
  needs("postgres"),
  async () => {
    // A database of the test's own: before the fix, its pg_catalog.upper
    // was replaced.
    const name = `notice59_path_${crypto.randomUUID().slice(0, 8)}`;
    const root = postgres(POSTGRES_URL, { max: 1, onnotice: () => {} });
    await root.unsafe(`create database ${name}`);
    const url = new URL(POSTGRES_URL);
    url.pathname = `/${name}`;
    const { server, write, read } = await servers("CatalogPath", url.href);
    try {
      const replace =
        `create or replace function upper(text) returns text language sql return 'replaced'`;
      for (
        const sql of [
          `create function public.by_user() returns void language sql set search_path = "$user", pg_catalog as $b$ ${replace} $b$`,
          `create function public.by_config() returns void language sql as $b$ select set_config('search_path', 'pg_catalog', true); ${replace} $b$`,
        ]
      ) assertEquals(await write(sql), "OK []", sql);
      for (
        const call of ["select public.by_user()", "select public.by_config()"]
      ) {
        const got = await write(call);
        assertMatch(got, /^ERR denied.*pg_catalog/s, call);
      }
      assertEquals(await write("select upper('abc')"), 'OK [["ABC"]]');
      assertEquals(await read("select upper('abc')"), 'OK [["ABC"]]');
    } finally {
      await server[Symbol.asyncDispose]();
      await root.unsafe(`drop database if exists ${name} with (force)`);
      await root.end();
    }
  },
);
