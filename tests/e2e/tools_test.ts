/**
 * The read-path tools over HTTP, against real PostgreSQL, MariaDB and a SQLite
 * file: exact result shapes, each validated against the tool's outputSchema
 * and the 2026-07-28 CallToolResult schema, the policy matrix, progress, and
 * the argument rules.
 */

import { assert, assertEquals } from "@std/assert";
import type { SavedConnection } from "../../lib/app/connections.ts";
import { saveConnections } from "../../lib/app/connections.ts";
import { inAppDir } from "../../lib/app/paths.ts";
import { CONNECTIONS_FILE } from "../../lib/base/identity.ts";
import type { JsonObject } from "../../lib/protocol/jsonrpc.ts";
import { parseSseEvents } from "../../lib/protocol/sse.ts";
import { savedConnection, serverWith } from "../_connections.ts";
import { ENGINES, needs, openFixture, POSTGRES_URL } from "../_db.ts";
import { callTool, toolErrorText } from "../_tool_call.ts";
import { waitUntil } from "../_wait.ts";

const call = callTool;

for (const engine of ENGINES) {
  Deno.test(
    `${engine}: every read tool answers with its exact shape`,
    needs(engine),
    async () => {
      await using fixture = await openFixture(engine);
      const saved = savedConnection(fixture, `Fixture ${engine}`);
      await using server = await serverWith([saved]);
      const args = { connection_id: saved.id };

      const listed = await call(server, "list_connections", {});
      const [entry] = listed.json.result.structuredContent.connections;
      assertEquals(entry.id, saved.id);
      assertEquals(
        entry.type,
        { postgres: "PostgreSQL", mysql: "MySQL", sqlite: "SQLite" }[engine],
      );
      assertEquals(entry.is_connected, false);
      assert(
        !JSON.stringify(entry).includes("root") &&
          !JSON.stringify(entry).includes("postgres@"),
      );

      const tables = await call(server, "list_tables", {
        ...args,
        schema: fixture.schema,
        include_row_counts: true,
      });
      const content = tables.json.result.structuredContent;
      assertEquals(content.tables.map((t: { name: string }) => t.name), [
        "authors",
        "book_titles",
        "books",
        "kinds",
      ]);
      assertEquals(content.row_counts_included, true);
      assertEquals(content.row_counts_are_approximate, engine !== "sqlite");

      const described = await call(server, "describe_table", {
        ...args,
        table: "authors",
        schema: fixture.schema,
      });
      const authors = described.json.result.structuredContent;
      assertEquals(authors.table, "authors");
      assertEquals(authors.columns.map((c: { name: string }) => c.name), [
        "id",
        "name",
        "born",
      ]);
      assertEquals(authors.columns[1].is_nullable, false);

      const missing = await call(server, "describe_table", {
        ...args,
        table: "nope",
      });
      assert(toolErrorText(missing).startsWith("not_found: "));

      const table = engine === "postgres"
        ? `${fixture.schema}.authors`
        : "authors";
      const query = await call(server, "execute_query", {
        ...args,
        query: `select id, name from ${table} order by id;`,
        max_rows: 1,
      });
      const result = query.json.result.structuredContent;
      assertEquals(
        { ...result, execution_time_ms: 0 },
        {
          columns: ["id", "name"],
          rows: [[1, "Ada"]],
          row_count: 1,
          rows_affected: 0,
          execution_time_ms: 0,
          is_truncated: true,
          truncation: {
            reasons: ["max_rows"],
            cut_cells: 0,
            rows_returned: 1,
            total_rows: 2,
            has_more: true,
            message:
              "Returned 1 of 2 rows (cut at max_rows 1). To get the rest: narrow the query (WHERE, fewer columns, LIMIT … OFFSET 1); or raise max_rows (at most 10000; the answer budget still applies); or export_query to write every row to a file.",
          },
        },
      );
      const again = await call(server, "list_connections", {});
      assertEquals(
        again.json.result.structuredContent.connections[0].is_connected,
        true,
      );

      // The default test token reads only: a write is refused by scope.
      const write = await call(server, "execute_query", {
        ...args,
        query: `insert into ${table} (name) values ('x')`,
      });
      assertEquals([write.status, write.json.error.code], [403, -33007]);
      assertEquals(write.json.error.data.requiredScopes, ["tools:write"]);
      const bad = await call(server, "execute_query", {
        ...args,
        query: "select nope from nowhere",
      });
      const text = toolErrorText(bad);
      assert(text.startsWith("query_failed: "), text);
    },
  );

  Deno.test(
    `${engine}: a statement timeout finishes the request with -33003`,
    needs(engine),
    async () => {
      await using fixture = await openFixture(engine);
      const saved = savedConnection(fixture, "Slow");
      await using server = await serverWith([saved]);
      const query = {
        postgres:
          "with recursive c(x) as (select 1 union all select x + 1 from c where x < 2000000000) select count(*) from c",
        mysql: "select sleep(20)",
        sqlite:
          "with recursive c(x) as (select 1 union all select x + 1 from c where x < 2000000000) select count(*) from c",
      }[engine];
      const answer = await call(server, "execute_query", {
        connection_id: saved.id,
        query,
        timeout_seconds: 1,
      });
      assertEquals(answer.status, 200);
      assertEquals(answer.json.error.code, -33003);
      assert(
        answer.json.error.message.includes("1 s"),
        answer.json.error.message,
      );
    },
  );
}

