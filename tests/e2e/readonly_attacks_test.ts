/**
 * What got past the lexer before the engine's own parser, catalog and
 * session resets became the boundary: each attack from the read-only issue,
 * sent through `execute_query` on the real engine it names, with the proof
 * that it had no effect (no file read or written, no lock held, no session
 * killed, no row changed).
 */

import { assert, assertEquals } from "@std/assert";
import { savedConnection, serverWith } from "../_connections.ts";
import { type Fixture, needs, openFixture } from "../_db.ts";
import {
  exists,
  modernRequest,
  postModern,
  type TestServer,
} from "../_server.ts";
import type { SavedConnection } from "../../lib/app/connections.ts";

interface Outcome {
  status: number;
  isError: boolean;
  text: string;
  error: { code: number; message: string } | undefined;
  structured: Record<string, unknown> | undefined;
}

async function call(
  server: TestServer,
  token: string,
  connection: SavedConnection,
  query: string,
  extra: Record<string, unknown> = {},
): Promise<Outcome> {
  const answer = await postModern(
    server.url,
    modernRequest("tools/call", {
      name: "execute_query",
      arguments: { connection_id: connection.id, query, ...extra },
    }, crypto.randomUUID()),
    { authorization: `Bearer ${token}` },
  );
  const result = answer.json.result;
  return {
    status: answer.status,
    isError: result?.isError === true,
    text: result?.content?.[0]?.text ?? "",
    error: answer.json.error,
    structured: result?.structuredContent,
  };
}

/** A refusal before the statement ran: a tool error or a protocol error. */
function refused(outcome: Outcome, why: RegExp, sql: string): void {
  const said = outcome.error?.message ?? outcome.text;
  assert(
    outcome.error !== undefined || outcome.isError,
    `${JSON.stringify(sql)} ran: ${JSON.stringify(outcome.structured)}`,
  );
  assert(why.test(said), `${JSON.stringify(sql)}: ${said}`);
}

/** Two servers' worth of tokens on one fixture: readOnly, and readWrite + silent. */
async function setUp(fixture: Fixture) {
  const url = fixture.engine === "postgres"
    ? `${fixture.url}?search_path=${fixture.schema}`
    : fixture.url;
  const fenced = savedConnection({ engine: fixture.engine, url }, "Fenced", {
    externalAccess: "readOnly",
    safeMode: "silent",
  });
  const open = savedConnection({ engine: fixture.engine, url }, "Open", {
    externalAccess: "readWrite",
    safeMode: "silent",
  });
  const server = await serverWith([fenced, open], { hostDialog: "deny" });
  const reader = (await server.mint("readOnly")).plaintext;
  const writer = (await server.mint("readWrite")).plaintext;
  return { server, fenced, open, reader, writer };
}

