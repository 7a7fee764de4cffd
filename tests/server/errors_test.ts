/**
 * docs/wire.md's "Protocol errors" table over real HTTP: each code this
 * foundation can produce, with its HTTP status. (-32021 and -33007 to -33010
 * arrive with consent and authentication; their statuses are unit-tested in
 * tests/protocol/errors_test.ts.)
 */
import { waitUntil } from "../_wait.ts";
import { assertEquals, assertFalse, assertStringIncludes } from "@std/assert";
import { committingTool, fixtureCatalog } from "../_catalog.ts";
import {
  initializeSession,
  modernRequest,
  post,
  postLegacy,
  postModern,
  startTestServer,
} from "../_server.ts";
import { saveSettings } from "../../lib/serve.ts";

Deno.test("-32700 (400): the body is not JSON, id null", async () => {
  await using t = await startTestServer();
  for (const body of ["{nope", "", "\u00ff"]) {
    const answer = await post(t.url, body, {
      "content-type": "application/json",
    });
    assertEquals(answer.status, 400);
    assertEquals(answer.json, {
      jsonrpc: "2.0",
      id: null,
      error: answer.json.error,
    });
    assertEquals(answer.json.error.code, -32700);
  }
});

Deno.test("-32600 (400): a batch, a bad envelope, a bad id", async () => {
  await using t = await startTestServer();
  const cases: [unknown, unknown][] = [
    [[modernRequest("server/discover")], null],
    [{ jsonrpc: "2.0", id: 3, method: "tools/list", params: [] }, 3],
    [{ id: 4, method: "tools/list" }, 4],
    [{ jsonrpc: "2.0", id: 1.5, method: "tools/list" }, null],
    ["just a string", null],
  ];
  for (const [body, id] of cases) {
    const answer = await post(t.url, JSON.stringify(body), {
      "content-type": "application/json",
    });
    assertEquals(answer.status, 400, JSON.stringify(body));
    assertEquals(answer.json.error.code, -32600);
    assertEquals(answer.json.id, id);
  }
});

Deno.test("-32601 (404): an unknown method, in both eras", async () => {
  await using t = await startTestServer();
  const modern = await postModern(
    t.url,
    modernRequest("tools/delete", {}, "u"),
  );
  assertEquals(modern.status, 404);
  assertEquals(modern.json.error.code, -32601);
  assertEquals(modern.json.id, "u");
  const session = await initializeSession(t.url);
  const legacy = await postLegacy(t.url, {
    jsonrpc: "2.0",
    id: 2,
    method: "nope",
  }, { "mcp-session-id": session });
  assertEquals(legacy.status, 404);
  assertEquals(legacy.json.error.code, -32601);
});

Deno.test("-32602 (400): unknown tool, prompt and resource URI, bad cursor", async () => {
  await using t = await startTestServer({ catalog: fixtureCatalog() });
  const cases = [
    modernRequest("tools/call", { name: "nope", arguments: {} }),
    modernRequest("tools/call", { name: "echo" }),
    modernRequest("tools/call", { name: "echo", arguments: [] }),
    modernRequest("prompts/get", { name: "nope" }),
    modernRequest("resources/read", { uri: "test://nope" }),
    modernRequest("tools/list", { cursor: "garbage" }),
    modernRequest("tools/list", { cursor: 5 }),
    modernRequest("completion/complete", {
      ref: { type: "ref/nope", name: "nope" },
      argument: { name: "a", value: "" },
    }),
  ];
  for (const body of cases) {
    const answer = await postModern(t.url, body);
    assertEquals(answer.status, 400, JSON.stringify(body.params));
    assertEquals(answer.json.error.code, -32602, JSON.stringify(body.params));
  }
});

Deno.test("completion/complete of a prompt or template the server lacks answers empty", async () => {
  await using t = await startTestServer({ catalog: fixtureCatalog() });
  const refs = [
    { type: "ref/prompt", name: "test_prompt_with_arguments" },
    { type: "ref/resource", uri: "test://nope/{x}" },
  ];
  for (const ref of refs) {
    const answer = await postModern(
      t.url,
      modernRequest("completion/complete", {
        ref,
        argument: { name: "arg1", value: "par" },
      }),
    );
    assertEquals(answer.status, 200, JSON.stringify(ref));
    assertEquals(answer.json.result.completion, {
      values: [],
      total: 0,
      hasMore: false,
    });
  }
});

