/**
 * The fast path of `POST /mcp` (lib/server/mcp_post.ts, issue 38): it is the
 * one that answers every POST to the endpoint — its count moves, the app's
 * other routes leave it alone — and through it each check still answers
 * with its exact status, body and headers.
 */
import { assertEquals, assertStringIncludes } from "@std/assert";
import { fixtureCatalog } from "../_catalog.ts";
import { waitUntil } from "../_wait.ts";
import {
  modernHeaders,
  modernRequest,
  post,
  postModern,
  rawHttp,
  startTestServer,
  type TestServer,
} from "../_server.ts";
import { parseSseEvents } from "../../lib/protocol/sse.ts";

/** Run `send` and return what it answered and how many POSTs the fast path took. */
async function counted<T>(
  t: TestServer,
  send: () => Promise<T>,
): Promise<{ answer: T; taken: number }> {
  const before = t.server.fastPostCount();
  const answer = await send();
  return { answer, taken: t.server.fastPostCount() - before };
}

const discover = modernRequest("server/discover");

Deno.test("the fast path takes POST /mcp (its query too) and nothing else", async () => {
  await using t = await startTestServer();
  const ok = await counted(t, () => postModern(t.url, discover));
  assertEquals([ok.answer.status, ok.taken], [200, 1]);
  assertEquals(ok.answer.headers.get("content-type"), "application/json");
  assertEquals(ok.answer.json.result.resultType, "complete");
  const query = await counted(
    t,
    () =>
      postModern(`${t.url}?client=probe`, discover, {
        authorization: `Bearer ${t.token}`,
      }),
  );
  assertEquals([query.answer.status, query.taken], [200, 1]);
  const base = `http://127.0.0.1:${t.port}`;
  for (
    const [method, path, status] of [
      ["GET", "/mcp", 405],
      ["DELETE", "/mcp", 405],
      ["OPTIONS", "/mcp", 204],
      ["POST", "/", 404],
      ["POST", "/mcp/x", 404],
    ] as const
  ) {
    const other = await counted(t, async () => {
      const response = await fetch(`${base}${path}`, {
        method,
        ...(method === "POST" ? { body: "{}" } : {}),
      });
      await response.body?.cancel();
      return response.status;
    });
    assertEquals([other.answer, other.taken], [status, 0], `${method} ${path}`);
  }
});

Deno.test("through the fast path a foreign Host is 403 forbidden_host", async () => {
  await using t = await startTestServer();
  const body = JSON.stringify(discover);
  const { answer, taken } = await counted(t, () =>
    rawHttp(
      t.port,
      `POST /mcp HTTP/1.1\r\nHost: evil.example\r\nContent-Type: application/json\r\n` +
        `Content-Length: ${body.length}\r\nConnection: close\r\n\r\n${body}`,
    ));
  assertEquals([answer.status, taken], [403, 1]);
  assertEquals(JSON.parse(answer.body), {
    error: "forbidden_host",
    message:
      `Host "evil.example" is not allowed: use 127.0.0.1, localhost or [::1] with port ${t.port}`,
  });
});

Deno.test("through the fast path a repeated Host is read joined, as the app reads it, and refused", async () => {
  await using t = await startTestServer();
  const body = JSON.stringify(discover);
  const { answer, taken } = await counted(t, () =>
    rawHttp(
      t.port,
      `POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nHost: evil.example\r\nContent-Type: application/json\r\n` +
        `Content-Length: ${body.length}\r\nConnection: close\r\n\r\n${body}`,
    ));
  assertEquals([answer.status, taken], [403, 1]);
  assertEquals(
    JSON.parse(answer.body).message,
    `Host "127.0.0.1, evil.example" is not allowed: use 127.0.0.1, localhost or [::1] with port ${t.port}`,
  );
});

Deno.test("through the fast path a foreign Origin is 403 forbidden_origin, and an allowed one gets CORS even on a refusal", async () => {
  await using t = await startTestServer();
  const bad = await counted(
    t,
    () => postModern(t.url, discover, { origin: "https://evil.example" }),
  );
  assertEquals([bad.answer.status, bad.taken], [403, 1]);
  assertEquals(bad.answer.json.error, "forbidden_origin");
  assertStringIncludes(bad.answer.json.message, '"https://evil.example"');
  assertEquals(bad.answer.headers.get("access-control-allow-origin"), null);
  const refused = await counted(t, () =>
    postModern(t.url, discover, {
      origin: "https://claude.ai",
      authorization: null,
    }));
  assertEquals([refused.answer.status, refused.taken], [401, 1]);
  assertEquals(
    refused.answer.headers.get("access-control-allow-origin"),
    "https://claude.ai",
  );
  assertEquals(refused.answer.headers.get("vary"), "Origin");
});

Deno.test("through the fast path a body over the cap is -33005 (413) and the connection closes", async () => {
  await using t = await startTestServer();
  const body = new Uint8Array(10 * 1024 * 1024 + 1).fill(0x20);
  const { answer, taken } = await counted(
    t,
    () => post(t.url, body, { "content-type": "application/json" }),
  );
  assertEquals([answer.status, taken], [413, 1]);
  assertEquals(answer.json, {
    jsonrpc: "2.0",
    id: null,
    error: {
      code: -33005,
      message: "Payload too large: the body exceeds 10485760 bytes",
      data: { maxBytes: 10485760 },
    },
  });
  assertEquals(answer.headers.get("connection"), "close");
  // The unread rest is drained for up to 500 ms, then the socket closed.
  await new Promise((resolve) => setTimeout(resolve, 600));
});

