/**
 * The contract's transport limits at the socket: 16 KB headers (431), 64
 * concurrent connections, the idle timeout. The idle timeout is shortened for
 * the test; production uses the contract's 30 s.
 */
import { assert, assertEquals, assertStringIncludes } from "@std/assert";
import { fixtureCatalog, sleep } from "../_catalog.ts";
import {
  modernRequest,
  postModern,
  rawHttp,
  startTestServer,
} from "../_server.ts";

function discoverWithHeader(size: number): string {
  const body = JSON.stringify(modernRequest("server/discover"));
  return `POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n` +
    `MCP-Protocol-Version: 2026-07-28\r\nMcp-Method: server/discover\r\nX-Pad: ${
      "a".repeat(size)
    }\r\n` +
    `Content-Length: ${body.length}\r\nConnection: close\r\n\r\n${body}`;
}

Deno.test("request headers over 16 KB are refused with 431", async () => {
  await using t = await startTestServer({ settings: { requireAuth: false } });
  assertEquals((await rawHttp(t.port, discoverWithHeader(15_000))).status, 200);
  assertEquals((await rawHttp(t.port, discoverWithHeader(17_000))).status, 431);
  assertEquals(
    (await rawHttp(t.port, discoverWithHeader(100_000))).status,
    431,
  );
});

Deno.test("at most 64 connections are served at once, and the server stays healthy", async () => {
  await using t = await startTestServer({ settings: { requireAuth: false } });
  const open: Deno.Conn[] = [];
  try {
    for (let i = 0; i < 64; i++) {
      open.push(await Deno.connect({ hostname: "127.0.0.1", port: t.port }));
    }
    await sleep(100);
    // The 65th connection is closed by the server without an answer.
    const extra = await rawHttp(t.port, discoverWithHeader(1)).catch(() => ({
      status: 0,
    }));
    assertEquals(extra.status, 0);
  } finally {
    for (const conn of open) conn.close();
  }
  await sleep(100);
  assertEquals((await rawHttp(t.port, discoverWithHeader(1))).status, 200);
});

Deno.test("an idle connection is closed after the idle timeout", async () => {
  await using t = await startTestServer({ idleTimeoutMs: 300 });
  const conn = await Deno.connect({ hostname: "127.0.0.1", port: t.port });
  const started = Date.now();
  const n = await conn.read(new Uint8Array(16)).catch(() => null);
  conn.close();
  assertEquals(n, null);
  const waited = Date.now() - started;
  assert(waited >= 250 && waited < 5_000, `closed after ${waited} ms`);
});

Deno.test("a connection that sends half its headers is closed after the idle timeout", async () => {
  await using t = await startTestServer({ idleTimeoutMs: 300 });
  const conn = await Deno.connect({ hostname: "127.0.0.1", port: t.port });
  await conn.write(
    new TextEncoder().encode("POST /mcp HTTP/1.1\r\nHost: 127.0"),
  );
  const buffer = new Uint8Array(1024);
  let text = "";
  for (;;) {
    const n = await conn.read(buffer).catch(() => null);
    if (n === null) break;
    text += new TextDecoder().decode(buffer.subarray(0, n));
  }
  conn.close();
  // Closed, possibly after a 408; never served.
  assertEquals(text.includes("200 OK"), false);
});

Deno.test("a request being answered is not cut by the idle timeout", async () => {
  await using t = await startTestServer({
    idleTimeoutMs: 300,
    catalog: fixtureCatalog(),
  });
  const answer = await postModern(
    t.url,
    modernRequest("tools/call", { name: "slow", arguments: { ms: 900 } }),
  );
  assertEquals(answer.status, 200);
  assertEquals(answer.json.result.structuredContent, {
    slept: 900,
    aborted: false,
  });
});

Deno.test("keep-alive answers announce the idle timeout", async () => {
  await using t = await startTestServer();
  const body = JSON.stringify(modernRequest("server/discover"));
  const answer = await rawHttp(
    t.port,
    `POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nMCP-Protocol-Version: 2026-07-28\r\n` +
      `Mcp-Method: server/discover\r\nContent-Length: ${body.length}\r\n\r\n${body}`,
  );
  assertStringIncludes(answer.head.toLowerCase(), "keep-alive: timeout=30");
});
