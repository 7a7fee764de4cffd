/**
 * MCP Apps behind the stdio bridge (docs/apps.md): a legacy client that
 * declares the extension in `initialize` (the v1 SDK, as desktop clients
 * spawn the bridge) gets the views' links in tools/list and on results, and
 * reads a view; the bridge carries its capabilities on every request.
 */

import { Client as ClientV1 } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport as StdioV1 } from "@modelcontextprotocol/sdk/client/stdio.js";
import { assertEquals, assertMatch } from "@std/assert";
import { BRIDGE_PERMISSIONS } from "../../lib/cli/integration.ts";
import type { JsonObject } from "../../lib/protocol/jsonrpc.ts";
import { sleep } from "../../lib/base/sleep.ts";
import { savedConnection, serverWith } from "../_connections.ts";
import { openFixture } from "../_db.ts";

const BRIDGE = new URL("../../bridge.ts", import.meta.url).pathname;
const MIME = "text/html;profile=mcp-app";

Deno.test("v1 SDK client over the bridge declaring MCP Apps: the views' links, and a view read", async () => {
  await using fixture = await openFixture("sqlite");
  const saved = savedConnection(fixture, "Shop");
  await using server = await serverWith([saved]);
  const client = new ClientV1(
    { name: "apps-host", version: "1.0.0" },
    {
      capabilities: {
        extensions: { "io.modelcontextprotocol/ui": { mimeTypes: [MIME] } },
      } as JsonObject,
    },
  );
  await client.connect(
    new StdioV1({
      command: Deno.execPath(),
      args: ["run", ...BRIDGE_PERMISSIONS, BRIDGE],
      env: { DBPORT_HOME: server.home },
      stderr: "ignore",
    }),
  );
  try {
    // The bridge declares no extension itself, as the server does not.
    assertEquals(
      (client.getServerCapabilities() as JsonObject).extensions,
      undefined,
    );
    const tools = (await client.listTools()).tools as JsonObject[];
    const linked = Object.fromEntries(
      tools.map((tool) => [
        tool.name,
        ((tool._meta as JsonObject | undefined)?.ui as JsonObject | undefined)
          ?.resourceUri ?? null,
      ]),
    );
    assertEquals(linked.execute_query, "ui://dbport/result-grid");
    assertEquals(linked.describe_table, "ui://dbport/table-card");
    assertEquals(linked.explain_query, "ui://dbport/plan-tree");
    assertEquals(linked.list_tables, null);
    const result = await client.callTool({
      name: "execute_query",
      arguments: { connection_id: "Shop", query: "select name from authors" },
    }) as JsonObject;
    assertEquals(
      (result._meta as JsonObject).ui,
      { resourceUri: "ui://dbport/result-grid" },
    );
    const view = await client.readResource({ uri: "ui://dbport/result-grid" });
    const [content] = view.contents as JsonObject[];
    assertEquals(content!.mimeType, MIME);
    assertMatch(content!.text as string, /^<!DOCTYPE html>/);
  } finally {
    await client.close();
    // The SDK's stdio close races the child's exit against a 2 s timer it
    // never clears; let it run out inside this test.
    await sleep(2_100);
  }
});
