/**
 * docs/wire.md's "Versioning" table and rules over real HTTP.
 */
import { assertEquals } from "@std/assert";
import { assertSchema } from "../_schema.ts";
import { fixtureCatalog } from "../_catalog.ts";
import {
  initializeSession,
  modernRequest,
  postLegacy,
  postModern,
  startTestServer,
} from "../_server.ts";

Deno.test("server/discover serves the live list of accepted versions", async () => {
  await using t = await startTestServer();
  const answer = await postModern(t.url, modernRequest("server/discover"));
  assertEquals(answer.json.result.supportedVersions, [
    "2026-07-28",
    "2025-11-25",
    "2025-06-18",
  ]);
});

Deno.test("2025-03-26 is not accepted by initialize (-32022)", async () => {
  await using t = await startTestServer();
  for (
    const version of ["2025-03-26", "2024-11-05", "2026-07-28", 5, undefined]
  ) {
    const answer = await postLegacy(t.url, {
      jsonrpc: "2.0",
      id: "i",
      method: "initialize",
      params: {
        protocolVersion: version,
        capabilities: {},
        clientInfo: { name: "c", version: "1" },
      },
    });
    assertEquals(answer.status, 400, String(version));
    assertEquals(answer.json.error.code, -32022, String(version));
    assertEquals(answer.json.error.data.supported, [
      "2026-07-28",
      "2025-11-25",
      "2025-06-18",
    ]);
    assertEquals(answer.headers.get("mcp-session-id"), null);
  }
});

Deno.test("a modern-era header without the _meta envelope is -32602", async () => {
  await using t = await startTestServer();
  const answer = await postModern(t.url, {
    jsonrpc: "2.0",
    id: 1,
    method: "tools/list",
    params: {},
  });
  assertEquals(answer.status, 400);
  assertEquals(answer.json.error.code, -32602);
  assertEquals(answer.json.id, 1);
});

Deno.test("a modern request with an empty version or non-object capabilities is -32602", async () => {
  await using t = await startTestServer();
  const emptyVersion = modernRequest("tools/list", {}, 2, {
    "io.modelcontextprotocol/protocolVersion": "",
  });
  const a = await postModern(t.url, emptyVersion);
  assertEquals([a.status, a.json.error.code], [400, -32602]);
  const badCaps = modernRequest("tools/list", {}, 3, {
    "io.modelcontextprotocol/clientCapabilities": "all",
  });
  const b = await postModern(t.url, badCaps);
  assertEquals([b.status, b.json.error.code], [400, -32602]);
  const badToken = modernRequest("tools/list", {}, 4, { progressToken: 1.25 });
  const c = await postModern(t.url, badToken);
  assertEquals([c.status, c.json.error.code], [400, -32602]);
});

Deno.test("a request without _meta version is legacy and needs a session", async () => {
  await using t = await startTestServer();
  const answer = await postLegacy(t.url, {
    jsonrpc: "2.0",
    id: 5,
    method: "tools/list",
  });
  assertEquals(answer.status, 400);
  assertEquals(answer.json.error.code, -32600);
  assertEquals(answer.json.id, 5);
});

Deno.test("legacy clients cannot call server/discover or subscriptions/listen (404 -32601)", async () => {
  await using t = await startTestServer();
  const session = await initializeSession(t.url);
  for (const method of ["server/discover", "subscriptions/listen"]) {
    const answer = await postLegacy(t.url, {
      jsonrpc: "2.0",
      id: method,
      method,
      params: {},
    }, {
      "mcp-session-id": session,
    });
    assertEquals(answer.status, 404, method);
    assertEquals(answer.json.error.code, -32601, method);
  }
});

Deno.test("modern clients cannot call initialize, ping or logging/setLevel (404 -32601)", async () => {
  await using t = await startTestServer();
  for (const method of ["initialize", "ping", "logging/setLevel"]) {
    const answer = await postModern(
      t.url,
      modernRequest(method, { level: "info" }, method),
    );
    assertEquals(answer.status, 404, method);
    assertEquals(answer.json.error.code, -32601, method);
  }
});

