/**
 * An outsider's attacks (stop 55) on stop 54's fixes: PostgreSQL vetting
 * (pg_parse.ts `supportFunctions`, `definerOf`, `grantsPower`,
 * NEWER_SYNTAX; pg_vet.ts; vet_sql.ts), several hosts with a port each
 * (pg_hosts.ts `HostPicker#bound`, target.ts), certificate file reads
 * (pg_tls_files.ts `readTextWithin`). Through the MCP endpoint (execute_query
 * with readWrite and readOnly tokens) and the driver API, against the real
 * PostgreSQL 15.
 *
 * Findings (each test "FINDING: …" fails now):
 * - A readOnly token reads a server file through `ORDER BY x USING
 *   OPERATOR(s.<<<)` (and a window's ORDER BY): the sort calls the
 *   operator's btree family's support function 1, a SQL function running
 *   pg_read_file; vet_sql.ts never follows an operator to its opfamilies.
 *   A readWrite token the same through CREATE INDEX … (x s.opc).
 * - A readWrite token renames pg_read_file inside a LANGUAGE sql body
 *   (`alter function pg_catalog.pg_read_file(text) rename to a55_alias`),
 *   then `select a55_alias('PG_VERSION')` answers the file.
 * - A saved URL whose password holds a bare '%' ("50%off") stops the
 *   server's start (URIError in target.ts describeTarget), healthy
 *   connections with it.
 * - Three silent hosts before the answering one: a 5 s call fails at ~8 s.
 *
 * Fixed since (now "held: …"): ALTER FOREIGN TABLE … OPTIONS retargeting a
 * file_fdw table and ALTER FOREIGN DATA WRAPPER … VALIDATOR are refused as
 * reach; role membership (GRANT role TO, CREATE ROLE … IN ROLE) is refused;
 * GRANT on pg_toast is refused as on the catalogs; CREATE FUNCTION … BEGIN
 * ATOMIC … END is one statement, its body vetted.
 *
 * Held: GRANT of "pg_…"/U& spelled pg_ roles, ALL TABLES IN SCHEMA
 * "pg_catalog", session_preload_libraries, SECURITY DEFINER (CREATE,
 * EXTERNAL, ALTER ROUTINE); CREATE OR REPLACE re-vetted at the next call;
 * set_config(search_path) a write for readOnly; operator classes/families
 * naming lo_export/lo_unlink refused; hash partitions with a user opclass
 * refused; ordinary reads (json_object on 15, ordered-set aggregates, …)
 * answered; several-host passwords with '@' ',' ':' kept secret in
 * describeTarget, urlWithoutSecrets and connect errors; a running server
 * survives a '%' password edit; a silent first host under sslmode=prefer;
 * a cert file refused for size read again at once once fixed.
 *
 * @module
 */

import { assert, assertEquals } from "@std/assert";
import postgres from "postgres";
import { savedConnection, serverWith } from "../_connections.ts";
import { needs, POSTGRES_URL, READ_OPTIONS } from "../_db.ts";
import { callTool } from "../_tool_call.ts";
import { ownSchema, said, servers } from "../_outsider.ts";
import { inAppDir } from "../../lib/app/paths.ts";
import { CONNECTIONS_FILE } from "../../lib/base/identity.ts";
import {
  MAX_FILE_BYTES,
  readTextWithin,
} from "../../lib/db/postgres/pg_tls_files.ts";
import { openPostgres } from "../../lib/db/postgres/postgres.ts";
import { describeTarget, urlWithoutSecrets } from "../../lib/db/target.ts";
import type { Driver } from "../../lib/db/types.ts";

const PG_PORT = Number(new URL(POSTGRES_URL).port || 5432);

/**
 * A btree operator class on text, made by the admin (the owner's database),
 * whose comparison support function is a LANGUAGE sql function that reads a
 * server file (its content surfaces in the cast error). Its `<` operator's
 * own function is harmless.
 */