Deno.test("-32603 (500): a handler failure, with nothing of its message leaked", async () => {
  const lines: string[] = [];
  await using t = await startTestServer({
    catalog: fixtureCatalog(),
    log: (line) => lines.push(line),
  });
  const answer = await postModern(
    t.url,
    modernRequest("tools/call", { name: "boom", arguments: {} }, "b"),
  );
  assertEquals(answer.status, 500);
  assertEquals(answer.json.error, { code: -32603, message: "Internal error" });
  assertEquals(answer.json.id, "b");
  assertFalse(answer.text.includes("hunter2"));
  assertFalse(answer.text.includes("db.internal"));
  assertStringIncludes(lines.join("\n"), "tools/call failed");
});

Deno.test("-32022 (400): an unsupported version, with data.supported and data.requested", async () => {
  await using t = await startTestServer();
  const answer = await postModern(
    t.url,
    {
      ...modernRequest("server/discover"),
      params: {
        _meta: {
          "io.modelcontextprotocol/protocolVersion": "2099-01-01",
          "io.modelcontextprotocol/clientCapabilities": {},
        },
      },
    },
    { "mcp-protocol-version": "2099-01-01" },
  );
  assertEquals(answer.status, 400);
  assertEquals(answer.json.error.code, -32022);
  assertEquals(answer.json.error.data, {
    supported: ["2026-07-28", "2025-11-25", "2025-06-18"],
    requested: "2099-01-01",
  });
});

Deno.test("-33000 (503): new requests while the server stops; running ones may finish", async () => {
  const t = await startTestServer({ catalog: fixtureCatalog() });
  try {
    const running = postModern(
      t.url,
      modernRequest(
        "tools/call",
        { name: "slow", arguments: { ms: 300 } },
        "r",
      ),
    );
    await waitUntil(
      "the request to be running",
      () => t.server.inFlightCount() >= 1,
    );
    const stopping = t.server.stop();
    const refused = await postModern(
      t.url,
      modernRequest("server/discover", {}, "n"),
    );
    assertEquals(refused.status, 503);
    assertEquals(refused.json.error.code, -33000);
    assertEquals(refused.json.id, "n");
    assertEquals(refused.headers.get("retry-after"), "5");
    const finished = await running;
    assertEquals(finished.status, 200);
    assertEquals(finished.json.result.structuredContent, {
      slept: 300,
      aborted: false,
    });
    await stopping;
  } finally {
    await t[Symbol.asyncDispose]();
  }
});

Deno.test("-33000 (503): a request still running when the drain time ends is stopped", async () => {
  const t = await startTestServer({ catalog: fixtureCatalog(), drainMs: 100 });
  try {
    const running = postModern(
      t.url,
      modernRequest(
        "tools/call",
        { name: "slow", arguments: { ms: 10_000 } },
        "long",
      ),
    );
    await waitUntil(
      "the request to be running",
      () => t.server.inFlightCount() >= 1,
    );
    const stopping = t.server.stop();
    const answer = await running;
    assertEquals(answer.status, 503);
    assertEquals(answer.json.error.code, -33000);
    await stopping;
  } finally {
    await t[Symbol.asyncDispose]();
  }
});

Deno.test("-33001 (404): an unknown legacy session", async () => {
  await using t = await startTestServer();
  const answer = await postLegacy(t.url, {
    jsonrpc: "2.0",
    id: 1,
    method: "tools/list",
  }, { "mcp-session-id": "no-such-session" });
  assertEquals(answer.status, 404);
  assertEquals(answer.json.error.code, -33001);
});

Deno.test("-33002 (200): notifications/cancelled stops the caller's running request", async () => {
  await using t = await startTestServer({ catalog: fixtureCatalog() });
  const running = postModern(
    t.url,
    modernRequest(
      "tools/call",
      { name: "slow", arguments: { ms: 10_000 } },
      42,
    ),
  );
  await waitUntil(
    "the request to be running",
    () => t.server.inFlightCount() >= 1,
  );
  const cancel = await postModern(t.url, {
    jsonrpc: "2.0",
    method: "notifications/cancelled",
    params: { requestId: 42, reason: "user" },
  });
  assertEquals(cancel.status, 202);
  const answer = await running;
  assertEquals(answer.status, 200);
  assertEquals(answer.json.id, 42);
  assertEquals(answer.json.error.code, -33002);
});