Deno.test("through the fast path no token is -33009 with the realm, an unknown one invalid_token", async () => {
  await using t = await startTestServer();
  const none = await counted(
    t,
    () => postModern(t.url, discover, { authorization: null }),
  );
  assertEquals([none.answer.status, none.taken], [401, 1]);
  assertEquals(none.answer.json.error.code, -33009);
  assertEquals(none.answer.json.id, 1);
  assertEquals(
    none.answer.headers.get("www-authenticate"),
    'Bearer realm="dbport"',
  );
  const unknown = await counted(
    t,
    () => postModern(t.url, discover, { authorization: "Bearer nope" }),
  );
  assertEquals([unknown.answer.status, unknown.taken], [401, 1]);
  assertEquals(
    unknown.answer.headers.get("www-authenticate"),
    'Bearer error="invalid_token"',
  );
  const malformed = await counted(
    t,
    () => postModern(t.url, discover, { authorization: "Basic abc" }),
  );
  assertEquals([malformed.answer.status, malformed.taken], [400, 1]);
  assertEquals(malformed.answer.json.error.code, -32020);
});

Deno.test("through the fast path a server switched off is -33006 (503), a stopping one -33000 with Retry-After", async () => {
  await using t = await startTestServer();
  t.server.state.settings = { ...t.server.state.settings, enabled: false };
  const off = await counted(
    t,
    () => postModern(t.url, modernRequest("tools/list", {}, "off")),
  );
  assertEquals([off.answer.status, off.taken], [503, 1]);
  assertEquals(off.answer.json.error.code, -33006);
  assertEquals(off.answer.json.id, "off");
  t.server.state.settings = { ...t.server.state.settings, enabled: true };
  t.server.state.stopping = true;
  const stopping = await counted(t, () => postModern(t.url, discover));
  t.server.state.stopping = false;
  assertEquals([stopping.answer.status, stopping.taken], [503, 1]);
  assertEquals(stopping.answer.json.error.code, -33000);
  assertEquals(stopping.answer.headers.get("retry-after"), "5");
});

Deno.test("through the fast path malformed JSON is -32700, a batch -32600, a notification 202", async () => {
  await using t = await startTestServer();
  const json = { "content-type": "application/json" };
  const malformed = await counted(t, () => post(t.url, "{nope", json));
  assertEquals([malformed.answer.status, malformed.taken], [400, 1]);
  assertEquals(malformed.answer.json.error.code, -32700);
  assertEquals(malformed.answer.json.id, null);
  const batch = await counted(
    t,
    () => post(t.url, JSON.stringify([discover, discover]), json),
  );
  assertEquals([batch.answer.status, batch.taken], [400, 1]);
  assertEquals(batch.answer.json.error.code, -32600);
  const note = await counted(t, () =>
    post(
      t.url,
      JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }),
      json,
    ));
  assertEquals([note.answer.status, note.taken], [202, 1]);
  assertEquals(note.answer.text, "");
});

Deno.test("through the fast path a progressToken answers SSE: progress frames, then the result", async () => {
  await using t = await startTestServer({ catalog: fixtureCatalog() });
  const body = modernRequest(
    "tools/call",
    { name: "progress", arguments: {} },
    "p",
    { progressToken: 7 },
  );
  const { answer, taken } = await counted(t, () => postModern(t.url, body));
  assertEquals([answer.status, taken], [200, 1]);
  assertEquals(answer.headers.get("content-type"), "text/event-stream");
  assertEquals(answer.headers.get("cache-control"), "no-cache, no-transform");
  const frames = parseSseEvents(answer.text).events.map((data) =>
    JSON.parse(data)
  );
  assertEquals(
    frames.slice(0, 3).map((f) => [f.params.progressToken, f.params.progress]),
    [[7, 0], [7, 0.3], [7, 1]],
  );
  assertEquals(frames[3].id, "p");
  assertEquals(frames[3].result.resultType, "complete");
});

Deno.test("through the fast path a client that disconnects mid-request cancels it", async () => {
  await using t = await startTestServer({ catalog: fixtureCatalog() });
  const body = modernRequest("tools/call", {
    name: "slow",
    arguments: { ms: 60_000 },
  }, "gone");
  const before = t.server.fastPostCount();
  const abort = new AbortController();
  const sent = fetch(t.url, {
    method: "POST",
    headers: { ...modernHeaders(body), authorization: `Bearer ${t.token}` },
    body: JSON.stringify(body),
    signal: abort.signal,
  }).catch((error) => error);
  await waitUntil("the call runs", () => t.server.inFlightCount() === 1);
  assertEquals(t.server.fastPostCount() - before, 1);
  abort.abort();
  await sent;
  await waitUntil("the call stops", () => t.server.inFlightCount() === 0);
  await t.server.activity.flush();
  const [row] = await t.server.activity.recent(1);
  assertEquals([row!.method, row!.errorCode], ["tools/call", -33002]);
});

Deno.test("through the fast path a large answer of multibyte text (written as its bytes) has its exact Content-Length and text", async () => {
  await using t = await startTestServer({ catalog: fixtureCatalog() });
  for (const size of [100, 20_000]) {
    const query = "é€😀x".repeat(size);
    const call = modernRequest("tools/call", {
      name: "echo",
      arguments: { query },
    });
    const { answer, taken } = await counted(
      t,
      () => postModern(t.url, call, { authorization: `Bearer ${t.token}` }),
    );
    assertEquals([answer.status, taken], [200, 1]);
    assertEquals(
      Number(answer.headers.get("content-length")),
      new TextEncoder().encode(answer.text).length,
    );
    assertEquals(answer.json.result.structuredContent.args.query, query);
  }
});
