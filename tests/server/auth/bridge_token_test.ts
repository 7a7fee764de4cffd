/**
 * The bridge token (docs/wire.md "The stdio bridge" 3, "Limits"): minted at start
 * into the handshake, readWrite, rotated 15 minutes before its one-hour
 * expiry with the handshake rewritten, the old one valid until it expires,
 * never listed, gone at shutdown.
 */
import { waitUntil } from "../../_wait.ts";
import { assert, assertEquals, assertNotEquals } from "@std/assert";
import { parseHandshake } from "../../../lib/protocol/handshake.ts";
import { fixtureCatalog } from "../../_catalog.ts";
import { fakeClock } from "../../_clock.ts";
import {
  initializeSession,
  modernRequest,
  postLegacy,
  postModern,
  startTestServer,
  type TestServer,
} from "../../_server.ts";

async function handshake(t: TestServer) {
  const parsed = parseHandshake(
    await Deno.readTextFile(t.server.handshakePath),
  );
  assert(parsed.ok);
  return parsed.handshake;
}

function callTool(t: TestServer, name: string, token: string) {
  return postModern(
    t.url,
    modernRequest("tools/call", { name, arguments: {} }),
    { authorization: `Bearer ${token}` },
  );
}

const MINUTE = 60_000;

Deno.test("the handshake carries a readWrite bridge token that expires in one hour", async () => {
  const clock = fakeClock();
  await using t = await startTestServer({
    catalog: fixtureCatalog(),
    now: clock.now,
  });
  const { token, expiresAt } = await handshake(t);
  assert(token !== null && /^dbp_[A-Za-z0-9_-]{43}$/.test(token), token!);
  assertEquals(Date.parse(expiresAt!), clock.now() + 60 * MINUTE);
  if (Deno.build.os !== "windows") {
    assertEquals(
      (await Deno.stat(t.server.handshakePath)).mode! & 0o777,
      0o600,
    );
  }
  assertEquals((await callTool(t, "writer", token)).status, 200);
  const admin = await callTool(t, "approver", token);
  assertEquals(admin.status, 403);
  assertEquals(admin.json.error.data, { requiredScopes: ["admin"] });
  // Never listed among the user's tokens.
  const listed = await t.server.tokens.list();
  assertEquals(listed.map((token) => token.name), ["test readOnly"]);
});

Deno.test("the bridge token rotates 15 minutes before expiry; the old one lasts until it expires", async () => {
  const clock = fakeClock();
  await using t = await startTestServer({
    catalog: fixtureCatalog(),
    now: clock.now,
  });
  const first = await handshake(t);
  clock.advance(44 * MINUTE);
  await t.server.rotation.tick();
  assertEquals((await handshake(t)).token, first.token);

  clock.advance(MINUTE);
  await t.server.rotation.tick();
  const second = await handshake(t);
  assertNotEquals(second.token, first.token);
  assertEquals(Date.parse(second.expiresAt!), clock.now() + 60 * MINUTE);
  assertEquals(second.instanceId, first.instanceId);
  assertEquals(second.port, first.port);
  assertEquals((await callTool(t, "echo", first.token!)).status, 200);
  assertEquals((await callTool(t, "echo", second.token!)).status, 200);

  // The old token's hour is up: refused (401), the new one still works.
  clock.advance(15 * MINUTE);
  await t.server.rotation.tick();
  const old = await callTool(t, "echo", first.token!);
  assertEquals(old.status, 401);
  assertEquals((await callTool(t, "echo", second.token!)).status, 200);
});

Deno.test("rotation keeps the bridge's principal: its session survives a new token", async () => {
  const clock = fakeClock();
  await using t = await startTestServer({
    catalog: fixtureCatalog(),
    now: clock.now,
  });
  const first = (await handshake(t)).token!;
  const session = await initializeSession(t.url, "2025-11-25", {
    authorization: `Bearer ${first}`,
  });
  clock.advance(45 * MINUTE);
  await t.server.rotation.tick();
  const second = (await handshake(t)).token!;
  const answer = await postLegacy(t.url, {
    jsonrpc: "2.0",
    id: 1,
    method: "ping",
  }, { authorization: `Bearer ${second}`, "mcp-session-id": session });
  assertEquals(answer.status, 200);
});

Deno.test("a user token merely named __stdio_bridge__ gets nothing special", async () => {
  await using t = await startTestServer({ catalog: fixtureCatalog() });
  const { plaintext } = await t.mint("readOnly", { name: "__stdio_bridge__" });
  const answer = await callTool(t, "writer", plaintext);
  assertEquals(answer.status, 403);
  const bridge = (await handshake(t)).token!;
  // And it does not share the bridge's requests: it cannot cancel them.
  const running = postModern(
    t.url,
    modernRequest("tools/call", { name: "slow", arguments: { ms: 300 } }, 9),
    { authorization: `Bearer ${bridge}` },
  );
  await waitUntil(
    "the request to be running",
    () => t.server.inFlightCount() >= 1,
  );
  await postModern(t.url, {
    jsonrpc: "2.0",
    method: "notifications/cancelled",
    params: { requestId: 9 },
  }, { authorization: `Bearer ${plaintext}` });
  assertEquals((await running).json.result.structuredContent.aborted, false);
});

Deno.test("the bridge token dies with the server", async () => {
  const home = await Deno.makeTempDir({ prefix: "dbport-bridge-" });
  try {
    let token: string;
    {
      await using t = await startTestServer({ home });
      token = (await handshake(t)).token!;
    }
    await using again = await startTestServer({ home });
    const answer = await postModern(
      again.url,
      modernRequest("server/discover"),
      { authorization: `Bearer ${token}` },
    );
    assertEquals(answer.status, 401);
    assertNotEquals((await handshake(again)).token, token);
  } finally {
    await Deno.remove(home, { recursive: true });
  }
});