async function fileReadingOpclass(own: ReturnType<typeof ownSchema>) {
  const s = own.schema;
  await own.admin.unsafe(`
    create schema ${s};
    create function ${s}.lt(text, text) returns boolean language sql immutable as $b$ select $1 < $2 $b$;
    create function ${s}.le(text, text) returns boolean language sql immutable as $b$ select $1 <= $2 $b$;
    create function ${s}.eq(text, text) returns boolean language sql immutable as $b$ select $1 = $2 $b$;
    create function ${s}.ge(text, text) returns boolean language sql immutable as $b$ select $1 >= $2 $b$;
    create function ${s}.gt(text, text) returns boolean language sql immutable as $b$ select $1 > $2 $b$;
    create function ${s}.cmp(text, text) returns integer language sql immutable as
      $b$ select ('a55 ' || pg_read_file('PG_VERSION'))::integer $b$;
    create operator ${s}.<<< (function = ${s}.lt, leftarg = text, rightarg = text);
    create operator ${s}.<<= (function = ${s}.le, leftarg = text, rightarg = text);
    create operator ${s}.=== (function = ${s}.eq, leftarg = text, rightarg = text);
    create operator ${s}.>>= (function = ${s}.ge, leftarg = text, rightarg = text);
    create operator ${s}.>>> (function = ${s}.gt, leftarg = text, rightarg = text);
    create operator class ${s}.opc for type text using btree as
      operator 1 ${s}.<<<, operator 2 ${s}.<<=, operator 3 ${s}.===,
      operator 4 ${s}.>>=, operator 5 ${s}.>>>,
      function 1 ${s}.cmp(text, text);
    create table ${s}.t (x text);
    insert into ${s}.t values ('b'), ('a'), ('c');
  `);
}

Deno.test({
  name:
    "held: ORDER BY … USING a user operator (and a window's) is denied to a readOnly token as reaching files — the vetting follows the operator to its families' support functions (vet_sql.ts), where the btree family's comparison function (a LANGUAGE sql function running pg_read_file) is refused as `select s.cmp(…)` is",
  ...needs("postgres"),
  async fn() {
    // What it does: the owner's database holds (made by the admin) a btree
    // operator class on text whose `<` is s.<<< (a harmless SQL function)
    // and whose FUNCTION 1 is s.cmp, a LANGUAGE sql function that reads
    // the server file PG_VERSION and casts it to integer.
    // A readOnly token sends
    //   select x from s.t order by x using operator(s.<<<)
    //   select x, row_number() over (order by x using operator(s.<<<)) from s.t
    // What happens: both answer `ERR query_failed: invalid input syntax
    // for type integer: "a55 15\n"` — the server file's text reaches the
    // client in the error; `select s.cmp('a', 'b')` itself is denied as
    // reaching files. vet_sql.ts follows an operator's oprcode, its
    // estimators, commutator and negator, and the operator classes of a
    // table's indexes and of a user type — not the opfamilies
    // (pg_amop.amopopr → pg_amproc) of an operator named by USING, whose
    // support function the sort calls (PrepareSortSupportFromOrderingOp).
    const own = ownSchema("a55", "ord");
    const s = own.schema;
    await fileReadingOpclass(own);
    const { server, read } = await servers("OrderUsing");
    try {
      assert(
        (await read(`select ${s}.cmp('a', 'b')`)).startsWith("ERR denied"),
      );
      const leaks: string[] = [];
      for (
        const query of [
          `select x from ${s}.t order by x using operator(${s}.<<<)`,
          `select x, row_number() over (order by x using operator(${s}.<<<)) from ${s}.t`,
        ]
      ) {
        const got = await read(query);
        if (!got.startsWith("ERR denied")) leaks.push(`${query} -> ${got}`);
      }
      assertEquals(leaks, [], "the server file reached a readOnly token");
    } finally {
      await server[Symbol.asyncDispose]();
      await own.drop();
    }
  },
});

Deno.test({
  name:
    "held: CREATE INDEX … (x s.opc) is denied to a readWrite token as reaching files — the operator class an index element names is looked up and its support function (SQL running pg_read_file) vetted",
  ...needs("postgres"),
  async fn() {
    // What it does: the same operator class as above (the owner's); a
    // readWrite token sends `create index on s.t (x s.opc)`.
    // What happens: `ERR query_failed: invalid input syntax for type
    // integer: "a55 15\n"` — the build sorted with s.cmp, the file's text
    // is in the error. pg_parse.ts reads IndexStmt's opclass as a name and
    // vets no function of it; the same token's `select s.cmp('a','b')` is
    // denied.
    const own = ownSchema("a55", "idx");
    const s = own.schema;
    await fileReadingOpclass(own);
    const { server, write } = await servers("IndexOpclass");
    try {
      assert(
        (await write(`select ${s}.cmp('a', 'b')`)).startsWith("ERR denied"),
      );
      const got = await write(`create index on ${s}.t (x ${s}.opc)`);
      assert(
        got.startsWith("ERR denied"),
        `create index answered: ${got}`,
      );
    } finally {
      await server[Symbol.asyncDispose]();
      await own.drop();
    }
  },
});

