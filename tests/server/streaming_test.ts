/**
 * SSE answers (docs/wire.md "Progress streaming", "Progress streaming") and
 * subscriptions/listen, read frame by frame.
 */
import { assertEquals, assertStringIncludes } from "@std/assert";
import { fixtureCatalog, sleep } from "../_catalog.ts";
import { waitUntil } from "../_wait.ts";
import {
  modernHeaders,
  modernRequest,
  postModern,
  startTestServer,
} from "../_server.ts";
import { parseSseEvents } from "../../lib/protocol/sse.ts";

/** Read an SSE response into frames (data payloads) and raw text. */
async function readStream(
  response: Response,
): Promise<{ frames: unknown[]; raw: string }> {
  const raw = await response.text();
  return {
    frames: parseSseEvents(raw).events.map((data) => JSON.parse(data)),
    raw,
  };
}

Deno.test("progress frames advance, then the response is the final frame", async () => {
  await using t = await startTestServer({ catalog: fixtureCatalog() });
  const body = modernRequest(
    "tools/call",
    { name: "progress", arguments: {} },
    "p1",
    { progressToken: "tok" },
  );
  const response = await fetch(t.url, {
    method: "POST",
    headers: { ...modernHeaders(body), authorization: `Bearer ${t.token}` },
    body: JSON.stringify(body),
  });
  assertEquals(response.headers.get("content-type"), "text/event-stream");
  assertEquals(response.headers.get("x-accel-buffering"), "no");
  const { frames, raw } = await readStream(response);
  assertEquals(raw.includes("event:"), false);
  assertEquals(frames, [
    {
      jsonrpc: "2.0",
      method: "notifications/progress",
      params: {
        progressToken: "tok",
        progress: 0,
        total: 1,
        message: "starting",
      },
    },
    {
      jsonrpc: "2.0",
      method: "notifications/progress",
      params: {
        progressToken: "tok",
        progress: 0.3,
        total: 1,
        message: "working",
      },
    },
    {
      jsonrpc: "2.0",
      method: "notifications/progress",
      params: { progressToken: "tok", progress: 1, total: 1, message: "done" },
    },
    frames[3],
  ]);
  const last = frames[3] as { id: string; result: { resultType: string } };
  assertEquals(last.id, "p1");
  assertEquals(last.result.resultType, "complete");
});

Deno.test("an integer progressToken is echoed as an integer", async () => {
  await using t = await startTestServer({ catalog: fixtureCatalog() });
  const body = modernRequest(
    "tools/call",
    { name: "progress", arguments: {} },
    3,
    { progressToken: 0 },
  );
  const response = await fetch(t.url, {
    method: "POST",
    headers: { ...modernHeaders(body), authorization: `Bearer ${t.token}` },
    body: JSON.stringify(body),
  });
  const { frames } = await readStream(response);
  assertEquals(
    (frames[0] as { params: { progressToken: unknown } }).params.progressToken,
    0,
  );
});

Deno.test("without a progressToken no stream is opened and progress is not sent", async () => {
  await using t = await startTestServer({ catalog: fixtureCatalog() });
  const answer = await postModern(
    t.url,
    modernRequest("tools/call", { name: "progress", arguments: {} }),
  );
  assertEquals(answer.headers.get("content-type"), "application/json");
  assertEquals(answer.json.result.structuredContent, { done: true });
});

Deno.test("an error before any frame keeps its HTTP status even with a progressToken", async () => {
  await using t = await startTestServer({ catalog: fixtureCatalog() });
  const answer = await postModern(
    t.url,
    modernRequest("tools/call", { name: "nope", arguments: {} }, 1, {
      progressToken: "x",
    }),
  );
  assertEquals(answer.status, 400);
  assertEquals(answer.json.error.code, -32602);
});