Deno.test(
  "postgres: comment, dollar-tag and function tricks read no file, hold no lock and kill no session",
  needs("postgres"),
  async () => {
    await using fixture = await openFixture("postgres");
    const { server, fenced, open, reader, writer } = await setUp(fixture);
    await using _ = server;
    const pid = (await fixture.admin("select pg_backend_pid() as pid") as {
      pid: number;
    }[])[0]!.pid;
    const reads = [
      "SELECT --\r pg_read_file('/etc/hostname') AS leaked\n, 1 AS one",
      "SELECT --\r pg_ls_dir('/') AS leaked\n, 1 AS one",
      "SELECT --\r pg_advisory_lock(4242) AS locked\n, 1 AS one",
      `SELECT --\r pg_terminate_backend(${pid}) AS killed\n, 1 AS one`,
      "SELECT --\r dblink_exec('dbname=test', 'INSERT INTO authors(name) VALUES (1)')\n, 1",
      "SELECT $é$'$é$ AS a, pg_read_file($q$/etc/hostname$q$) AS b --'",
      "SELECT $ü_1$'$ü_1$ AS a, pg_ls_dir($q$/$q$) AS b --'",
      "SELECT ts_rewrite('a'::tsquery, 'SELECT pg_read_file(''/etc/hostname'')::tsquery, ''b''::tsquery')",
      "SELECT * FROM pg_hba_file_rules",
      "SELECT * FROM pg_catalog.pg_file_settings",
      'SELECT * FROM "pg_ident_file_mappings"',
      "SELECT lo_import('/etc/hostname')",
      "SELECT query_to_xml('select 1', true, true, '')",
      "SELECT * FROM dblink('dbname=test', 'select 1') AS t(x int)",
      // Comment terminators of other kinds: \r\n, \f and \v are not line ends.
      "SELECT --\r\n pg_read_file('/etc/hostname')",
    ];
    for (const sql of reads) {
      const outcome = await call(server, reader, fenced, sql);
      refused(outcome, /denied|tools:write|scope/i, sql);
    }
    // Nested comments are comments: what they hold never runs, and the rest does.
    const nested = await call(
      server,
      reader,
      fenced,
      "SELECT /* a /* nested */ pg_read_file('/etc/hostname') */ 1 AS one",
    );
    assertEquals(nested.structured?.rows, [[1]]);
    const locks = await fixture.admin(
      "select count(*)::int as n from pg_locks where locktype = 'advisory'",
    ) as { n: number }[];
    assertEquals(locks[0]!.n, 0, "an advisory lock is held");
    const alive = await fixture.admin(
      `select count(*)::int as n from pg_stat_activity where pid = ${pid}`,
    ) as { n: number }[];
    assertEquals(alive[0]!.n, 1, "the admin session was killed");

    // readWrite + silent: a hidden DROP COLUMN, an extension, a hidden no-WHERE.
    const columns = async () =>
      (await fixture.admin(
        `select count(*)::int as n from information_schema.columns where table_schema = '${fixture.schema}' and table_name = 'books'`,
      ) as { n: number }[])[0]!.n;
    const before = await columns();
    refused(
      await call(
        server,
        writer,
        open,
        "ALTER TABLE books --\r DROP COLUMN price\n, ADD COLUMN x int",
      ),
      /confirm_destructive_operation|drops/,
      "ALTER … DROP",
    );
    assertEquals(await columns(), before);
    refused(
      await call(server, writer, open, "CREATE --\r EXTENSION dblink"),
      /denied: .*(installs code|reaches)/,
      "CREATE EXTENSION",
    );
    refused(
      await call(
        server,
        writer,
        open,
        "DELETE FROM authors RETURNING $é$ WHERE $é$",
      ),
      /denied|declined|approv/i,
      "DELETE … $é$",
    );
    const authors = await fixture.admin(
      "select count(*)::int as n from authors",
    ) as {
      n: number;
    }[];
    assertEquals(authors[0]!.n, 2, "rows were deleted without approval");

    // A volatile plpgsql function made by a writer, called by a reader.
    const marker = `/tmp/dbport-attack-${crypto.randomUUID()}`;
    await fixture.admin(
      `create function ${fixture.schema}.shell() returns int language plpgsql as $f$
       begin execute 'COPY (SELECT 1) TO PROGRAM ''touch ${marker}'''; return 1; end $f$`,
    );
    await fixture.admin(
      `create function ${fixture.schema}.quiet_shell() returns int language plpgsql stable as $f$
       begin execute 'COPY (SELECT 1) TO PROGRAM ''touch ${marker}'''; return 1; end $f$`,
    );
    await fixture.admin(
      `create view ${fixture.schema}.innocent as select ${fixture.schema}.shell() as x`,
    );
    for (
      const sql of [
        "SELECT shell()",
        "SELECT quiet_shell()",
        "SELECT * FROM innocent",
      ]
    ) {
      refused(
        await call(server, reader, fenced, sql),
        /denied|tools:write|scope/i,
        sql,
      );
    }
    assertEquals(await exists(marker), false, "a shell command ran");

    // A syntax error is the parser's answer, never a question to the user.
    const typo = await call(
      server,
      writer,
      open,
      "UPDATE authors SET name = 'x' WHERE",
    );
    assert(
      typo.isError && /^query_failed: syntax error/.test(typo.text),
      typo.text,
    );

    // Session state a write leaves is reset before the session is reused.
    const locked = await call(
      server,
      writer,
      open,
      "SELECT pg_advisory_lock(4343)",
    );
    assert(!locked.isError, locked.text);
    const held = await fixture.admin(
      "select count(*)::int as n from pg_locks where locktype = 'advisory'",
    ) as { n: number }[];
    assertEquals(held[0]!.n, 0, "the advisory lock outlived the request");
  },
);