Deno.test("execute_query with a progressToken streams 0, 0.3 and 1 before the result", async () => {
  await using fixture = await openFixture("sqlite");
  const saved = savedConnection(fixture, "Progress");
  await using server = await serverWith([saved]);
  const answer = await call(server, "execute_query", {
    connection_id: saved.id,
    query: "select 1 as one",
  }, { meta: { progressToken: "p1" } });
  const frames = parseSseEvents(answer.text).events.map((data) =>
    JSON.parse(data)
  );
  assertEquals(
    frames.slice(0, 3).map((
      f,
    ) => [f.method, f.params.progress, f.params.total]),
    [
      ["notifications/progress", 0, 1],
      ["notifications/progress", 0.3, 1],
      ["notifications/progress", 1, 1],
    ],
  );
  assert(frames.slice(0, 3).every((f) => typeof f.params.message === "string"));
  assertEquals(frames[3].result.structuredContent.rows, [[1]]);
  assertEquals(frames.length, 4);
});

Deno.test("the policy matrix: external access × AI policy × allowlist", async () => {
  await using fixture = await openFixture("sqlite");
  const policies: [Partial<SavedConnection>, "listed" | "denied" | "hidden"][] =
    [
      [{ externalAccess: "readOnly", aiPolicy: "alwaysAllow" }, "listed"],
      [{ externalAccess: "readWrite", aiPolicy: "alwaysAllow" }, "listed"],
      [{ externalAccess: "readOnly", aiPolicy: "askEachTime" }, "denied"],
      [{ externalAccess: "readWrite", aiPolicy: "askEachTime" }, "denied"],
      [{ externalAccess: "blocked", aiPolicy: "alwaysAllow" }, "hidden"],
      [{ externalAccess: "blocked", aiPolicy: "askEachTime" }, "hidden"],
      [{ externalAccess: "readOnly", aiPolicy: "never" }, "hidden"],
      [{ externalAccess: "readWrite", aiPolicy: "never" }, "hidden"],
    ];
  const saved = policies.map(([policy], i) =>
    savedConnection(fixture, `C${i}`, policy)
  );
  // askEachTime asks the host dialog, which refuses here.
  await using server = await serverWith(saved, { hostDialog: "deny" });
  // A token allowlisted for every other connection: the rest are hidden too.
  const allowed = saved.filter((_, i) => i % 2 === 0).map((c) => c.id);
  const limited = await server.mint("readOnly", { connections: allowed });
  for (
    const [who, authorization] of [["all", undefined], [
      "allowlist",
      `Bearer ${limited.plaintext}`,
    ]] as const
  ) {
    const listed = await call(
      server,
      "list_connections",
      {},
      authorization ? { authorization } : {},
    );
    const names = listed.json.result.structuredContent.connections.map((
      c: { name: string },
    ) => c.name);
    for (const [i, [, outcome]] of policies.entries()) {
      const excluded = who === "allowlist" && i % 2 === 1;
      const expected = excluded ? "hidden" : outcome;
      assertEquals(
        names.includes(`C${i}`),
        expected !== "hidden",
        `${who} C${i} listing`,
      );
      const answer = await call(server, "list_tables", {
        connection_id: saved[i]!.id,
      }, authorization ? { authorization } : {});
      if (expected === "hidden") {
        assertEquals(
          [answer.status, answer.json.error?.code],
          [403, -33007],
          `${who} C${i}`,
        );
        assertEquals(answer.json.error.data.connectionId, saved[i]!.id);
      } else if (expected === "denied") {
        assert(
          toolErrorText(answer).startsWith(
            'denied: listing its tables on "C',
          ),
        );
      } else {
        assertEquals(answer.json.result.isError, undefined, `${who} C${i}`);
      }
    }
  }
});