Deno.test("a quiet open stream gets keep-alive comment frames", async () => {
  await using t = await startTestServer({
    catalog: fixtureCatalog(),
    keepAliveMs: 50,
  });
  const body = modernRequest(
    "tools/call",
    { name: "slow", arguments: { ms: 400, progress: true } },
    1,
    { progressToken: "k" },
  );
  const response = await fetch(t.url, {
    method: "POST",
    headers: { ...modernHeaders(body), authorization: `Bearer ${t.token}` },
    body: JSON.stringify(body),
  });
  const { raw, frames } = await readStream(response);
  assertEquals(frames.length, 2);
  const comments =
    raw.split("\n\n").filter((block) => block === ": keepalive").length;
  assertEquals(
    comments >= 3,
    true,
    `${comments} keep-alive frames in ${JSON.stringify(raw)}`,
  );
});

Deno.test("subscriptions/listen acknowledges first, then ends with a complete result at shutdown", async () => {
  const t = await startTestServer({ keepAliveMs: 50 });
  try {
    const body = modernRequest("subscriptions/listen", {
      notifications: {
        toolsListChanged: true,
        promptsListChanged: true,
        resourcesListChanged: true,
        resourceSubscriptions: ["test://x"],
        unknownKind: true,
      },
    }, "listen-1");
    const response = await fetch(t.url, {
      method: "POST",
      headers: { ...modernHeaders(body), authorization: `Bearer ${t.token}` },
      body: JSON.stringify(body),
    });
    assertEquals(response.headers.get("content-type"), "text/event-stream");
    const reading = readStream(response);
    // The 50 ms keep-alive timer (keepAliveMs) fires at least once.
    await sleep(200);
    await t.server.stop();
    const { frames, raw } = await reading;
    assertStringIncludes(raw, ": keepalive");
    assertEquals(frames[0], {
      jsonrpc: "2.0",
      method: "notifications/subscriptions/acknowledged",
      // Tools and prompts never change, an unknown kind and a URI that is
      // not a schema of ours are dropped: only the resource list is honoured.
      params: {
        notifications: { resourcesListChanged: true },
        _meta: { "io.modelcontextprotocol/subscriptionId": "listen-1" },
      },
    });
    const last = frames[frames.length - 1] as {
      id: string;
      result: Record<string, unknown>;
    };
    assertEquals(last.id, "listen-1");
    assertEquals(last.result.resultType, "complete");
    assertEquals(
      (last.result._meta as Record<string, unknown>)[
        "io.modelcontextprotocol/subscriptionId"
      ],
      "listen-1",
    );
  } finally {
    await t[Symbol.asyncDispose]();
  }
});

Deno.test("subscriptions/listen ends when the client closes the stream", async () => {
  await using t = await startTestServer();
  const body = modernRequest(
    "subscriptions/listen",
    { notifications: {} },
    "l2",
  );
  const controller = new AbortController();
  const response = await fetch(t.url, {
    method: "POST",
    headers: { ...modernHeaders(body), authorization: `Bearer ${t.token}` },
    body: JSON.stringify(body),
    signal: controller.signal,
  });
  const reader = response.body!.getReader();
  await reader.read();
  controller.abort();
  await reader.cancel().catch(() => {});
  // Once the client has left, id "l2" is free again: a new request with that
  // id is no longer a duplicate of a running one (-32600).
  await waitUntil(
    'id "l2" to be free once its client left',
    async () =>
      (await postModern(t.url, modernRequest("tools/list", {}, "l2")))
        .status === 200,
  );
});

Deno.test("subscriptions/listen refuses an ill-typed filter with -32602", async () => {
  await using t = await startTestServer();
  for (
    const notifications of ["all", { toolsListChanged: "yes" }, {
      resourceSubscriptions: [1],
    }]
  ) {
    const answer = await postModern(
      t.url,
      modernRequest("subscriptions/listen", { notifications }),
    );
    assertEquals(
      [answer.status, answer.json.error.code],
      [400, -32602],
      JSON.stringify(notifications),
    );
  }
});