Deno.test("-33002: another principal cannot cancel the request", async () => {
  await using t = await startTestServer({ catalog: fixtureCatalog() });
  const running = postModern(
    t.url,
    modernRequest("tools/call", { name: "slow", arguments: { ms: 300 } }, 43),
  );
  await waitUntil(
    "the request to be running",
    () => t.server.inFlightCount() >= 1,
  );
  const cancel = await postModern(
    t.url,
    {
      jsonrpc: "2.0",
      method: "notifications/cancelled",
      params: { requestId: 43 },
    },
    { authorization: `Bearer ${(await t.mint("readOnly")).plaintext}` },
  );
  assertEquals(cancel.status, 202);
  const answer = await running;
  assertEquals(answer.json.result.structuredContent, {
    slept: 300,
    aborted: false,
  });
});

Deno.test("-33003 (200): the handler deadline ran out", async () => {
  await using t = await startTestServer({
    catalog: fixtureCatalog(),
    deadlineMs: 100,
  });
  const answer = await postModern(
    t.url,
    modernRequest(
      "tools/call",
      { name: "slow", arguments: { ms: 10_000 } },
      "d",
    ),
  );
  assertEquals(answer.status, 200);
  assertEquals(answer.json.error.code, -33003);
});

Deno.test("-33006 (503): the MCP server switch is off, applied live", async () => {
  await using t = await startTestServer();
  assertEquals(
    (await postModern(t.url, modernRequest("server/discover"))).status,
    200,
  );
  await saveSettings(t.home, { enabled: false });
  let answer = await waitUntil("the switch off to be applied", async () => {
    const a = await postModern(t.url, modernRequest("server/discover"));
    return a.status !== 200 && a;
  });
  assertEquals(answer.status, 503);
  assertEquals(answer.json.error.code, -33006);
  assertEquals(answer.json.id, 1);
  await saveSettings(t.home, { enabled: true });
  answer = await waitUntil("the switch on to be applied", async () => {
    const a = await postModern(t.url, modernRequest("server/discover"));
    return a.status !== 503 && a;
  });
  assertEquals(answer.status, 200);
});

Deno.test("equal ids of one principal's running requests are both served, and a cancel stops each", async () => {
  // Two clients sharing a token both number their requests from 0.
  await using t = await startTestServer({ catalog: fixtureCatalog() });
  const first = postModern(
    t.url,
    modernRequest("tools/call", { name: "slow", arguments: { ms: 300 } }, 0),
  );
  await waitUntil(
    "the request to be running",
    () => t.server.inFlightCount() >= 1,
  );
  const second = await postModern(
    t.url,
    modernRequest("tools/call", { name: "slow", arguments: { ms: 1 } }, 0),
  );
  assertEquals(second.status, 200);
  assertEquals(second.json.id, 0);
  assertEquals(second.json.result.isError ?? false, false);
  assertEquals((await first).status, 200);

  // notifications/cancelled for an id stops every running request with it.
  const a = postModern(
    t.url,
    modernRequest("tools/call", { name: "slow", arguments: { ms: 2000 } }, 7),
  );
  const b = postModern(
    t.url,
    modernRequest("tools/call", { name: "slow", arguments: { ms: 2000 } }, 7),
  );
  await waitUntil(
    "the 2 requests to be running",
    () => t.server.inFlightCount() >= 2,
  );
  const cancel = await postModern(t.url, {
    jsonrpc: "2.0",
    method: "notifications/cancelled",
    params: { requestId: 7 },
  });
  assertEquals(cancel.status, 202);
  for (const answer of await Promise.all([a, b])) {
    assertEquals(answer.json.error?.code, -33002, JSON.stringify(answer.json));
  }
});

Deno.test("a request whose work can no longer be undone answers with its outcome, even when cancelled", async () => {
  await using t = await startTestServer({
    catalog: fixtureCatalog([committingTool]),
  });
  const running = postModern(
    t.url,
    modernRequest(
      "tools/call",
      { name: "committing", arguments: { ms: 300 } },
      "commit-1",
    ),
  );
  await waitUntil(
    "the request to be running",
    () => t.server.inFlightCount() >= 1,
  );
  const cancel = await postModern(t.url, {
    jsonrpc: "2.0",
    method: "notifications/cancelled",
    params: { requestId: "commit-1" },
  });
  assertEquals(cancel.status, 202);
  const answer = await running;
  assertEquals(answer.status, 200);
  assertEquals(answer.json.result.structuredContent, {
    committed: true,
    aborted: true,
  });
});
