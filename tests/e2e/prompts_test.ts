/**
 * Prompts and completions end to end with the official SDK v2 client on the
 * three engines: every prompt rendered from the live schema, each kind of
 * completion, and the argument rules. Every message is schema-checked.
 */

import { assert, assertEquals, assertRejects } from "@std/assert";
import { savedConnection, serverWith } from "../_connections.ts";
import { ENGINES, needs, openFixture } from "../_db.ts";
import { SchemaCheck, sdkClient, wireCode } from "../_sdk.ts";

// deno-lint-ignore no-explicit-any
type Any = any;

const PROMPTS = [
  "explain_schema",
  "explain_table",
  "question_to_sql",
  "review_query",
  "write_migration",
];

function text(result: Any): string {
  assertEquals(result.messages.length, 1);
  assertEquals(result.messages[0].role, "user");
  assertEquals(result.messages[0].content.type, "text");
  return result.messages[0].content.text;
}

for (const engine of ENGINES) {
  Deno.test(
    `${engine}: SDK v2 gets every prompt, rendered from the live schema`,
    needs(engine),
    async () => {
      await using fixture = await openFixture(engine);
      const saved = savedConnection(fixture, `Shop ${engine}`, {
        safeMode: "alertFull",
      });
      await using server = await serverWith([saved]);
      const check = new SchemaCheck();
      const client = await sdkClient(server.url, server.token!, { check });
      try {
        const list = await client.listPrompts();
        assertEquals(list.prompts.map((p: Any) => p.name), PROMPTS);
        for (const prompt of list.prompts) {
          assertEquals(prompt.arguments![0]!.name, "connection");
          assertEquals(prompt.arguments![0]!.required, true);
        }
        const schema = fixture.schema;
        const byName = { connection: saved.name, schema };
        const byId = { connection: saved.id, schema };

        const tour = text(
          await client.getPrompt({
            name: "explain_schema",
            arguments: { ...byName, audience: "Engineer" },
          }),
        );
        assert(tour.includes("an engineer"), tour);
        assert(tour.includes(`${schema}.authors: id`), tour);
        // A read-only connection says so, not what its Safe Mode would ask.
        assert(tour.includes("this connection is read only"), tour);
        assert(!tour.includes("Safe Mode"), tour);
        assert(tour.includes(`### ${schema}.books`), tour);

        const table = text(
          await client.getPrompt({
            name: "explain_table",
            arguments: { ...byId, table: "books" },
          }),
        );
        assert(table.includes(`### ${schema}.books`), table);
        assert(table.includes("| title |"), table);
        assert(table.includes(`→ ${schema}.authors(id)`), table);
        assert(table.includes("three worthwhile"), table);
        assert(table.includes("Tables it references"), table);

        const sql = text(
          await client.getPrompt({
            name: "question_to_sql",
            arguments: { ...byName, question: "Which authors wrote books?" },
          }),
        );
        assert(sql.includes("> Which authors wrote books?"), sql);
        assert(sql.includes(`### ${schema}.authors`), sql);
        assert(sql.includes("never invent"), sql);

        const review = text(
          await client.getPrompt({
            name: "review_query",
            arguments: {
              ...byName,
              query: "delete from books",
            },
          }),
        );
        assert(review.includes("```sql\ndelete from books\n```"), review);
        assert(review.includes("touches every row"), review);
        assert(review.includes(`### ${schema}.books`), review);

        const migration = text(
          await client.getPrompt({
            name: "write_migration",
            arguments: {
              ...byName,
              change: "add an isbn column",
              table: "books",
            },
          }),
        );
        assert(migration.includes(`### ${schema}.books`), migration);
        assert(migration.includes("rollback"), migration);
        assert(migration.includes("this connection is read only"), migration);

        // Completions: connection names, tables and schemas of the connection
        // in context, a fixed choice list in its declared order, and nothing
        // for free text.
        const complete = async (
          ref: Any,
          name: string,
          value: string,
          context?: Any,
        ) =>
          (await client.complete({
            ref,
            argument: { name, value },
            ...(context === undefined
              ? {}
              : { context: { arguments: context } }),
          })).completion;
        const prompt = { type: "ref/prompt", name: "explain_table" };
        assertEquals((await complete(prompt, "connection", "sho")).values, [
          saved.name,
        ]);
        assertEquals(
          (await complete(prompt, "table", "b", { connection: saved.name }))
            .values.filter((v: string) => ["books", "book_titles"].includes(v)),
          ["book_titles", "books"],
        );
        assertEquals(
          (await complete(prompt, "table", "ook", {
            connection: saved.name,
            schema,
          })).values,
          ["book_titles", "books"],
        );
        assert(
          (await complete(prompt, "schema", "", { connection: saved.id }))
            .values.includes(schema),
        );
        assertEquals((await complete(prompt, "audience", "")).values, [
          "newcomer",
          "analyst",
          "engineer",
        ]);
        assertEquals((await complete(prompt, "audience", "e")).values, [
          "engineer",
          "newcomer",
        ]);
        assertEquals(
          (await complete(prompt, "table", "b")).values,
          [],
          "no connection in context: nothing",
        );
        const template = {
          type: "ref/resource",
          uri: "dbport://connections/{connection_id}/tables/{table}{?schema}",
        };
        assertEquals((await complete(template, "connection_id", "")).values, [
          saved.id,
        ]);
        assert(
          (await complete(template, "table", "auth", {
            connection_id: saved.id,
          })).values.includes("authors"),
        );
        const free = await complete(
          { type: "ref/prompt", name: "question_to_sql" },
          "question",
          "how",
        );
        assertEquals(free, { values: [], total: 0, hasMore: false });
      } finally {
        await client.close();
      }
      await check.assertValid();
    },
  );
}

