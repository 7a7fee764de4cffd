/**
 * docs/wire.md's "HTTP surface" table, row by row, over real HTTP.
 */
import { assertEquals, assertStringIncludes } from "@std/assert";
import { fixtureCatalog } from "../_catalog.ts";
import { modernRequest, postModern, startTestServer } from "../_server.ts";

Deno.test("POST /mcp answers a JSON-RPC request as application/json", async () => {
  await using t = await startTestServer();
  const answer = await postModern(t.url, modernRequest("server/discover"));
  assertEquals(answer.status, 200);
  assertEquals(answer.headers.get("content-type"), "application/json");
  assertEquals(answer.json.id, 1);
  assertEquals(answer.json.result.resultType, "complete");
});

Deno.test("POST /mcp answers text/event-stream when progressToken was sent", async () => {
  await using t = await startTestServer({ catalog: fixtureCatalog() });
  const answer = await postModern(
    t.url,
    modernRequest("tools/list", {}, 7, { progressToken: "p" }),
  );
  assertEquals(answer.status, 200);
  assertEquals(answer.headers.get("content-type"), "text/event-stream");
  assertStringIncludes(answer.text, '"id":7');
  assertEquals(answer.text.startsWith("data: "), true);
});

for (const method of ["GET", "DELETE", "PUT", "PATCH"]) {
  Deno.test(`${method} /mcp answers 405 with Allow: POST, OPTIONS`, async () => {
    await using t = await startTestServer();
    const response = await fetch(t.url, { method });
    assertEquals(response.status, 405);
    assertEquals(response.headers.get("allow"), "POST, OPTIONS");
    assertEquals((await response.json()).error, "method_not_allowed");
  });
}

Deno.test("OPTIONS /mcp answers 204", async () => {
  await using t = await startTestServer();
  const response = await fetch(t.url, { method: "OPTIONS" });
  await response.body?.cancel();
  assertEquals(response.status, 204);
  assertEquals(response.headers.get("access-control-allow-origin"), null);
});

Deno.test("OPTIONS /mcp from an allowed origin grants CORS for our headers", async () => {
  await using t = await startTestServer();
  const response = await fetch(t.url, {
    method: "OPTIONS",
    headers: {
      origin: "https://claude.ai",
      "access-control-request-method": "POST",
      "access-control-request-headers":
        "content-type, mcp-method, mcp-param-connection_id, x-evil",
    },
  });
  await response.body?.cancel();
  assertEquals(response.status, 204);
  assertEquals(
    response.headers.get("access-control-allow-origin"),
    "https://claude.ai",
  );
  assertEquals(
    response.headers.get("access-control-allow-methods"),
    "POST, OPTIONS",
  );
  const allowed = response.headers.get("access-control-allow-headers")!.split(
    ", ",
  );
  for (
    const name of [
      "authorization",
      "mcp-protocol-version",
      "mcp-session-id",
      "mcp-param-connection_id",
    ]
  ) {
    assertEquals(allowed.includes(name), true, name);
  }
  assertEquals(allowed.includes("x-evil"), false);
  assertStringIncludes(
    response.headers.get("access-control-expose-headers")!,
    "Mcp-Session-Id",
  );
  assertStringIncludes(response.headers.get("vary")!, "Origin");
});

Deno.test("a POST from an allowed origin carries CORS headers", async () => {
  await using t = await startTestServer();
  const answer = await postModern(t.url, modernRequest("server/discover"), {
    origin: "https://chatgpt.com",
  });
  assertEquals(answer.status, 200);
  assertEquals(
    answer.headers.get("access-control-allow-origin"),
    "https://chatgpt.com",
  );
  assertStringIncludes(
    answer.headers.get("access-control-expose-headers")!,
    "Mcp-Session-Id",
  );
});

for (
  const [method, path] of [["GET", "/"], ["POST", "/"], ["POST", "/mcp/x"], [
    "GET",
    "/sse",
  ], ["POST", "/messages"]] as const
) {
  Deno.test(`${method} ${path} answers 404`, async () => {
    await using t = await startTestServer();
    const response = await fetch(`http://127.0.0.1:${t.port}${path}`, {
      method,
      ...(method === "POST" ? { body: "{}" } : {}),
    });
    assertEquals(response.status, 404);
    assertEquals((await response.json()).error, "not_found");
  });
}
