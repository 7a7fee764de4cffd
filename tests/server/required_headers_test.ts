/**
 * docs/wire.md's "Required headers" table over real HTTP: every
 * disagreement, missing header, malformed value or control character is
 * `-32020` (HTTP 400) carrying the request id.
 */
import { assertEquals } from "@std/assert";
import { fixtureCatalog } from "../_catalog.ts";
import {
  modernRequest,
  postModern,
  rawHttp,
  startTestServer,
  type TestServer,
} from "../_server.ts";

async function expectMismatch(
  t: TestServer,
  body: Record<string, unknown>,
  overrides: Record<string, string | null>,
  header: string,
) {
  const answer = await postModern(t.url, body, overrides);
  assertEquals(answer.status, 400, JSON.stringify(overrides));
  assertEquals(answer.json.error.code, -32020, JSON.stringify(overrides));
  assertEquals(answer.json.error.data.header, header);
  assertEquals(answer.json.id, body.id);
}

Deno.test("Content-Type must be application/json or a +json type", async () => {
  await using t = await startTestServer();
  const body = modernRequest("server/discover", {}, "ct");
  await expectMismatch(
    t,
    body,
    { "content-type": "text/plain" },
    "Content-Type",
  );
  await expectMismatch(t, body, {
    "content-type": "application/x-www-form-urlencoded",
  }, "Content-Type");
  assertEquals(
    (await postModern(t.url, body, {
      "content-type": "application/vnd.mcp+json",
    })).status,
    200,
  );
  assertEquals(
    (await postModern(t.url, body, {
      "content-type": "application/json; charset=utf-8",
    })).status,
    200,
  );
});

Deno.test("MCP-Protocol-Version must be sent and equal the _meta version", async () => {
  await using t = await startTestServer();
  const body = modernRequest("server/discover", {}, 2);
  await expectMismatch(
    t,
    body,
    { "mcp-protocol-version": null },
    "MCP-Protocol-Version",
  );
  await expectMismatch(
    t,
    body,
    { "mcp-protocol-version": "2025-11-25" },
    "MCP-Protocol-Version",
  );
});

Deno.test("Mcp-Method must be sent and equal the method, case included", async () => {
  await using t = await startTestServer();
  const body = modernRequest("tools/list", {}, 3);
  await expectMismatch(t, body, { "mcp-method": null }, "Mcp-Method");
  await expectMismatch(t, body, { "mcp-method": "TOOLS/LIST" }, "Mcp-Method");
  await expectMismatch(t, body, { "mcp-method": "prompts/list" }, "Mcp-Method");
});

Deno.test("Mcp-Name must equal params.name for tools/call and prompts/get", async () => {
  await using t = await startTestServer({ catalog: fixtureCatalog() });
  const call = modernRequest("tools/call", { name: "echo", arguments: {} }, 4);
  await expectMismatch(t, call, { "mcp-name": null }, "Mcp-Name");
  await expectMismatch(t, call, { "mcp-name": "Echo" }, "Mcp-Name");
  const prompt = modernRequest("prompts/get", {
    name: "greet",
    arguments: { who: "x" },
  }, 5);
  await expectMismatch(t, prompt, { "mcp-name": null }, "Mcp-Name");
  await expectMismatch(t, prompt, { "mcp-name": "other" }, "Mcp-Name");
  assertEquals((await postModern(t.url, call)).status, 200);
  assertEquals((await postModern(t.url, prompt)).status, 200);
});

Deno.test("Mcp-Name must equal params.uri for resources/read", async () => {
  await using t = await startTestServer({ catalog: fixtureCatalog() });
  const read = modernRequest("resources/read", { uri: "test://fast" }, 6);
  await expectMismatch(t, read, { "mcp-name": null }, "Mcp-Name");
  await expectMismatch(
    t,
    read,
    { "mcp-name": "test://slow-changing" },
    "Mcp-Name",
  );
  assertEquals((await postModern(t.url, read)).status, 200);
});

Deno.test("a base64-wrapped header value is decoded before comparing", async () => {
  await using t = await startTestServer({ catalog: fixtureCatalog() });
  const answer = await postModern(
    t.url,
    modernRequest("tools/call", { name: "echo", arguments: {} }),
    {
      "mcp-name": "=?base64?ZWNobw==?=",
    },
  );
  assertEquals(answer.status, 200);
  assertEquals(answer.json.result.isError, undefined);
  const unknown = modernRequest(
    "tools/call",
    { name: "señal", arguments: {} },
    8,
  );
  const wrapped = await postModern(t.url, unknown, {
    "mcp-name": "=?base64?c2XDsWFs?=",
  });
  // The header agrees, so the request reaches the method: an unknown tool.
  assertEquals(wrapped.json.error.code, -32602);
});

