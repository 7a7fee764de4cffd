/**
 * Several clients on one machine, as users run them: editors side by side
 * behind one bridge token (each numbering its requests from 0), a client
 * cancelling its own request, and more connections than the server serves
 * at once.
 */

import { Client as ClientV2 } from "@modelcontextprotocol/client";
import { StdioClientTransport as StdioV2 } from "@modelcontextprotocol/client/stdio";
import { Client as ClientV1 } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport as StdioV1 } from "@modelcontextprotocol/sdk/client/stdio.js";
import { CallToolResultSchema } from "@modelcontextprotocol/sdk/types.js";
import { assert, assertEquals } from "@std/assert";
import { BRIDGE_PERMISSIONS } from "../../lib/cli/integration.ts";
import { savedConnection, serverWith } from "../_connections.ts";
import { openFixture } from "../_db.ts";
import { rawHttp, startTestServer } from "../_server.ts";

const BRIDGE = new URL("../../bridge.ts", import.meta.url).pathname;
const ARGS = ["run", ...BRIDGE_PERMISSIONS, BRIDGE];
/** Seconds of work on SQLite. */
const SLOW =
  "with recursive c(x) as (select 1 union all select x + 1 from c where x < 15000000) select count(*) as n from c";

Deno.test("two stdio clients behind one bridge token: equal ids both answered, and one's cancel leaves the other's request alone", async () => {
  await using fixture = await openFixture("sqlite");
  const saved = savedConnection(fixture, "Shared");
  await using server = await serverWith([saved]);
  const env = { DBPORT_HOME: server.home, DBPORT_LAUNCH: "true" };
  const v2 = new ClientV2({ name: "editor-a", version: "1" });
  await v2.connect(new StdioV2({ command: Deno.execPath(), args: ARGS, env }));
  const v1 = new ClientV1({ name: "editor-b", version: "1" });
  await v1.connect(new StdioV1({ command: Deno.execPath(), args: ARGS, env }));
  try {
    const args = { connection_id: saved.id, query: SLOW };
    // Both clients' first calls carry the same JSON-RPC id, at the same time.
    const [a, b] = await Promise.all([
      v2.callTool({ name: "execute_query", arguments: args }),
      v1.callTool(
        { name: "execute_query", arguments: args },
        CallToolResultSchema,
      ),
    ]);
    assert(!a.isError, JSON.stringify(a));
    assert(!b.isError, JSON.stringify(b));

    // Client A cancels its request; client B's, with the same id, completes.
    const controller = new AbortController();
    const cancelled = v2.callTool(
      { name: "execute_query", arguments: args },
      { signal: controller.signal },
    ).then(() => "answered", () => "cancelled");
    const kept = v1.callTool(
      { name: "execute_query", arguments: args },
      CallToolResultSchema,
    );
    // The call crosses the bridge and runs (SLOW takes seconds) before it is
    // cancelled; the bridge's process shows nothing to wait on.
    await new Promise((resolve) => setTimeout(resolve, 200));
    controller.abort();
    assertEquals(await cancelled, "cancelled");
    const other = await kept;
    assert(!other.isError, JSON.stringify(other));
    assertEquals(
      (other.structuredContent as { rows: unknown[][] }).rows[0]![0],
      15000000,
    );
  } finally {
    await v2.close();
    await v1.close();
    // The SDKs' stdio close() arms a 2 s kill timer it never clears.
    await new Promise((resolve) => setTimeout(resolve, 2_100));
  }
});

Deno.test("the 65th connection waits for a slot, then gets 503 with Retry-After and a JSON body", async () => {
  await using t = await startTestServer();
  const held: Deno.Conn[] = [];
  try {
    for (let i = 0; i < 64; i++) {
      held.push(await Deno.connect({ hostname: "127.0.0.1", port: t.port }));
    }
    const started = performance.now();
    const refused = await rawHttp(
      t.port,
      "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 0\r\n\r\n",
    );
    const waited = performance.now() - started;
    assertEquals(refused.status, 503);
    assert(/retry-after: 1/i.test(refused.head), refused.head);
    assertEquals(JSON.parse(refused.body).error, "too_many_connections");
    assert(waited >= 1_500, `answered after ${waited} ms, without waiting`);

    // A slot that frees while one waits lets it in.
    const waiting = rawHttp(
      t.port,
      "GET /nowhere HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n",
    );
    // The waiting connection is accepted and queued for a slot first; the
    // listener exposes no count of those waiting.
    await new Promise((resolve) => setTimeout(resolve, 300));
    held.pop()!.close();
    const admitted = await waiting;
    assertEquals(admitted.status, 404);
  } finally {
    for (const conn of held) conn.close();
  }
});
