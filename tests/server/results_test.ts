/**
 * docs/wire.md's "Result envelope", "server/discover result", "Cache hints"
 * and "Pagination" over real HTTP, validated against the 2026-07-28 schema.
 */
import { assertEquals, assertExists } from "@std/assert";
import { fixtureCatalog, numberedTools } from "../_catalog.ts";
import { assertSchema } from "../_schema.ts";
import {
  initializeSession,
  modernRequest,
  postLegacy,
  postModern,
  startTestServer,
} from "../_server.ts";
import { INSTRUCTIONS } from "../../lib/features/instructions.ts";

const MODERN = "2026-07-28";

Deno.test("server/discover answers exactly the wire reference's table", async () => {
  await using t = await startTestServer();
  const answer = await postModern(t.url, modernRequest("server/discover"));
  assertEquals(answer.json.result, {
    resultType: "complete",
    supportedVersions: ["2026-07-28", "2025-11-25", "2025-06-18"],
    capabilities: {
      tools: { listChanged: false },
      resources: { subscribe: true, listChanged: true },
      prompts: { listChanged: false },
      completions: {},
      extensions: {},
    },
    instructions: INSTRUCTIONS,
    ttlMs: 3600000,
    cacheScope: "public",
    _meta: {
      "dbport/instanceId": t.server.instanceId,
      "io.modelcontextprotocol/serverInfo": {
        name: "dbport",
        title: "dbport",
        version: "0.1.0",
        websiteUrl: "https://dbport.dev",
      },
    },
  });
  assertSchema(MODERN, "DiscoverResult", answer.json.result);
  assertSchema(MODERN, "DiscoverResultResponse", answer.json);
});

Deno.test("the instructions steer the model as the wire reference says", () => {
  for (
    const phrase of [
      "list_connections",
      "describe_table",
      "policy",
      "not a transient",
    ]
  ) {
    assertEquals(INSTRUCTIONS.includes(phrase), true, phrase);
  }
});

Deno.test("cache hints follow the wire reference's table exactly", async () => {
  await using t = await startTestServer({ catalog: fixtureCatalog() });
  const expected: [string, Record<string, unknown>, number, string, string][] =
    [
      ["server/discover", {}, 3600000, "public", "DiscoverResult"],
      ["prompts/list", {}, 3600000, "public", "ListPromptsResult"],
      [
        "resources/templates/list",
        {},
        3600000,
        "public",
        "ListResourceTemplatesResult",
      ],
      ["tools/list", {}, 300000, "private", "ListToolsResult"],
      ["resources/list", {}, 30000, "private", "ListResourcesResult"],
    ];
  for (const [method, params, ttlMs, cacheScope, definition] of expected) {
    const result =
      (await postModern(t.url, modernRequest(method, params))).json.result;
    assertEquals(
      [result.ttlMs, result.cacheScope],
      [ttlMs, cacheScope],
      method,
    );
    assertSchema(MODERN, definition, result);
  }
});

Deno.test("resources/read carries a per-URI hint between 5 s and 300 s, private", async () => {
  await using t = await startTestServer({ catalog: fixtureCatalog() });
  for (
    const [uri, ttl] of [["test://fast", 5000], [
      "test://slow-changing",
      300000,
    ]] as const
  ) {
    const result =
      (await postModern(t.url, modernRequest("resources/read", { uri }))).json
        .result;
    assertEquals([result.ttlMs, result.cacheScope], [ttl, "private"], uri);
    assertSchema(MODERN, "ReadResourceResult", result);
  }
});

Deno.test("a hint reaching any other method's result is stripped", async () => {
  await using t = await startTestServer({ catalog: fixtureCatalog() });
  const call = (await postModern(
    t.url,
    modernRequest("tools/call", { name: "cached", arguments: {} }),
  )).json.result;
  assertEquals("ttlMs" in call, false);
  assertEquals("cacheScope" in call, false);
  assertSchema(MODERN, "CallToolResult", call);
  const prompt = (await postModern(
    t.url,
    modernRequest("prompts/get", {
      name: "greet",
      arguments: { who: "you" },
    }),
  )).json
    .result;
  assertEquals("ttlMs" in prompt, false);
  assertSchema(MODERN, "GetPromptResult", prompt);
  const completion = (await postModern(
    t.url,
    modernRequest("completion/complete", {
      ref: { type: "ref/prompt", name: "greet" },
      argument: { name: "who", value: "" },
    }),
  )).json.result;
  assertEquals("ttlMs" in completion, false);
  assertSchema(MODERN, "CompleteResult", completion);
});

