/**
 * The wire reference's pre-dispatch checks, in order: Host, Origin, body cap,
 * notifications, responses sent to the server.
 */
import { assert, assertEquals, assertStringIncludes } from "@std/assert";
import { sleep } from "../_catalog.ts";
import {
  modernRequest,
  post,
  postLegacy,
  postModern,
  rawHttp,
  startTestServer,
} from "../_server.ts";

function requestWithHost(host: string, extra = ""): string {
  const body = JSON.stringify(modernRequest("server/discover"));
  return `POST /mcp HTTP/1.1\r\nHost: ${host}\r\nContent-Type: application/json\r\n` +
    `MCP-Protocol-Version: 2026-07-28\r\nMcp-Method: server/discover\r\n${extra}` +
    `Content-Length: ${body.length}\r\nConnection: close\r\n\r\n${body}`;
}

Deno.test("Host must name a loopback host", async () => {
  await using t = await startTestServer();
  for (
    const host of [
      "evil.example",
      `evil.example:${t.port}`,
      "127.0.0.2",
      "localhost.",
      "0.0.0.0",
      "[::2]",
    ]
  ) {
    const answer = await rawHttp(t.port, requestWithHost(host));
    assertEquals(answer.status, 403, host);
    assertEquals(JSON.parse(answer.body).error, "forbidden_host", host);
  }
});

Deno.test("Host with a port must name the bound port", async () => {
  await using t = await startTestServer();
  const answer = await rawHttp(
    t.port,
    requestWithHost(`127.0.0.1:${t.port === 65535 ? 1 : t.port + 1}`),
  );
  assertEquals(answer.status, 403);
  assertEquals(JSON.parse(answer.body).error, "forbidden_host");
});

Deno.test("Host is accepted as localhost, 127.0.0.1 or [::1], with or without the port", async () => {
  await using t = await startTestServer({ settings: { requireAuth: false } });
  for (
    const host of [
      "localhost",
      "LOCALHOST",
      `localhost:${t.port}`,
      "127.0.0.1",
      `127.0.0.1:${t.port}`,
      "[::1]",
      `[::1]:${t.port}`,
    ]
  ) {
    const answer = await rawHttp(t.port, requestWithHost(host));
    assertEquals(answer.status, 200, host);
  }
});

Deno.test("a missing Host is refused", async () => {
  await using t = await startTestServer();
  const answer = await rawHttp(
    t.port,
    "POST /mcp HTTP/1.0\r\nContent-Length: 0\r\n\r\n",
  );
  assertEquals(answer.status, 403);
});

Deno.test("Host is checked before Origin, on every path", async () => {
  await using t = await startTestServer();
  const answer = await rawHttp(
    t.port,
    requestWithHost("evil.example", "Origin: https://evil.example\r\n"),
  );
  assertEquals(JSON.parse(answer.body).error, "forbidden_host");
  const other = await rawHttp(
    t.port,
    "GET /other HTTP/1.1\r\nHost: evil.example\r\nConnection: close\r\n\r\n",
  );
  assertEquals(other.status, 403);
});

Deno.test("Origin must be absent or one of the allowed origins", async () => {
  await using t = await startTestServer();
  for (
    const origin of [
      "https://evil.example",
      "http://localhost:3000",
      "https://claude.ai.evil.example",
      "null",
    ]
  ) {
    const answer = await postModern(t.url, modernRequest("server/discover"), {
      origin,
    });
    assertEquals(answer.status, 403, origin);
    assertEquals(answer.json.error, "forbidden_origin", origin);
    assertStringIncludes(answer.json.message, origin);
  }
  for (const origin of ["https://claude.ai", "https://chatgpt.com"]) {
    assertEquals(
      (await postModern(t.url, modernRequest("server/discover"), { origin }))
        .status,
      200,
    );
  }
});

Deno.test("allowedOrigins in settings replaces the default origins", async () => {
  await using t = await startTestServer({
    settings: { allowedOrigins: ["https://app.example"] },
  });
  assertEquals(
    (await postModern(t.url, modernRequest("server/discover"), {
      origin: "https://app.example",
    })).status,
    200,
  );
  assertEquals(
    (await postModern(t.url, modernRequest("server/discover"), {
      origin: "https://claude.ai",
    })).status,
    403,
  );
});