Deno.test("tool arguments: unknown, missing and mistyped are -32602; values out of range are invalid_argument", async () => {
  await using fixture = await openFixture("sqlite");
  const saved = savedConnection(fixture, "Args");
  await using server = await serverWith([saved], {
    maxRowLimit: 100,
    defaultRowLimit: 50,
  });
  const id = saved.id;
  const protocol: [string, JsonObject, string][] = [
    ["list_connections", { connection_id: id }, '"connection_id"'],
    [
      "execute_query",
      { connection_id: id, query: "select 1", dry_run: true },
      '"dry_run"',
    ],
    ["execute_query", { connection_id: id }, '"query" is required'],
    [
      "execute_query",
      { connection_id: id, query: 1 },
      '"query" must be a string',
    ],
    [
      "list_tables",
      { connection_id: id, include_row_counts: "true" },
      '"include_row_counts" must be true or false',
    ],
    [
      "execute_query",
      { connection_id: id, query: "select 1", max_rows: 1.5 },
      '"max_rows" must be an integer',
    ],
  ];
  for (const [name, args, mention] of protocol) {
    const answer = await call(server, name, args);
    assertEquals([answer.status, answer.json.error?.code], [400, -32602], name);
    assert(
      answer.json.error.message.includes(mention),
      answer.json.error.message,
    );
  }
  const values: [JsonObject, string][] = [
    [
      { connection_id: "", query: "select 1" },
      "invalid_argument: connection_id",
    ],
    [
      // A name now: no connection has it.
      { connection_id: "not-a-uuid", query: "select 1" },
      "not_found: no connection you can use",
    ],
    [
      { connection_id: id, query: "   " },
      "invalid_argument: query must not be blank",
    ],
    [
      { connection_id: id, query: "select 1", max_rows: 101 },
      "invalid_argument: max_rows must be from 1 to 100",
    ],
    [
      { connection_id: id, query: "select 1", max_rows: 0 },
      "invalid_argument: max_rows",
    ],
    [
      { connection_id: id, query: "select 1", timeout_seconds: 301 },
      "invalid_argument: timeout_seconds must be from 1 to 300",
    ],
    [
      { connection_id: id, query: "select " + "1".repeat(102_400) },
      "invalid_argument: query is",
    ],
    [
      { connection_id: id, query: "select 1; select 2" },
      "invalid_argument: query holds 2 statements",
    ],
    [{ connection_id: crypto.randomUUID(), query: "select 1" }, "not_found: "],
  ];
  for (const [args, start] of values) {
    const text = toolErrorText(await call(server, "execute_query", args));
    assert(
      text.startsWith(start),
      `${text.slice(0, 120)} should start with ${start}`,
    );
  }
});

Deno.test("an unreachable database is not_connected, redacted", async () => {
  const saved = savedConnection(
    {
      engine: "postgres",
      url: "postgres://carol:pa55word@127.0.0.1:1/private_db",
    },
    "Down",
  );
  await using server = await serverWith([saved]);
  const text = toolErrorText(
    await call(server, "list_tables", { connection_id: saved.id }),
  );
  assert(text.startsWith('not_connected: cannot reach "Down"'), text);
  for (const secret of ["carol", "pa55word"]) {
    assert(!text.includes(secret), text);
  }
  // What list_connections shows the client (host, port) stays; the message
  // ends with what the user can do.
  assert(text.includes("127.0.0.1:1"), text);
  assert(
    text.endsWith(
      'ask the user to run `deno task dbport connections test "Down"`, which says what to fix',
    ),
    text,
  );
});

Deno.test({
  name:
    "postgres: a database that does not exist is named to the client that was given it, its password is not",
  ...needs("postgres"),
  async fn() {
    const url = new URL(POSTGRES_URL);
    url.password = "s3cret-pass";
    url.pathname = `/dbport_no_such_${crypto.randomUUID().slice(0, 8)}`;
    const saved = savedConnection(
      { engine: "postgres", url: url.toString() },
      "Shop",
    );
    await using server = await serverWith([saved]);
    const text = toolErrorText(
      await call(server, "list_tables", { connection_id: saved.id }),
    );
    assert(text.startsWith('not_connected: cannot reach "Shop"'), text);
    assert(
      text.includes(`database "${url.pathname.slice(1)}" does not exist`),
      text,
    );
    assert(!text.includes("s3cret-pass"), text);
    assert(text.includes('connections test "Shop"'), text);
  },
});

Deno.test("the server reloads connections.json within a second; a malformed file keeps the old list", async () => {
  await using fixture = await openFixture("sqlite");
  const first = savedConnection(fixture, "First");
  await using server = await serverWith([first]);
  const path = inAppDir(server.home, CONNECTIONS_FILE);
  const names = async () =>
    (await call(server, "list_connections", {})).json.result.structuredContent
      .connections
      .map((c: { name: string }) => c.name);
  await saveConnections(path, [first, savedConnection(fixture, "Second")]);
  await waitUntil(
    "the second connection to be listed",
    async () => (await names()).length >= 2,
    { timeoutMs: 1_000, intervalMs: 50 },
  );
  assertEquals(await names(), ["First", "Second"]);
  await Deno.writeTextFile(path, '{"connections": [{"id": 1}]}');
  // The server's 250 ms watch (file_watch.ts) reads the malformed file.
  await new Promise((resolve) => setTimeout(resolve, 300));
  assertEquals(await names(), ["First", "Second"]);
  assertEquals(await Deno.readTextFile(path), '{"connections": [{"id": 1}]}');
});
