/**
 * Resources end to end with the official SDK v2 client on PostgreSQL,
 * MariaDB and a SQLite file: list and read every kind, the templates, the
 * query history, and the refusals. Every message the server sends is
 * checked against the 2026-07-28 schema.
 */

import { assert, assertEquals, assertRejects } from "@std/assert";
import { savedConnection, serverWith } from "../_connections.ts";
import { ENGINES, needs, openFixture } from "../_db.ts";
import { SchemaCheck, sdkClient, wireCode } from "../_sdk.ts";
import { modernRequest, postModern } from "../_server.ts";

// deno-lint-ignore no-explicit-any
type Any = any;

function payload(result: Any): Any {
  assertEquals(result.contents.length, 1);
  assertEquals(result.contents[0].mimeType, "application/json");
  return JSON.parse(result.contents[0].text);
}

for (const engine of ENGINES) {
  Deno.test(
    `${engine}: SDK v2 lists and reads every resource kind`,
    needs(engine),
    async () => {
      await using fixture = await openFixture(engine);
      const saved = savedConnection(fixture, `Shop ${engine}`);
      const hidden = savedConnection(fixture, "Hidden", {
        externalAccess: "blocked",
      });
      await using server = await serverWith([saved, hidden]);
      const check = new SchemaCheck();
      const client = await sdkClient(server.url, server.token!, { check });
      try {
        const root = "dbport://connections";
        const schemaUri = `${root}/${saved.id}/schema`;
        // Not used yet, and still listed: every connection the caller may see.
        const before = await client.listResources();
        assertEquals(before.resources.map((r: Any) => r.uri), [
          root,
          schemaUri,
          "dbport://docs/results",
          // The MCP Apps views, listed to every client (docs/apps.md).
          "ui://dbport/plan-tree",
          "ui://dbport/result-grid",
          "ui://dbport/table-card",
        ]);

        const connections = payload(await client.readResource({ uri: root }));
        assertEquals(connections.connections.map((c: Any) => c.name), [
          saved.name,
        ]);

        // The fixture's schema is the default one but on PostgreSQL, where
        // it is named (the default there is the search path's public).
        const schema = payload(
          await client.readResource({
            uri: engine === "postgres"
              ? `${schemaUri}?schema=${fixture.schema}`
              : schemaUri,
          }),
        );
        assertEquals(schema.schema, fixture.schema);
        assertEquals(schema.schema_is_default, engine !== "postgres");
        const mine = schema.tables.filter((t: Any) =>
          t.schema === fixture.schema
        );
        assertEquals(mine.map((t: Any) => [t.name, t.type]), [
          ["authors", "table"],
          ["book_titles", "view"],
          ["books", "table"],
          ["kinds", "table"],
        ]);
        assertEquals(mine[0].columns[0], {
          name: "id",
          data_type: mine[0].columns[0].data_type,
          is_nullable: false,
          is_primary_key: true,
        });
        assert(schema.total_tables >= 4);
        assertEquals(schema.truncated, schema.total_tables > 100);

        // After the read the list is the same.
        const after = await client.listResources(undefined, {
          cacheMode: "bypass",
        });
        assertEquals(after.resources.map((r: Any) => r.uri), [
          root,
          schemaUri,
          "dbport://docs/results",
          // The MCP Apps views, listed to every client (docs/apps.md).
          "ui://dbport/plan-tree",
          "ui://dbport/result-grid",
          "ui://dbport/table-card",
        ]);

        const tables = payload(
          await client.readResource({
            uri: `${root}/${saved.id}/tables?schema=${fixture.schema}`,
          }),
        );
        assertEquals(tables.tables.map((t: Any) => t.name), [
          "authors",
          "book_titles",
          "books",
          "kinds",
        ]);
        const books = payload(
          await client.readResource({
            uri: `${root}/${saved.id}/tables/books?schema=${fixture.schema}`,
          }),
        );
        assertEquals(books.table, "books");
        assertEquals(books.foreign_keys[0].referenced_table, "authors");
        assert(books.indexes.some((i: Any) => i.columns.includes("author_id")));

        const templates = await client.listResourceTemplates();
        assertEquals(
          templates.resourceTemplates.map((t: Any) => t.uriTemplate).sort(),
          [
            `${root}/{connection_id}/history{?limit}`,
            `${root}/{connection_id}/schema{?schema}`,
            `${root}/{connection_id}/tables/{table}{?schema}`,
            `${root}/{connection_id}/tables{?schema}`,
          ],
        );

        // The query history: newest first, with the client and the outcome.
        await client.callTool({
          name: "execute_query",
          arguments: { connection_id: saved.id, query: "select 1 as one" },
        });
        await client.callTool({
          name: "execute_query",
          arguments: {
            connection_id: saved.id,
            query: "select * from no_such_table",
          },
        });
        const history = payload(
          await client.readResource({
            uri: `${root}/${saved.id}/history?limit=5`,
          }, { cacheMode: "bypass" }),
        );
        assertEquals(history.recording, true);
        assertEquals(
          history.history.map((h: Any) => [h.query, h.outcome, h.client]),
          [
            ["select * from no_such_table", "error", "dbport-e2e"],
            ["select 1 as one", "success", "dbport-e2e"],
          ],
        );
        assertEquals(history.history[1].row_count, 1);
        assert(typeof history.history[0].error_message === "string");

        // Refusals: a hidden connection is -33007, an unknown sub-resource,
        // a name instead of an id and a bad limit -32602.
        const hiddenError = await assertRejects(() =>
          client.readResource({ uri: `${root}/${hidden.id}/schema` })
        ) as Any;
        assertEquals(wireCode(hiddenError), -33007);
        for (
          const uri of [
            `${root}/${saved.id}/bogus`,
            `${root}/${saved.id}/tables/books/statistics`,
            `${root}/Shop/schema`,
            `${root}/${saved.id}/history?limit=0`,
            `${root}/${saved.id}/tables?colour=red`,
            `${root}/${saved.id}/tables/no_such_table`,
            `${root}/${crypto.randomUUID()}/schema`,
            "file:///etc/passwd",
          ]
        ) {
          const error = await assertRejects(() =>
            client.readResource({ uri })
          ) as Any;
          assertEquals(wireCode(error), -32602, uri);
        }
      } finally {
        await client.close();
      }
      await check.assertValid();
      assert(check.checked >= 15);
    },
  );
}

