/**
 * docs/wire.md's "Legacy session" table over real HTTP.
 */
import { assertEquals, assertExists, assertNotEquals } from "@std/assert";
import { assertSchema } from "../_schema.ts";
import { initializeSession, postLegacy, startTestServer } from "../_server.ts";
import { INSTRUCTIONS } from "../../lib/features/instructions.ts";

for (const version of ["2025-11-25", "2025-06-18"]) {
  Deno.test(`initialize ${version} opens a session and answers the wire reference's fields`, async () => {
    await using t = await startTestServer();
    const answer = await postLegacy(t.url, {
      jsonrpc: "2.0",
      id: 0,
      method: "initialize",
      params: {
        protocolVersion: version,
        capabilities: { elicitation: {} },
        clientInfo: { name: "c", version: "1" },
      },
    });
    assertEquals(answer.status, 200);
    assertEquals(answer.json.id, 0);
    assertExists(answer.headers.get("mcp-session-id"));
    const result = answer.json.result;
    assertEquals(result.protocolVersion, version);
    assertEquals(result.capabilities.resources.subscribe, false);
    assertEquals(result.serverInfo.name, "dbport");
    assertEquals(result.instructions, INSTRUCTIONS);
    assertEquals("resultType" in result, false);
    assertSchema(version, "InitializeResult", result);
  });
}

Deno.test("a session id serves later requests of the same token", async () => {
  await using t = await startTestServer();
  const auth = {
    authorization: `Bearer ${(await t.mint("readOnly")).plaintext}`,
  };
  const session = await initializeSession(t.url, "2025-11-25", auth);
  const answer = await postLegacy(t.url, {
    jsonrpc: "2.0",
    id: 1,
    method: "ping",
  }, { ...auth, "mcp-session-id": session });
  assertEquals(answer.status, 200);
  assertEquals(answer.json.result, {});
});

Deno.test("a session id from a different token is -33001", async () => {
  await using t = await startTestServer();
  const session = await initializeSession(t.url, "2025-11-25", {
    authorization: `Bearer ${
      (await t.mint("readOnly", { name: "a" })).plaintext
    }`,
  });
  const other = (await t.mint("readOnly", { name: "b" })).plaintext;
  for (const headers of [{ authorization: `Bearer ${other}` }, {}]) {
    const answer = await postLegacy(t.url, {
      jsonrpc: "2.0",
      id: 1,
      method: "ping",
    }, { ...headers, "mcp-session-id": session });
    assertEquals(answer.status, 404);
    assertEquals(answer.json.error.code, -33001);
  }
});

Deno.test("the 17th session evicts the least recently used one", async () => {
  await using t = await startTestServer();
  const sessions: string[] = [];
  for (let i = 0; i < 16; i++) sessions.push(await initializeSession(t.url));
  // Use the oldest, so the second-oldest becomes the least recently used.
  const ping = (session: string) =>
    postLegacy(t.url, { jsonrpc: "2.0", id: 1, method: "ping" }, {
      "mcp-session-id": session,
    });
  assertEquals((await ping(sessions[0]!)).status, 200);
  const seventeenth = await initializeSession(t.url);
  assertEquals((await ping(seventeenth)).status, 200);
  const evicted = await ping(sessions[1]!);
  assertEquals(evicted.status, 404);
  assertEquals(evicted.json.error.code, -33001);
  for (const survivor of [sessions[0]!, ...sessions.slice(2)]) {
    assertEquals((await ping(survivor)).status, 200);
  }
});

Deno.test("sessions are distinct", async () => {
  await using t = await startTestServer();
  assertNotEquals(
    await initializeSession(t.url),
    await initializeSession(t.url),
  );
});

Deno.test("notifications/initialized is answered 202", async () => {
  await using t = await startTestServer();
  const session = await initializeSession(t.url);
  const answer = await postLegacy(t.url, {
    jsonrpc: "2.0",
    method: "notifications/initialized",
  }, { "mcp-session-id": session });
  assertEquals(answer.status, 202);
});

Deno.test("logging/setLevel accepts RFC 5424 levels and refuses others with -32602", async () => {
  await using t = await startTestServer();
  const session = await initializeSession(t.url);
  const headers = { "mcp-session-id": session };
  const ok = await postLegacy(t.url, {
    jsonrpc: "2.0",
    id: 1,
    method: "logging/setLevel",
    params: { level: "warning" },
  }, headers);
  assertEquals([ok.status, ok.json.result], [200, {}]);
  const bad = await postLegacy(t.url, {
    jsonrpc: "2.0",
    id: 2,
    method: "logging/setLevel",
    params: { level: "loud" },
  }, headers);
  assertEquals([bad.status, bad.json.error.code], [400, -32602]);
});

Deno.test("a legacy MCP-Protocol-Version header must match the session", async () => {
  await using t = await startTestServer();
  const session = await initializeSession(t.url, "2025-06-18");
  const ping = (version: string) =>
    postLegacy(t.url, { jsonrpc: "2.0", id: 1, method: "ping" }, {
      "mcp-session-id": session,
      "mcp-protocol-version": version,
    });
  assertEquals((await ping("2025-06-18")).status, 200);
  const other = await ping("2025-11-25");
  assertEquals([other.status, other.json.error.code], [400, -32020]);
  const old = await ping("2025-03-26");
  assertEquals([old.status, old.json.error.code], [400, -32022]);
});

Deno.test("initialize refuses ill-typed capabilities or clientInfo with -32602", async () => {
  await using t = await startTestServer();
  for (
    const params of [{ capabilities: [] }, {
      capabilities: {},
      clientInfo: "me",
    }]
  ) {
    const answer = await postLegacy(t.url, {
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: { protocolVersion: "2025-11-25", ...params },
    });
    assertEquals([answer.status, answer.json.error.code], [400, -32602]);
  }
});