Deno.test({
  name:
    "held: GRANT SELECT ON pg_toast.pg_toast_1260 (pg_authid's TOAST table) and GRANT … ON ALL TABLES IN SCHEMA pg_toast are refused like GRANT … ON pg_catalog.pg_authid — the catalogs' storage schema pg_toast is among CATALOG_SCHEMAS",
  ...needs("postgres"),
  async fn() {
    // What it does: a readWrite token sends `grant select on
    // pg_toast.pg_toast_1260 to <role>` and `grant select on all tables in
    // schema pg_toast to <role>`. What happens: both `OK []`.
    const own = ownSchema("a55", "toast");
    const role = `${own.schema}_r`;
    await own.admin.unsafe(`create role ${role}`);
    const { server, write } = await servers("Toast");
    try {
      assert(
        (await write(`grant select on pg_catalog.pg_authid to ${role}`))
          .startsWith("ERR denied"),
      );
      const answers = [
        await write(`grant select on pg_toast.pg_toast_1260 to ${role}`),
        await write(`grant select on all tables in schema pg_toast to ${role}`),
      ];
      assertEquals(
        answers.filter((got) => !got.startsWith("ERR denied")),
        [],
        "granted on the catalogs' TOAST tables",
      );
    } finally {
      await server[Symbol.asyncDispose]();
      await own.admin.unsafe(
        `revoke all on all tables in schema pg_toast from ${role}`,
      ).catch(() => {});
      await own.admin.unsafe(`drop owned by ${role}; drop role ${role}`)
        .catch(() => {});
      await own.drop();
    }
  },
});

Deno.test({
  name:
    'held: GRANT variants and role settings — a quoted or U& spelled pg_ role, ALL TABLES IN SCHEMA "pg_catalog", session_preload_libraries, SECURITY DEFINER are refused; CREATE OR REPLACE (by the owner; a token asks) of a harmless SQL function with a file read is vetted at the next call; set_config(search_path) is a write for readOnly',
  ...needs("postgres"),
  async fn() {
    const own = ownSchema("a55", "grant");
    const s = own.schema;
    const role = `${s}_r`;
    await own.admin.unsafe(`create schema ${s}; create role ${role};
      create function ${s}.ok(text) returns text language sql as $b$ select upper($1) $b$;
      create function ${s}.lower(text) returns text language sql as $b$ select pg_read_file('PG_VERSION') $b$`);
    const { server, read, write } = await servers("Grants");
    try {
      const refused = [
        `grant "pg_read_server_files" to ${role}`,
        `grant U&"\\0070g_read_server_files" to ${role}`,
        `grant select on all tables in schema "pg_catalog" to ${role}`,
        `alter role ${role} set session_preload_libraries = 'auto_explain'`,
        `create function ${s}.sd() returns int language sql external security definer as $b$ select 1 $b$`,
        `alter routine ${s}.ok(text) security definer`,
      ];
      for (const query of refused) {
        const got = await write(query);
        assert(got.startsWith("ERR denied"), `${query} -> ${got}`);
      }
      assertEquals(await read(`select ${s}.ok('x')`), 'OK [["X"]]');
      // A token's CREATE OR REPLACE now asks (column_change.ts): the owner
      // replaces the body, which is still vetted at the next call.
      await own.admin.unsafe(
        `create or replace function ${s}.ok(text) returns text language sql as $b$ select pg_read_file('PG_VERSION') $b$`,
      );
      assert((await read(`select ${s}.ok('x')`)).startsWith("ERR denied"));
      const shadow = await read(
        `select set_config('search_path', '${s}, pg_catalog', false), lower('X')`,
      );
      assert(shadow.startsWith("FORBIDDEN"), shadow);
      assertEquals(await read(`select lower('X')`), 'OK [["x"]]');
    } finally {
      await server[Symbol.asyncDispose]();
      await own.admin.unsafe(`drop owned by ${role}; drop role ${role}`)
        .catch(() => {});
      await own.drop();
    }
  },
});

