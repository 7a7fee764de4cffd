/**
 * What every conversation pays for: tools/list within 5,600 characters of
 * JSON for a readOnly token and 7,000 for fullAccess (the `tools` array as
 * the server sends it), every input constraint kept, and the prose moved to
 * the listed, cacheable `dbport://docs/results`. Names where ids are taken,
 * table typos with their suggestions, and row counts said when absent.
 */

import { assert, assertEquals } from "@std/assert";
import { savedConnection, serverWith } from "../_connections.ts";
import { openFixture } from "../_db.ts";
import { modernRequest, postModern, startTestServer } from "../_server.ts";
import { callTool, toolErrorText } from "../_tool_call.ts";

/** The `tools` array exactly as it appears in the response body. */
function toolsText(body: string): string {
  const start = body.indexOf('"tools":') + '"tools":'.length;
  let depth = 0;
  for (let i = start; i < body.length; i++) {
    const c = body[i];
    if (c === '"') {
      // Skip the string, escapes included.
      for (i++; body[i] !== '"'; i++) if (body[i] === "\\") i++;
    } else if (c === "[" || c === "{") depth++;
    else if (c === "]" || c === "}") {
      if (--depth === 0) return body.slice(start, i + 1);
    }
  }
  throw new Error("no tools array");
}

for (
  const [level, ceiling, count] of [
    ["readOnly", 5_600, 8],
    ["fullAccess", 7_000, 9],
  ] as const
) {
  Deno.test(`tools/list for a ${level} token is at most ${ceiling} characters`, async () => {
    await using server = await startTestServer({ token: level });
    const answer = await postModern(
      server.url,
      modernRequest("tools/list", {}, 1),
    );
    const text = toolsText(answer.text);
    const tools = JSON.parse(text);
    assertEquals(tools.length, count);
    assert(text.length <= ceiling, `${text.length} characters`);
    for (const tool of tools) {
      // Every input constraint is still there.
      assertEquals(tool.inputSchema.additionalProperties, false, tool.name);
      assertEquals(tool.outputSchema.type, "object");
      assert(tool.description.length <= 200, tool.name);
    }
    const execute = tools.find((t: { name: string }) =>
      t.name === "execute_query"
    );
    assertEquals(execute.inputSchema.properties.timeout_seconds.maximum, 300);
    assertEquals(execute.inputSchema.properties.query.maxLength, 102_400);
    const exporter = tools.find((t: { name: string }) =>
      t.name === "export_query"
    );
    assertEquals(exporter.inputSchema.properties.format.enum, ["csv", "jsonl"]);
  });
}

Deno.test("dbport://docs/results is listed, cacheable and holds the prose and full schemas", async () => {
  await using server = await startTestServer();
  const list = await postModern(
    server.url,
    modernRequest("resources/list", {}, 1),
  );
  const item = list.json.result.resources.find((r: { uri: string }) =>
    r.uri === "dbport://docs/results"
  );
  assertEquals(item.mimeType, "text/markdown");
  const read = await postModern(
    server.url,
    modernRequest("resources/read", { uri: "dbport://docs/results" }, 2),
  );
  assert(read.json.result.ttlMs >= 60_000);
  const text: string = read.json.result.contents[0].text;
  for (
    const needle of [
      "64-bit integers",
      "…[cut: N more characters]",
      "total_rows",
      "export_query",
      "### execute_query",
      "### describe_table",
    ]
  ) assert(text.includes(needle), needle);
});

Deno.test("connection_id takes a name, any case; an unknown one names the closest visible ones", async () => {
  await using fixture = await openFixture("sqlite");
  const shop = savedConnection(fixture, "Shop");
  const hidden = savedConnection(fixture, "Secret", { aiPolicy: "never" });
  await using server = await serverWith([shop, hidden]);
  const byName = await callTool(server, "execute_query", {
    connection_id: "shop",
    query: "select 1 as one",
  });
  assertEquals(byName.json.result.structuredContent.rows, [[1]]);
  const typo = await callTool(server, "list_tables", { connection_id: "Shpo" });
  const text = toolErrorText(typo);
  assert(text.startsWith("not_found: "), text);
  assert(text.includes('did you mean "Shop"'), text);
  // A hidden connection's name is as unknown as a name that never was.
  const secret = await callTool(server, "list_tables", {
    connection_id: "Secret",
  });
  const secretText = toolErrorText(secret);
  assert(secretText.startsWith("not_found: "), secretText);
  assert(!secretText.includes("did you mean"), secretText);
  const blank = await callTool(server, "list_tables", { connection_id: " " });
  assert(toolErrorText(blank).startsWith("invalid_argument: "));
});

Deno.test("describe_table's not_found names the nearest tables; list_tables says when counts are missing", async () => {
  await using fixture = await openFixture("sqlite");
  const saved = savedConnection(fixture, "Books");
  await using server = await serverWith([saved]);
  const typo = await callTool(server, "describe_table", {
    connection_id: saved.id,
    table: "book",
  });
  const text = toolErrorText(typo);
  assert(text.startsWith("not_found: "), text);
  assert(text.includes('did you mean "books"'), text);
  const tables = await callTool(server, "list_tables", {
    connection_id: saved.id,
    include_row_counts: true,
  });
  const content = tables.json.result.structuredContent;
  const view = content.tables.find((t: { name: string }) =>
    t.name === "book_titles"
  );
  assertEquals(view.row_count, null);
  assert(content.row_counts_note.includes("ANALYZE"));
  assert(content.row_counts_note.includes("count(*)"));
});
