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
          /does not plan this statement/,
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
      /does not plan/,
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
    const writes = [
      `update ${s}.w set v = "pg_terminate_backend"(a.pid)::text from pg_stat_activity a where a.pid = ${pid}`,
      `update ${s}.w set v = pg_terminate_backend/**/(${pid})::text where id = 1`,
      `insert into ${s}.log (msg) values (pg_stat_reset()::text)`,
      `insert into ${s}.log (msg) values (pg_reload_conf()::text)`,
      `insert into ${s}.log (msg) values (${s}.kill(${pid})::text)`,
      `update ${s}.w set v = 'x' where ${s}.kill_pl(${pid})`,
      ...(t.remote !== null
        ? [`insert into ${s}.log (msg) values (${s}.remote('dry run'))`]
        : []),
    ];
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