Deno.test("a body over 10 MB declared by Content-Length is -33005 (413)", async () => {
  await using t = await startTestServer();
  const body = new Uint8Array(10 * 1024 * 1024 + 1).fill(0x20);
  const answer = await post(t.url, body, {
    "content-type": "application/json",
  });
  assertEquals(answer.status, 413);
  assertEquals(answer.json.error.code, -33005);
  assertEquals(answer.json.id, null);
  assertEquals(answer.headers.get("connection"), "close");
  await sleep(600); // the adapter's 500 ms drain timer for the unread body
});

Deno.test("a body of exactly 10 MB is read and parsed", async () => {
  await using t = await startTestServer();
  const json = JSON.stringify(modernRequest("server/discover"));
  const body = new Uint8Array(10 * 1024 * 1024).fill(0x20);
  body.set(new TextEncoder().encode(json), 0);
  const answer = await post(t.url, body, {
    "content-type": "application/json",
    "mcp-protocol-version": "2026-07-28",
    "mcp-method": "server/discover",
  });
  assertEquals(answer.status, 200);
});

/** `Conn.write` may write part of a buffer: loop until all of it is out. */
async function writeAll(conn: Deno.Conn, bytes: Uint8Array): Promise<void> {
  let offset = 0;
  while (offset < bytes.length) {
    offset += await conn.write(bytes.subarray(offset));
  }
}

Deno.test("a chunked body is refused once it passes 10 MB, before the rest is read", async () => {
  await using t = await startTestServer();
  const conn = await Deno.connect({ hostname: "127.0.0.1", port: t.port });
  const head =
    `POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n`;
  await conn.write(new TextEncoder().encode(head));
  const chunk = new Uint8Array(1024 * 1024).fill(0x20);
  const frame = new Uint8Array([
    ...new TextEncoder().encode(`${chunk.length.toString(16)}\r\n`),
    ...chunk,
    ...new TextEncoder().encode("\r\n"),
  ]);
  let sent = 0;
  const reading = (async () => {
    const buffer = new Uint8Array(4096);
    const n = await conn.read(buffer);
    return n === null ? "" : new TextDecoder().decode(buffer.subarray(0, n));
  })();
  let answered = false;
  reading.then(() => answered = true);
  // Offer up to 100 MB; the server must answer long before that.
  for (let i = 0; i < 100 && !answered; i++) {
    try {
      await writeAll(conn, frame);
      sent++;
    } catch {
      break;
    }
  }
  const text = await reading;
  conn.close();
  assertStringIncludes(text, "HTTP/1.1 413");
  assert(sent < 40, `sent ${sent} MB before the refusal`);
  await sleep(600); // the adapter's 500 ms drain timer for the unread body
});

Deno.test("a notification is accepted with 202 and dropped, without Mcp-Method", async () => {
  await using t = await startTestServer();
  for (
    const method of [
      "notifications/initialized",
      "notifications/progress",
      "notifications/whatever",
    ]
  ) {
    const modern = await post(
      t.url,
      JSON.stringify({ jsonrpc: "2.0", method, params: { _meta: {} } }),
      {
        "content-type": "application/json",
        "mcp-protocol-version": "2026-07-28",
      },
    );
    assertEquals(modern.status, 202, method);
    assertEquals(modern.text, "");
    const legacy = await postLegacy(t.url, { jsonrpc: "2.0", method });
    assertEquals(legacy.status, 202, method);
  }
});

Deno.test("notifications/cancelled is answered 202 whether or not anything matched", async () => {
  await using t = await startTestServer();
  for (const requestId of [1, "nope", 1.5, null, {}, 9007199254740993]) {
    const answer = await postLegacy(t.url, {
      jsonrpc: "2.0",
      method: "notifications/cancelled",
      params: { requestId, reason: "test" },
    });
    assertEquals(answer.status, 202, JSON.stringify(requestId));
  }
});

Deno.test("a JSON-RPC response sent to the server is -32600", async () => {
  await using t = await startTestServer();
  for (
    const body of [{ jsonrpc: "2.0", id: 5, result: {} }, {
      jsonrpc: "2.0",
      id: "e",
      error: { code: 1, message: "x" },
    }]
  ) {
    const answer = await postLegacy(t.url, body);
    assertEquals(answer.status, 400);
    assertEquals(answer.json.error.code, -32600);
    assertEquals(answer.json.id, body.id);
  }
});