Deno.test("resources/read: each kind carries its own cache time, private", async () => {
  await using fixture = await openFixture("sqlite");
  const saved = savedConnection(fixture, "Shop");
  await using server = await serverWith([saved]);
  const root = "dbport://connections";
  for (
    const [uri, ttl] of [
      [root, 15_000],
      [`${root}/${saved.id}/schema`, 60_000],
      [`${root}/${saved.id}/tables`, 60_000],
      [`${root}/${saved.id}/tables/books`, 60_000],
      [`${root}/${saved.id}/history`, 5_000],
    ] as const
  ) {
    const answer = await postModern(
      server.url,
      modernRequest("resources/read", { uri }, 1),
    );
    assertEquals(answer.status, 200, answer.text);
    assertEquals(answer.json.result.ttlMs, ttl, uri);
    assertEquals(answer.json.result.cacheScope, "private");
  }
});

Deno.test("resources/read: Mcp-Name must equal the URI", async () => {
  await using fixture = await openFixture("sqlite");
  const saved = savedConnection(fixture, "Shop");
  await using server = await serverWith([saved]);
  const body = modernRequest("resources/read", {
    uri: `dbport://connections/${saved.id}/schema`,
  }, 1);
  const answer = await postModern(server.url, body, {
    "mcp-name": "dbport://connections",
  });
  assertEquals(answer.status, 400);
  assertEquals(answer.json.error.code, -32020);
});