Deno.test({
  name:
    "held: ordinary reads a readOnly token sends are answered (no false positive): json_object on PostgreSQL 15, ordered-set and filtered aggregates, ORDER BY USING <, joins USING, jsonb operators, SQL value functions",
  ...needs("postgres"),
  async fn() {
    const own = ownSchema("a55", "fp");
    const s = own.schema;
    await own.admin.unsafe(`create schema ${s};
      create table ${s}.n (n int, x text, j jsonb);
      insert into ${s}.n values (1, 'a', '{"a":1}'), (2, 'b', '{"a":2}')`);
    const { server, read } = await servers("Ordinary");
    try {
      const refused: string[] = [];
      for (
        const query of [
          `select json_object('{a,1}')`,
          `select json_build_object('a', 1), jsonb_path_query_first('{"a":1}', '$.a')`,
          `select string_agg(x, ',' order by x), array_agg(n) from ${s}.n`,
          `select percentile_cont(0.5) within group (order by n) from ${s}.n`,
          `select count(*) filter (where n > 1) from ${s}.n`,
          `select x from ${s}.n order by x using <`,
          `select j->>'a', j @> '{"a":1}' from ${s}.n`,
          `select current_user, session_user, current_role`,
          `select x from ${s}.n n1 join ${s}.n n2 using (x)`,
        ]
      ) {
        const got = await read(query);
        if (!got.startsWith("OK")) refused.push(`${query} -> ${got}`);
      }
      assertEquals(refused, []);
    } finally {
      await server[Symbol.asyncDispose]();
      await own.drop();
    }
  },
});

Deno.test({
  name:
    "held: a saved connection whose password holds a '%' not followed by two hex digits (postgres://postgres:50%off@…) is kept as unusable (keepUnusable) and the server starts, its healthy connections answering (it stopped the start with \"URIError: URI malformed\")",
  ...needs("postgres"),
  async fn() {
    // What it does: connections.json holds a healthy connection and one
    // whose URL is `postgres://postgres:50%off@127.0.0.1:5432/test` (the
    // password "50%off" as typed; trust auth here, so it even connects).
    // What happens: startTestServer rejects with "URIError: URI malformed"
    // (lib/db/target.ts describeTarget: decodeURIComponent(parsed.password)
    // ← urlProblem ← connections.ts checkUrl ← parseConnections ←
    // loadConnections ← serve/stores.ts openStores). The same throw in
    // `describeTarget` for `u%ZZ` users and `/d%ZZb` databases.
    const healthy = savedConnection(
      { engine: "postgres", url: POSTGRES_URL },
      "Healthy",
      { externalAccess: "readWrite" },
    );
    const percent = savedConnection(
      {
        engine: "postgres",
        url: "postgres://postgres:50%off@127.0.0.1:5432/test",
      },
      "Percent",
      { externalAccess: "readWrite" },
    );
    let started: Awaited<ReturnType<typeof serverWith>> | undefined;
    let failure = "";
    try {
      started = await serverWith([healthy, percent]);
    } catch (error) {
      failure = String(error);
    }
    try {
      assertEquals(failure, "", "the server did not start");
      const reader = (await started!.mint("readOnly")).plaintext;
      const got = said(
        await callTool(started!, "execute_query", {
          connection_id: healthy.id,
          query: "select 1 as one",
        }, { authorization: `Bearer ${reader}` }),
      );
      assertEquals(got, "OK [[1]]");
    } finally {
      await started?.[Symbol.asyncDispose]();
    }
  },
});

Deno.test({
  name:
    "held: several-host URLs with passwords holding '@', ',', ':' and percent-escapes — describeTarget keeps the decoded password secret and out of what is visible; urlWithoutSecrets redacts it",
  fn() {
    for (
      const [url, password] of [
        ["postgres://u:p%40w,x:y@h1:5432,h2:5433/db", "p@w,x:y"],
        ["postgres://u:s3cr@t@h1:5432,h2:5433/db", "s3cr@t"],
        ["postgres://u:pa:ss@[::1]:5432,[::2]:5433/db", "pa:ss"],
        ["postgres://u:pw%2Cx@h%31:5432,h2:5433/db", "pw,x"],
      ] as const
    ) {
      const target = describeTarget("postgres", url)!;
      assert(target.secrets.includes(password), url);
      assert(!target.visible.some((one) => one.includes(password)), url);
      assert(!urlWithoutSecrets(url).includes(password.slice(0, 3)), url);
    }
  },
});