Deno.test(
  "mysql: control-character comments and file functions write no file and change no row",
  needs("mysql"),
  async () => {
    await using fixture = await openFixture("mysql");
    const { server, fenced, open, reader, writer } = await setUp(fixture);
    await using _ = server;
    const outfile = `/tmp/dbport-attack-${crypto.randomUUID()}`;
    const reads = [
      `SELECT 'x' AS a --\u0001 '\nINTO OUTFILE '${outfile}' -- '`,
      `SELECT 'x' AS a --\u0007 '\nINTO DUMPFILE '${outfile}' -- '`,
      `SELECT 'x' AS a --\u007f '\n, LOAD_FILE('/etc/hostname') -- '`,
      "SELECT LOAD_FILE('/etc/hostname')",
      "SELECT `load_file`('/etc/hostname')",
      "SELECT GET_LOCK('dbport-attack', 0)",
      "SELECT BENCHMARK(10000000000, MD5('a'))",
      `SELECT 1 /*! , LOAD_FILE('/etc/hostname') */`,
    ];
    for (const sql of reads) {
      refused(
        await call(server, reader, fenced, sql),
        /denied|tools:write|scope/i,
        sql,
      );
    }
    assertEquals(
      await exists(outfile),
      false,
      "a file was written on the database host",
    );
    refused(
      await call(
        server,
        writer,
        open,
        "DELETE FROM authors --\u0001 WHERE id = 1",
      ),
      /denied|declined|approv/i,
      "DELETE --\\u0001",
    );
    const [row] = await fixture.admin("select count(*) as n from authors") as {
      n: number;
    }[];
    assertEquals(Number(row!.n), 2, "rows were deleted without approval");

    // User variables set by one request never reach the next.
    const set = await call(
      server,
      reader,
      fenced,
      "SELECT @dbport_a := 42 AS a",
    );
    assert(!set.isError, set.text);
    for (let i = 0; i < 6; i++) {
      const read = await call(server, writer, fenced, "SELECT @dbport_a AS a");
      assertEquals((read.structured?.rows as unknown[][])[0], [null]);
    }
  },
);

Deno.test(
  "sqlite: a Tcl-style variable cannot hide the missing WHERE of a DELETE",
  needs("sqlite"),
  async () => {
    await using fixture = await openFixture("sqlite");
    const { server, open, writer } = await setUp(fixture);
    await using _ = server;
    for (
      const sql of [
        "DELETE FROM authors RETURNING @a(')') WHERE 1 ' /* '",
        "DELETE FROM authors RETURNING $a(')') WHERE 1 ' /* '",
        "DELETE FROM authors RETURNING :a::b(')') WHERE 1 ' /* '",
      ]
    ) {
      refused(
        await call(server, writer, open, sql),
        /denied|declined|approv/i,
        sql,
      );
    }
    const [row] = await fixture.admin("select count(*) as n from authors") as {
      n: number;
    }[];
    assertEquals(Number(row!.n), 2, "rows were deleted without approval");
  },
);

const HUGE: Record<Fixture["engine"], string> = {
  postgres: "SELECT repeat('x', 1000000) AS big FROM generate_series(1, 300)",
  mysql: "SELECT REPEAT('x', 1000000) AS big FROM seq_1_to_300",
  sqlite:
    "WITH RECURSIVE g(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM g WHERE n < 300) SELECT hex(zeroblob(500000)) AS big FROM g",
};

