/**
 * Revoking a token (docs/wire.md "Authentication" 9, "Request lifecycle"): it is
 * refused within a second, its in-flight requests end with -33002, and its
 * legacy sessions are gone.
 */
import { waitUntil } from "../../_wait.ts";
import { assert, assertEquals } from "@std/assert";
import { fixtureCatalog } from "../../_catalog.ts";
import {
  initializeSession,
  modernRequest,
  postLegacy,
  postModern,
  startTestServer,
} from "../../_server.ts";

Deno.test("revoking a token cancels its running requests with -33002", async () => {
  await using t = await startTestServer({ catalog: fixtureCatalog() });
  const { plaintext, id } = await t.mint("readOnly", { name: "doomed" });
  const auth = { authorization: `Bearer ${plaintext}` };
  const running = postModern(
    t.url,
    modernRequest("tools/call", { name: "slow", arguments: { ms: 10_000 } }, 5),
    auth,
  );
  // Another token's request is untouched.
  const other = postModern(
    t.url,
    modernRequest("tools/call", { name: "slow", arguments: { ms: 300 } }, 5),
  );
  await waitUntil(
    "the 2 requests to be running",
    () => t.server.inFlightCount() >= 2,
  );
  const started = Date.now();
  await t.server.tokens.revoke(id);
  const answer = await running;
  assert(Date.now() - started < 1_000, `took ${Date.now() - started} ms`);
  assertEquals(answer.status, 200);
  assertEquals(answer.json.id, 5);
  assertEquals(answer.json.error.code, -33002);
  assertEquals(
    answer.json.error.message,
    "Request cancelled: its token was revoked",
  );
  assertEquals((await other).json.result.structuredContent.aborted, false);
});

Deno.test("a legacy session belongs to the token that created it, and dies with it", async () => {
  await using t = await startTestServer({ catalog: fixtureCatalog() });
  const a = await t.mint("readOnly", { name: "a" });
  const b = await t.mint("readOnly", { name: "b" });
  const session = await initializeSession(t.url, "2025-11-25", {
    authorization: `Bearer ${a.plaintext}`,
  });
  const ping = (token: string) =>
    postLegacy(t.url, { jsonrpc: "2.0", id: 1, method: "ping" }, {
      authorization: `Bearer ${token}`,
      "mcp-session-id": session,
    });
  assertEquals((await ping(a.plaintext)).status, 200);
  const foreign = await ping(b.plaintext);
  assertEquals(foreign.status, 404);
  assertEquals(foreign.json.error.code, -33001);
  await t.server.tokens.revoke(a.id);
  await t.server.syncTokens();
  assertEquals((await ping(a.plaintext)).status, 401);
  assertEquals(t.server.sessionCount(), 0);
});
