/**
 * The fixes of the outsider findings of stop 44 (/work/notes/fix44.md),
 * end to end: what a unit test cannot show (the event loop, a pool shared
 * by two tokens, connection slots, files on disk).
 */

import { assert, assertEquals } from "@std/assert";
import { savedConnection, serverWith } from "../_connections.ts";
import { openFixture } from "../_db.ts";
import { type Answer, envelope, post } from "../_server.ts";
import { callTool } from "../_tool_call.ts";

/** A tools/call body whose argument `field` is `depth` nested arrays. */
function deepBody(connectionId: string, field: string, depth: number): string {
  const deep = "[".repeat(depth) + "]".repeat(depth);
  const value = field === "params" ? `[${deep}]` : deep;
  const meta = JSON.stringify(envelope());
  return `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"execute_query","arguments":{"connection_id":"${connectionId}","query":"select 1","${field}":${value}},"_meta":${meta}}}`;
}

/** The longest stall of this process's event loop while `work` runs. */
async function longestStall(work: Promise<unknown>): Promise<number> {
  let last = performance.now();
  let longest = 0;
  const timer = setInterval(() => {
    const now = performance.now();
    longest = Math.max(longest, now - last);
    last = now;
  }, 20);
  try {
    await work;
  } finally {
    clearInterval(timer);
  }
  return longest;
}

const TOOL_CALL_HEADERS = {
  "content-type": "application/json",
  "accept": "application/json, text/event-stream",
  "mcp-protocol-version": "2026-07-28",
  "mcp-method": "tools/call",
  "mcp-name": "execute_query",
};

Deno.test("a body nested millions deep is refused without stalling, with or without a token", async () => {
  await using fixture = await openFixture("sqlite");
  const shop = savedConnection(fixture, "fix44_lite");
  await using server = await serverWith([shop]);
  const body = deepBody(shop.id, "x", 4_900_000);
  let wrong: Answer | null = null;
  const stall = await longestStall(
    post(server.url, body, {
      ...TOOL_CALL_HEADERS,
      authorization: "Bearer dbp_not_a_token",
    }).then((answer) => wrong = answer),
  );
  assertEquals(wrong!.status, 401);
  assert(stall < 1_000, `the event loop stalled ${Math.round(stall)} ms`);
  const answer = await post(server.url, body, TOOL_CALL_HEADERS);
  assertEquals(answer.status, 400);
  assertEquals(answer.json.error.code, -32602);
  assertEquals(answer.json.error.data, { argument: "x" });
});

Deno.test("a mismatched Mcp-Param header over a deep value answers a short 400", async () => {
  await using fixture = await openFixture("sqlite");
  const shop = savedConnection(fixture, "fix44_lite");
  await using server = await serverWith([shop]);
  const body = deepBody(shop.id, "x", 60);
  const answer = await post(server.url, body, {
    ...TOOL_CALL_HEADERS,
    "mcp-param-x": "1",
  });
  assertEquals(answer.status, 400);
  assertEquals(answer.json.error.code, -32020);
  assert(answer.text.length < 10_000, `${answer.text.length} bytes`);
});

Deno.test("deeply nested bind params answer -32602 naming params", async () => {
  await using fixture = await openFixture("sqlite");
  const shop = savedConnection(fixture, "fix44_lite");
  await using server = await serverWith([shop]);
  for (const depth of [50, 1_000_000]) {
    const answer = await post(
      server.url,
      deepBody(shop.id, "params", depth),
      TOOL_CALL_HEADERS,
    );
    assertEquals(answer.json?.error?.code, -32602, answer.text.slice(0, 200));
    assertEquals(answer.json.error.data?.argument, "params");
  }
});

Deno.test("mariadb: one token's slow reads leave a session for another token's read", async () => {
  await using fixture = await openFixture("mysql");
  const shop = savedConnection(fixture, "fix44_my");
  await using server = await serverWith([shop]);
  const a = `Bearer ${
    (await server.mint("readOnly", { name: "A" })).plaintext
  }`;
  const b = `Bearer ${
    (await server.mint("readOnly", { name: "B" })).plaintext
  }`;
  const args = { connection_id: shop.id, query: "select 1" };
  await callTool(server, "execute_query", args, { authorization: b });
  const flood = Array.from(
    { length: 6 },
    () =>
      callTool(server, "execute_query", {
        connection_id: shop.id,
        query: "select sleep(4)",
      }, { authorization: a }),
  );
  await new Promise((resolve) => setTimeout(resolve, 500));
  const started = performance.now();
  const answer = await callTool(server, "execute_query", args, {
    authorization: b,
  });
  const waited = performance.now() - started;
  const slow = await Promise.all(flood);
  assertEquals(answer.json.result.isError, undefined, answer.text);
  assert(waited < 2_500, `token B waited ${Math.round(waited)} ms`);
  for (const done of slow) assertEquals(done.json.result.isError, undefined);
});