for (const engine of ["postgres", "mysql", "sqlite"] as const) {
  Deno.test(
    `${engine}: 300 rows of 1 MB answer truncated with the reason, and the server stays up`,
    needs(engine),
    async () => {
      await using fixture = await openFixture(engine);
      const { server, fenced, reader } = await setUp(fixture);
      await using _ = server;
      const outcome = await call(server, reader, fenced, HUGE[engine]);
      assert(!outcome.isError, outcome.text);
      const result = outcome.structured!;
      assertEquals(result.is_truncated, true);
      const truncation = result.truncation as {
        reasons: string[];
        cut_cells: number;
        message: string;
      };
      assertEquals(truncation.reasons, ["bytes", "cells"]);
      assert(truncation.cut_cells > 0);
      const rows = result.rows as string[][];
      assert(rows.length >= 1 && rows.length < 300, `${rows.length} rows`);
      assert(/…\[cut: [0-9,]+ more characters\]$/.test(rows[0]![0]!));
      assert(JSON.stringify(result).length < 1_100_000);
      // Still serving.
      const next = await call(server, reader, fenced, "SELECT 1 AS one");
      assertEquals(next.structured?.rows, [[1]]);
    },
  );
}

for (const engine of ["mysql", "sqlite"] as const) {
  Deno.test(
    `${engine}: a write with a syntax error is the engine's error, and nobody is asked`,
    needs(engine),
    async () => {
      await using fixture = await openFixture(engine);
      const url = fixture.url;
      const open = savedConnection({ engine, url }, "Open", {
        externalAccess: "readWrite",
        safeMode: "alert",
      });
      // The host dialog would deny: a question reaching it would say "denied".
      await using server = await serverWith([open], { hostDialog: "deny" });
      const writer = (await server.mint("readWrite")).plaintext;
      for (
        const sql of [
          "UPDATE authors SET name = 'x' WHERE",
          "INSERT INTO no_such_table VALUES (1)",
        ]
      ) {
        const outcome = await call(server, writer, open, sql);
        assert(
          outcome.isError &&
            /^query_failed: .*the statement was not run/.test(outcome.text),
          `${sql}: ${outcome.text}`,
        );
      }
    },
  );
}

Deno.test(
  "mysql: a stored function a writer made is a write for a reader, whatever it does",
  needs("mysql"),
  async () => {
    await using fixture = await openFixture("mysql");
    const { server, fenced, reader } = await setUp(fixture);
    await using _ = server;
    await fixture.admin(
      "create function peek() returns text sql security definer return load_file('/etc/hostname')",
    );
    const outcome = await call(
      server,
      reader,
      fenced,
      "SELECT peek() AS leaked",
    );
    refused(outcome, /tools:write|scope/i, "SELECT peek()");
    // Built-ins alone cost no look-up and still read.
    const plain = await call(
      server,
      reader,
      fenced,
      "SELECT COUNT(*), MAX(id) FROM authors",
    );
    assertEquals(plain.structured?.rows, [["2", 2]]);
  },
);

Deno.test(
  "postgres: a SECURITY DEFINER function is a write for a reader, however harmless it says it is",
  needs("postgres"),
  async () => {
    await using fixture = await openFixture("postgres");
    const { server, fenced, reader } = await setUp(fixture);
    await using _ = server;
    await fixture.admin(
      `create function ${fixture.schema}.inner_read() returns text language sql stable as $f$ select pg_read_file('/etc/hostname') $f$`,
    );
    await fixture.admin(
      `create function ${fixture.schema}.outer_read() returns text language sql stable security definer as $f$ select ${fixture.schema}.inner_read() $f$`,
    );
    for (const sql of ["SELECT outer_read()", "SELECT inner_read()"]) {
      refused(
        await call(server, reader, fenced, sql),
        /denied|tools:write|scope/i,
        sql,
      );
    }
  },
);