Deno.test("prompts/get refuses bad arguments with -32602 naming them", async () => {
  await using fixture = await openFixture("sqlite");
  const saved = savedConnection(fixture, "Shop");
  const hidden = savedConnection(fixture, "Secret", { aiPolicy: "never" });
  const careful = savedConnection(fixture, "Careful", {
    aiPolicy: "askEachTime",
  });
  await using server = await serverWith([saved, hidden, careful]);
  const client = await sdkClient(server.url, server.token!);
  try {
    const cases: [Any, string][] = [
      [{ name: "no_such_prompt", arguments: {} }, "no_such_prompt"],
      [{ name: "explain_table", arguments: { connection: "Shop" } }, '"table"'],
      [
        {
          name: "explain_table",
          arguments: { connection: "Shop", table: " " },
        },
        '"table"',
      ],
      [
        {
          name: "explain_schema",
          arguments: { connection: "Shop", colour: "red" },
        },
        '"colour"',
      ],
      [
        {
          name: "explain_schema",
          arguments: { connection: "Shop", audience: "wizard" },
        },
        '"audience"',
      ],
      [
        { name: "explain_schema", arguments: { connection: "Nope" } },
        '"connection"',
      ],
      [
        { name: "explain_schema", arguments: { connection: "Secret" } },
        '"connection"',
      ],
      [
        { name: "explain_schema", arguments: { connection: hidden.id } },
        '"connection"',
      ],
      [
        {
          name: "explain_table",
          arguments: { connection: "Shop", table: "no_such_table" },
        },
        "no_such_table",
      ],
    ];
    for (const [params, named] of cases) {
      const error = await assertRejects(() => client.getPrompt(params)) as Any;
      assertEquals(wireCode(error), -32602, JSON.stringify(params));
      assert(
        String(error.data?.text ?? error.message).includes(named),
        `${JSON.stringify(params)}: ${error.data?.text ?? error.message}`,
      );
      // A hidden connection's name never leaks into a message (unless the
      // caller typed it).
      if (!JSON.stringify(params).includes("Secret")) {
        assert(!String(error.data?.text ?? error.message).includes("Secret"));
      }
    }
    // Completion never offers the hidden connection either.
    const names = await client.complete({
      ref: { type: "ref/prompt", name: "explain_schema" },
      argument: { name: "connection", value: "" },
    });
    assertEquals(names.completion.values, ["Careful", "Shop"]);
    // Completion cannot ask: a connection not yet approved gives no tables.
    const tables = await client.complete({
      ref: { type: "ref/prompt", name: "explain_table" },
      argument: { name: "table", value: "" },
      context: { arguments: { connection: "Careful" } },
    });
    assertEquals(tables.completion.values, []);
  } finally {
    await client.close();
  }
});