Deno.test("a call carrying requestState or inputResponses is never cached", async () => {
  await using t = await startTestServer({ catalog: fixtureCatalog() });
  const read = (await postModern(
    t.url,
    modernRequest("resources/read", {
      uri: "test://slow-changing",
      requestState: "s",
    }),
  ))
    .json.result;
  // The schema requires the hint on resources/read, so "never cached" is ttlMs 0.
  assertEquals([read.ttlMs, read.cacheScope], [0, "private"]);
  const call = (await postModern(
    t.url,
    modernRequest("tools/call", {
      name: "cached",
      arguments: {},
      inputResponses: {},
    }),
  ))
    .json.result;
  assertEquals("ttlMs" in call, false);
});

Deno.test("tools/list pages at 50 with an opaque nextCursor, 120 tools in three pages", async () => {
  // 115 numbered tools plus the 5 fixture tools visible to the anonymous caller.
  await using t = await startTestServer({
    catalog: fixtureCatalog(numberedTools(115)),
  });
  const seen: string[] = [];
  let cursor: string | undefined;
  let pages = 0;
  do {
    const params = cursor === undefined ? {} : { cursor };
    const result =
      (await postModern(t.url, modernRequest("tools/list", params, pages))).json
        .result;
    assertSchema(MODERN, "ListToolsResult", result);
    seen.push(...result.tools.map((tool: { name: string }) => tool.name));
    cursor = result.nextCursor;
    pages++;
    if (cursor !== undefined) assertEquals(result.tools.length, 50);
  } while (cursor !== undefined && pages < 10);
  assertEquals(pages, 3);
  assertEquals(seen.length, 120);
  assertEquals(new Set(seen).size, 120);
  assertEquals([...seen].sort(), seen);
});

Deno.test("a cursor given to another method, tampered with or garbage is -32602", async () => {
  await using t = await startTestServer({
    catalog: fixtureCatalog(numberedTools(60)),
  });
  const first =
    (await postModern(t.url, modernRequest("tools/list"))).json.result;
  assertExists(first.nextCursor);
  const cursor: string = first.nextCursor;
  const tampered = cursor.slice(0, -2) + (cursor.endsWith("AA") ? "BB" : "AA");
  for (
    const [method, bad] of [
      ["prompts/list", cursor],
      ["resources/list", cursor],
      ["tools/list", tampered],
      ["tools/list", "garbage"],
      ["tools/list", ""],
    ] as const
  ) {
    const answer = await postModern(
      t.url,
      modernRequest(method, { cursor: bad }),
    );
    assertEquals(
      [answer.status, answer.json.error.code],
      [400, -32602],
      `${method} ${bad}`,
    );
  }
  const again = await postModern(
    t.url,
    modernRequest("tools/list", { cursor }),
  );
  assertEquals(again.status, 200);
  assertEquals(again.json.result.tools.length, 15);
});

Deno.test("legacy list results page the same way", async () => {
  await using t = await startTestServer({
    catalog: fixtureCatalog(numberedTools(60)),
  });
  const session = await initializeSession(t.url);
  const headers = { "mcp-session-id": session };
  const first = (await postLegacy(
    t.url,
    { jsonrpc: "2.0", id: 1, method: "tools/list" },
    headers,
  )).json.result;
  assertEquals(first.tools.length, 50);
  const second = (await postLegacy(t.url, {
    jsonrpc: "2.0",
    id: 2,
    method: "tools/list",
    params: { cursor: first.nextCursor },
  }, headers))
    .json.result;
  assertEquals(second.tools.length, 15);
  assertEquals(second.nextCursor, undefined);
});

Deno.test("tools/list hides tools whose scope the caller lacks", async () => {
  await using t = await startTestServer({ catalog: fixtureCatalog() });
  const names = (await postModern(t.url, modernRequest("tools/list"))).json
    .result.tools.map((tool: { name: string }) => tool.name);
  assertEquals(names.includes("echo"), true);
  assertEquals(names.includes("writer"), false);
});