/** A listener that takes TCP connections and never answers them. */
function muteHost() {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const conns: Deno.Conn[] = [];
  void (async () => {
    for await (const conn of listener) conns.push(conn);
  })().catch(() => {});
  return {
    port: (listener.addr as Deno.NetAddr).port,
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

/** One read through `driver`: what it said and how long it took. */
async function timed(driver: Driver, timeoutMs: number) {
  const started = performance.now();
  const said = await driver.query("select 1 as one", {
    ...READ_OPTIONS,
    timeoutMs,
    signal: new AbortController().signal,
  }).then(
    (result) => `answered ${JSON.stringify(result.rows)}`,
    (error) => `failed: ${error?.message ?? error}`,
  );
  return { said, ms: Math.round(performance.now() - started) };
}

Deno.test({
  name:
    "held: several hosts — with three silent hosts before the answering one, every call with a 5 s timeout ends within its timeout (+1 s): a call asked again as a silent host is given up keeps what is left of its wait (it ran ~8 s)",
  ...needs("postgres"),
  sanitizeOps: false,
  sanitizeResources: false,
  async fn() {
    // What it does: `postgres://postgres@127.0.0.1:<m1>,127.0.0.1:<m2>,
    // 127.0.0.1:<m3>,localhost:5432/test`, m1..m3 taking TCP connections
    // and never answering; two reads in a row, 5 s timeout each.
    // What happens (measured): 8035 ms "the statement timeout of 5 s ran
    // out while the query waited for a database session", then 4111 ms
    // answered. pg_hosts.ts `HostPicker#bound`: each silent host keeps its
    // own 4 s deadline while the call's own time runs out under it — the
    // call's timeout does not end the host walk it waits on. (Two silent
    // hosts alone, 3 s timeout: 3005 ms, then 4020 ms.)
    const mutes = [muteHost(), muteHost(), muteHost()];
    const hosts = mutes.map((mute) => `127.0.0.1:${mute.port}`).join(",");
    const driver = openPostgres({
      url: `postgres://postgres@${hosts},localhost:${PG_PORT}/test`,
      secrets: [],
      wiredReads: true,
    });
    const calls: { said: string; ms: number }[] = [];
    try {
      for (let i = 0; i < 2; i++) calls.push(await timed(driver, 5000));
    } finally {
      await driver.close();
      for (const mute of mutes) mute.close();
    }
    const late = calls.filter((call) => call.ms > 6000);
    assertEquals(late, [], JSON.stringify(calls));
  },
});

Deno.test({
  name:
    "held: several hosts — a silent first host under sslmode=prefer is given up after its 4 s and the second answers in the same call; a 2 s call with a silent first host ends at its timeout",
  ...needs("postgres"),
  sanitizeOps: false,
  sanitizeResources: false,
  async fn() {
    const mute = muteHost();
    const prefer = openPostgres({
      url:
        `postgres://postgres@127.0.0.1:${mute.port},localhost:${PG_PORT}/test?sslmode=prefer`,
      secrets: [],
      wiredReads: true,
    });
    const short = openPostgres({
      url:
        `postgres://postgres@127.0.0.1:${mute.port},localhost:${PG_PORT}/test`,
      secrets: [],
      wiredReads: true,
    });
    try {
      const first = await timed(prefer, 8000);
      assert(first.said.startsWith("answered"), JSON.stringify(first));
      assert(first.ms < 6000, JSON.stringify(first));
      const quick = await timed(short, 2000);
      assert(quick.ms < 3000, JSON.stringify(quick));
    } finally {
      await prefer.close();
      await short.close();
      mute.close();
    }
  },
});

Deno.test({
  name:
    "held: a certificate file refused for its size (over 4 MiB) is read again at once once put right — the next read gets the new text; a file read twice at once is one shared read",
  async fn() {
    const dir = await Deno.makeTempDir({ prefix: "a55_tls_" });
    const file = `${dir}/ca.pem`;
    try {
      await Deno.writeFile(file, new Uint8Array(MAX_FILE_BYTES + 1));
      const big = await readTextWithin(file, 5000).then(
        () => "read",
        (error) => String(error),
      );
      assert(big.includes("more than"), big);
      await Deno.writeTextFile(file, "-----BEGIN CERTIFICATE-----\n");
      const started = performance.now();
      const [a, b] = await Promise.all([
        readTextWithin(file, 5000),
        readTextWithin(file, 5000),
      ]);
      assertEquals(a, "-----BEGIN CERTIFICATE-----\n");
      assertEquals(b, a);
      assert(performance.now() - started < 1000);
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  },
});

Deno.test({
  name:
    "held: an operator class or family naming a function dbport refuses by name as its support function (lo_export, lo_unlink) is refused at its creation",
  ...needs("postgres"),
  async fn() {
    const own = ownSchema("a55", "opf");
    const s = own.schema;
    await own.admin.unsafe(`create schema ${s};
      create operator family ${s}.f using btree;
      create operator family ${s}.g using hash`);
    const { server, write } = await servers("OpFamily");
    try {
      for (
        const query of [
          `alter operator family ${s}.f using btree add function 1 (oid, text) lo_export(oid, text)`,
          `alter operator family ${s}.g using hash add function 1 (oid, oid) lo_unlink(oid)`,
          `create operator class ${s}.c for type oid using hash as operator 1 =, function 1 lo_unlink(oid)`,
        ]
      ) {
        const got = await write(query);
        assert(got.startsWith("ERR denied"), `${query} -> ${got}`);
      }
    } finally {
      await server[Symbol.asyncDispose]();
      await own.drop();
    }
  },
});

Deno.test({
  name:
    "held: a several-host URL whose hosts all refuse — the tool's error names the hosts, never the password (holding '@', ',' and ':')",
  ...needs("postgres"),
  async fn() {
    const password = "Pw@a55,x:y";
    const url = `postgres://postgres:${
      encodeURIComponent(password)
    }@127.0.0.1:1,127.0.0.1:2/test`;
    const { server, read } = await servers("AllDown", url);
    try {
      const got = await read("select 1");
      assert(got.startsWith("ERR "), got);
      assert(got.includes("127.0.0.1"), got);
      for (const secret of [password, "Pw%40a55", "a55,x"]) {
        assert(!got.includes(secret), got);
      }
    } finally {
      await server[Symbol.asyncDispose]();
    }
  },
});

Deno.test({
  name:
    "held: a running server whose connections.json gains a '%' password keeps its healthy connections and takes the next good edit",
  ...needs("postgres"),
  async fn() {
    const healthy = savedConnection(
      { engine: "postgres", url: POSTGRES_URL },
      "Healthy",
      { externalAccess: "readWrite" },
    );
    const server = await serverWith([healthy]);
    const reader = (await server.mint("readOnly")).plaintext;
    const path = inAppDir(server.home, CONNECTIONS_FILE);
    const [saved] = JSON.parse(await Deno.readTextFile(path)).connections;
    const query = async (id: string) =>
      said(
        await callTool(server, "execute_query", {
          connection_id: id,
          query: "select 1 as one",
        }, { authorization: `Bearer ${reader}` }),
      );
    const put = (list: unknown[]) =>
      Deno.writeTextFile(path, JSON.stringify({ connections: list }));
    const later = crypto.randomUUID();
    try {
      await put([saved, {
        ...saved,
        id: crypto.randomUUID(),
        name: "Percent",
        url: "postgres://postgres:50%off@127.0.0.1:5432/test",
      }]);
      await new Promise((resolve) => setTimeout(resolve, 2500));
      assertEquals(await query(healthy.id), "OK [[1]]");
      await put([saved, { ...saved, id: later, name: "Later" }]);
      await new Promise((resolve) => setTimeout(resolve, 2500));
      assertEquals(await query(later), "OK [[1]]");
    } finally {
      await server[Symbol.asyncDispose]();
    }
  },
});

Deno.test({
  name:
    "held: a readWrite token cannot retarget the owner's file_fdw foreign table at a server file — ALTER FOREIGN TABLE … OPTIONS (SET filename 'PG_VERSION') is refused as reach, as CREATE FOREIGN TABLE and pg_read_file are",
  ...needs("postgres"),
  async fn() {
    // What it does: the owner's database holds a file_fdw foreign table
    // (server and table made by the admin, reading /dev/null). A readWrite
    // token sends `alter foreign table s.ft options (set filename
    // 'PG_VERSION')`, then `select * from s.ft`.
    // What happens: `OK []`, then `OK [["15"]]` — the server file's text.
    // pg_reach.ts REACH_STATEMENTS names CreateForeignTableStmt and
    // CreateForeignServerStmt, not ALTER FOREIGN TABLE's AT_GenericOptions
    // (an AlterTableStmt) nor AlterForeignServerStmt; reading a foreign
    // table is only "a write" for the token.
    const own = ownSchema("a55", "fdw");
    const s = own.schema;
    await own.admin.unsafe(`create schema ${s};
      create server ${s}_srv foreign data wrapper file_fdw;
      create foreign table ${s}.ft (line text) server ${s}_srv options (filename '/dev/null')`);
    const { server, write } = await servers("FileFdw");
    try {
      assert(
        (await write(`select pg_read_file('PG_VERSION')`)).startsWith(
          "ERR denied",
        ),
      );
      const altered = await write(
        `alter foreign table ${s}.ft options (set filename 'PG_VERSION')`,
      );
      const read = await write(`select * from ${s}.ft`);
      assert(
        altered.startsWith("ERR denied"),
        `alter answered ${altered}; then the select answered ${read}`,
      );
    } finally {
      await server[Symbol.asyncDispose]();
      await own.admin.unsafe(`drop server if exists ${s}_srv cascade`);
      await own.drop();
    }
  },
});

Deno.test({
  name:
    "held: a readWrite token cannot run a SQL function reading a server file as a foreign-data wrapper's validator — ALTER FOREIGN DATA WRAPPER w VALIDATOR s.v OPTIONS (ADD c 'd') is refused as reach (s.v never runs), as CREATE FOREIGN DATA WRAPPER is",
  ...needs("postgres"),
  async fn() {
    // What it does: the admin made a foreign-data wrapper `<s>_w` (no
    // validator). A readWrite token creates `s.v(text[], oid)`, a LANGUAGE
    // sql function casting pg_read_file('PG_VERSION') to integer, then
    // sends `alter foreign data wrapper <s>_w validator s.v options (add c
    // 'd')`. What happens: `ERR query_failed: invalid input syntax for type
    // integer: "a55 15\n"` — the validator ran. AlterFdwStmt is neither in
    // REACH_STATEMENTS nor read for the functions it names (pg_parse.ts
    // collectCalls: `func_options` HANDLER/VALIDATOR).
    const own = ownSchema("a55", "val");
    const s = own.schema;
    await own.admin.unsafe(`create schema ${s};
      create foreign data wrapper ${s}_w`);
    const { server, write } = await servers("FdwValidator");
    try {
      assertEquals(
        await write(
          `create function ${s}.v(text[], oid) returns void language sql as $b$ select ('a55 ' || pg_read_file('PG_VERSION'))::integer $b$`,
        ),
        "OK []",
      );
      const got = await write(
        `alter foreign data wrapper ${s}_w validator ${s}.v options (add c 'd')`,
      );
      assert(got.startsWith("ERR denied"), got);
    } finally {
      await server[Symbol.asyncDispose]();
      await own.admin.unsafe(
        `drop foreign data wrapper if exists ${s}_w cascade`,
      );
      await own.drop();
    }
  },
});

Deno.test({
  name:
    "held: a readWrite token cannot hand a role superuser through membership — GRANT <the superuser login> TO r and CREATE ROLE r IN ROLE <it> are refused (dbport leaves role membership to the server's administrator), as CREATE ROLE … SUPERUSER and GRANT pg_read_server_files are",
  ...needs("postgres"),
  async fn() {
    // What it does: a readWrite token on the superuser test login sends
    // `create role <r> login`, `grant postgres to <r>`, and `create role
    // <r2> in role postgres`. Then <r> logs in (trust here), `set role
    // postgres` and reads pg_authid.
    // What happens: every statement `OK []`; <r> reads pg_authid's
    // rolpassword. pg_reach.ts grantsPower refuses `pg_` names and power
    // attributes only; a role with rolsuper (or a member of pg_ roles) is
    // granted by its own name.
    const own = ownSchema("a55", "su");
    const r = `${own.schema}_r`;
    const r2 = `${own.schema}_r2`;
    const superuser = new URL(POSTGRES_URL).username || "postgres";
    const { server, write } = await servers("SuperMember");
    let viaMember = "";
    try {
      assert(
        (await write(`create role ${r}x superuser`)).startsWith("ERR denied"),
      );
      const answers = [
        await write(`create role ${r} login`),
        await write(`grant ${superuser} to ${r}`),
        await write(`create role ${r2} in role ${superuser}`),
      ];
      if (answers[1] === "OK []") {
        const url = new URL(POSTGRES_URL);
        url.username = r;
        const as = postgres(url.toString(), { max: 1, onnotice: () => {} });
        try {
          const rows = await as.unsafe(
            `set role ${superuser}; select count(rolpassword) >= 0 as read from pg_authid`,
          );
          viaMember = JSON.stringify(rows);
        } catch (error) {
          viaMember = String(error);
        } finally {
          await as.end();
        }
      }
      assertEquals(
        answers.slice(1).filter((got) => !got.startsWith("ERR denied")),
        [],
        `then ${r} after SET ROLE read pg_authid: ${viaMember}`,
      );
    } finally {
      await server[Symbol.asyncDispose]();
      for (const role of [r, r2, `${r}x`]) {
        await own.admin.unsafe(`drop role if exists ${role}`).catch(() => {});
      }
      await own.drop();
    }
  },
});

/** A database of the test's own (a catalog change stays in it), dropped at the end. */
async function ownDatabase(tag: string) {
  const name = `a55_${tag}_${crypto.randomUUID().slice(0, 6)}`;
  const admin = postgres(POSTGRES_URL, { max: 1, onnotice: () => {} });
  await admin.unsafe(`create database ${name}`);
  const url = new URL(POSTGRES_URL);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    async drop() {
      await admin.unsafe(`drop database if exists ${name} with (force)`);
      await admin.end();
    },
  };
}

Deno.test({
  name:
    "held: a readWrite token cannot rename pg_read_file through a LANGUAGE sql function's body (`alter function pg_catalog.pg_read_file(text) rename to a55_alias`) nor read files as `a55_alias('PG_VERSION')` — a statement changing a catalog object is reach in a body too, and a built-in is judged by its C symbol, which no rename changes",
  ...needs("postgres"),
  async fn() {
    // What it does (in a database of its own: the rename stays there), a
    // readWrite token on the superuser login:
    //   alter function pg_catalog.pg_read_file(text) rename to a55_alias
    //     → denied (pg_read_file() reaches files) — sent itself
    //   create function public.a55_x() returns void language sql as
    //     $b$ alter function pg_catalog.pg_read_file(text) rename to a55_alias $b$
    //   select public.a55_x()             → OK [[null]]
    //   select a55_alias('PG_VERSION')     → OK [["15\n"]]
    // The top-level refusal is by the words of the statement's text; a
    // body's statements are judged by their parse only (pg_vet.ts
    // judgeFunction → parseBody → analyze), where ALTER FUNCTION … RENAME
    // names no call; and a built-in off the allowlist is judged by its
    // current name (pg_vet.ts judgeFunction: deniedFunction(row.name)),
    // so the renamed pg_read_file is only "not on the allowlist": a write.
    const own = await ownDatabase("ren");
    const { server, write } = await servers("Rename", own.url);
    try {
      assert(
        (await write(
          `alter function pg_catalog.pg_read_file(text) rename to a55_alias`,
        )).startsWith("ERR denied"),
      );
      const steps = [
        await write(
          `create function public.a55_x() returns void language sql as $b$ alter function pg_catalog.pg_read_file(text) rename to a55_alias $b$`,
        ),
        await write(`select public.a55_x()`),
        await write(`select a55_alias('PG_VERSION')`),
      ];
      assert(
        !steps[2]!.startsWith("OK"),
        `the steps answered ${JSON.stringify(steps)}`,
      );
    } finally {
      await server[Symbol.asyncDispose]();
      await own.drop();
    }
  },
});

Deno.test({
  name:
    "held: (no false positive) CREATE FUNCTION … BEGIN ATOMIC … END (a SQL-standard body, PostgreSQL 14+) is one statement, created and called; a BEGIN ATOMIC body calling pg_read_file is refused at its creation and at its call, and a statement after its END still counts",
  ...needs("postgres"),
  async fn() {
    const own = ownSchema("a55", "atomic");
    const s = own.schema;
    await own.admin.unsafe(`create schema ${s}`);
    const { server, write, read } = await servers("Atomic");
    try {
      const got = await write(
        `create function ${s}.one() returns int language sql begin atomic; select 1; end`,
      );
      assertEquals(got, "OK []");
      assertEquals(
        await write(
          `create procedure ${s}.two(x int) language sql begin atomic select case when x > 0 then 1 else 2 end; select 3; end;`,
        ),
        "OK []",
      );
      assertEquals(await read(`select ${s}.one()`), "OK [[1]]");
      // Its body is vetted as any SQL: at its creation, and where it is
      // called (the server's stored body, prosqlbody).
      const file = await write(
        `create function ${s}.rd() returns text language sql begin atomic select pg_read_file('PG_VERSION'); end`,
      );
      assert(file.startsWith("ERR denied"), file);
      await own.admin.unsafe(
        `create function ${s}.rd_admin() returns text language sql begin atomic select pg_read_file('PG_VERSION'); end`,
      );
      for (const called of [read, write]) {
        const answer = await called(`select ${s}.rd_admin()`);
        assert(answer.startsWith("ERR denied"), answer);
        assert(answer.includes("pg_read_file"), answer);
      }
      // A statement after the body's END is a second statement.
      const after = await write(
        `create function ${s}.three() returns int language sql begin atomic select 3; end; select pg_read_file('PG_VERSION')`,
      );
      assert(after.startsWith("ERR"), after);
    } finally {
      await server[Symbol.asyncDispose]();
      await own.drop();
    }
  },
});