Deno.test("legacy results carry no resultType, cache hints or serverInfo", async () => {
  await using t = await startTestServer({ catalog: fixtureCatalog() });
  for (const version of ["2025-11-25", "2025-06-18"]) {
    const session = await initializeSession(t.url, version);
    const headers = {
      "mcp-session-id": session,
      "mcp-protocol-version": version,
    };
    for (
      const method of [
        "tools/list",
        "prompts/list",
        "resources/list",
        "resources/templates/list",
      ]
    ) {
      const answer = await postLegacy(
        t.url,
        { jsonrpc: "2.0", id: 1, method },
        headers,
      );
      assertEquals(answer.status, 200, method);
      const result = answer.json.result;
      for (const key of ["resultType", "ttlMs", "cacheScope", "_meta"]) {
        assertEquals(key in result, false, `${version} ${method} has ${key}`);
      }
    }
    const tools = await postLegacy(t.url, {
      jsonrpc: "2.0",
      id: 2,
      method: "tools/list",
    }, headers);
    assertSchema(version, "ListToolsResult", tools.json.result);
    const call = await postLegacy(t.url, {
      jsonrpc: "2.0",
      id: 3,
      method: "tools/call",
      params: { name: "cached", arguments: {} },
    }, headers);
    assertEquals("ttlMs" in call.json.result, false);
    assertEquals("resultType" in call.json.result, false);
    assertSchema(version, "CallToolResult", call.json.result);
  }
});

Deno.test("modern results carry resultType and serverInfo", async () => {
  await using t = await startTestServer({ catalog: fixtureCatalog() });
  for (
    const method of [
      "tools/list",
      "prompts/list",
      "resources/list",
      "resources/templates/list",
      "server/discover",
    ]
  ) {
    const answer = await postModern(t.url, modernRequest(method));
    assertEquals(answer.json.result.resultType, "complete", method);
    assertEquals(
      answer.json.result._meta["io.modelcontextprotocol/serverInfo"],
      {
        name: "dbport",
        title: "dbport",
        version: "0.1.0",
        websiteUrl: "https://dbport.dev",
      },
    );
  }
});

Deno.test("a modern request's Mcp-Session-Id is ignored and never echoed", async () => {
  await using t = await startTestServer();
  const answer = await postModern(t.url, modernRequest("tools/list"), {
    "mcp-session-id": "stale-or-bogus",
  });
  assertEquals(answer.status, 200);
  assertEquals(answer.headers.get("mcp-session-id"), null);
  const discover = await postModern(t.url, modernRequest("server/discover"));
  assertEquals(discover.headers.get("mcp-session-id"), null);
});

Deno.test("MCP-Protocol-Version and _meta disagreeing is -32020 before any version check", async () => {
  await using t = await startTestServer();
  // The header says 2026-07-28, the body a legacy version: not -32022.
  for (const version of ["2025-11-25", "1999-01-01"]) {
    const body = modernRequest("tools/list", {}, 7, {
      "io.modelcontextprotocol/protocolVersion": version,
    });
    const answer = await postModern(t.url, body);
    assertEquals(
      [answer.status, answer.json.error.code],
      [400, -32020],
      version,
    );
    assertEquals(
      answer.json.error.message.includes(`_meta names "${version}"`),
      true,
      answer.json.error.message,
    );
  }
  // Agreeing on a version the modern era does not serve is still -32022.
  const body = modernRequest("tools/list", {}, 8, {
    "io.modelcontextprotocol/protocolVersion": "2025-11-25",
  });
  const agreed = await postModern(t.url, body, {
    "mcp-protocol-version": "2025-11-25",
  });
  assertEquals([agreed.status, agreed.json.error.code], [400, -32022]);
});