Deno.test("a malformed base64 wrapper is -32020", async () => {
  await using t = await startTestServer({ catalog: fixtureCatalog() });
  const body = modernRequest("tools/call", { name: "echo", arguments: {} }, 9);
  await expectMismatch(
    t,
    body,
    { "mcp-name": "=?base64?ZWNo b w==?=" },
    "Mcp-Name",
  );
  await expectMismatch(
    t,
    body,
    { "mcp-name": "=?base64?ZWNobw?=" },
    "Mcp-Name",
  );
});

/** A tools/call for "echo" written by hand with a raw Mcp-Name value. */
function rawCall(mcpName: string): Uint8Array {
  const body = JSON.stringify(
    modernRequest("tools/call", { name: "echo", arguments: {} }, 10),
  );
  const text =
    `POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n` +
    `MCP-Protocol-Version: 2026-07-28\r\nMcp-Method: tools/call\r\nMcp-Name: ${mcpName}\r\n` +
    `Content-Length: ${body.length}\r\nConnection: close\r\n\r\n${body}`;
  // Latin-1 bytes as written: fetch refuses to send such headers at all.
  return Uint8Array.from(text, (c) => c.charCodeAt(0));
}

Deno.test("a control character in a mirrored header is -32020", async () => {
  // Raw HTTP without a bearer header: authentication is not this test's subject.
  await using t = await startTestServer({
    settings: { requireAuth: false },
    catalog: fixtureCatalog(),
  });
  // A tab passes the HTTP parser and reaches our check.
  const tab = await rawHttp(t.port, rawCall("ec\tho"));
  assertEquals(tab.status, 400);
  assertEquals(JSON.parse(tab.body).error.code, -32020);
  assertEquals(JSON.parse(tab.body).id, 10);
  // Other control characters are refused by the HTTP parser before dispatch.
  const soh = await rawHttp(t.port, rawCall("ec\x01ho"));
  assertEquals([soh.status, soh.body], [400, ""]);
});

Deno.test("a non-ASCII mirrored header sent without the base64 wrapper is -32020", async () => {
  // Raw HTTP without a bearer header: authentication is not this test's subject.
  await using t = await startTestServer({
    settings: { requireAuth: false },
    catalog: fixtureCatalog(),
  });
  const answer = await rawHttp(t.port, rawCall("\xe9cho"));
  assertEquals(answer.status, 400);
  assertEquals(JSON.parse(answer.body).error.code, -32020);
  assertEquals(JSON.parse(answer.body).id, 10);
});

Deno.test("Mcp-Param headers are validated only when sent, against arguments", async () => {
  await using t = await startTestServer({ catalog: fixtureCatalog() });
  const body = modernRequest("tools/call", {
    name: "echo",
    arguments: { connection_id: "abc", limit: 5, opts: { deep: true } },
  }, 11);
  assertEquals((await postModern(t.url, body)).status, 200);
  assertEquals(
    (await postModern(t.url, body, {
      "mcp-param-connection_id": "abc",
      "mcp-param-limit": "5.0",
      "mcp-param-deep": "true",
    })).status,
    200,
  );
  await expectMismatch(
    t,
    body,
    { "mcp-param-connection_id": "abd" },
    "Mcp-Param-connection_id",
  );
  await expectMismatch(t, body, { "mcp-param-limit": "6" }, "Mcp-Param-limit");
  await expectMismatch(t, body, { "mcp-param-opts": "x" }, "Mcp-Param-opts");
  await expectMismatch(
    t,
    body,
    { "mcp-param-absent": "x" },
    "Mcp-Param-absent",
  );
});

Deno.test("header checks never apply to notifications", async () => {
  await using t = await startTestServer();
  const answer = await postModern(t.url, {
    jsonrpc: "2.0",
    method: "notifications/cancelled",
    params: { requestId: 1 },
  }, {
    "mcp-method": null,
    "mcp-protocol-version": "2026-07-28",
  });
  assertEquals(answer.status, 202);
});
