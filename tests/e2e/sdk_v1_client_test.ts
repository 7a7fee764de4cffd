/**
 * The v1 SDK client (legacy era) through StreamableHTTPClientTransport:
 * `initialize`, then `Mcp-Session-Id` on every request.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { assertEquals, assertExists } from "@std/assert";
import { fixtureCatalog } from "../_catalog.ts";
import { startTestServer } from "../_server.ts";

Deno.test("SDK v1 client connects through legacy initialize and lists tools", async () => {
  await using t = await startTestServer({ catalog: fixtureCatalog() });
  const sdk = new Client({ name: "dbport-e2e-v1", version: "1.0.0" }, {
    capabilities: {},
  });
  const transport = new StreamableHTTPClientTransport(new URL(t.url), {
    requestInit: { headers: { authorization: `Bearer ${t.token}` } },
  });
  await sdk.connect(transport);
  try {
    assertExists(transport.sessionId);
    assertEquals(sdk.getServerVersion()?.name, "dbport");
    assertEquals(sdk.getServerCapabilities()?.resources?.subscribe, false);
    const { tools } = await sdk.listTools();
    assertEquals(tools.map((tool: { name: string }) => tool.name), [
      "boom",
      "cached",
      "echo",
      "progress",
      "slow",
    ]);
    await sdk.ping();
    await sdk.setLoggingLevel("warning");
    const prompts = await sdk.listPrompts();
    assertEquals(
      prompts.prompts.map((prompt: { name: string }) => prompt.name),
      ["greet"],
    );
    const result = await sdk.callTool({ name: "echo", arguments: { a: 1 } });
    assertEquals(result.structuredContent, { args: { a: 1 } });
  } finally {
    await sdk.close();
  }
});

Deno.test("SDK v1 client pinned to 2025-06-18 is served in that revision", async () => {
  await using t = await startTestServer();
  const sdk = new Client({ name: "old", version: "1" }, { capabilities: {} });
  const transport = new StreamableHTTPClientTransport(new URL(t.url), {
    requestInit: { headers: { authorization: `Bearer ${t.token}` } },
  });
  // deno-lint-ignore no-explicit-any
  (transport as any).setProtocolVersion?.("2025-06-18");
  await sdk.connect(transport);
  try {
    // The default catalog: the database tools, with their output schemas.
    const { tools } = await sdk.listTools();
    // deno-lint-ignore no-explicit-any
    assertEquals(tools.map((tool: any) => tool.name), [
      "describe_table",
      "execute_query",
      "explain_query",
      "export_query",
      "list_connections",
      "list_schemas",
      "list_tables",
      "search_schema",
    ]);
  } finally {
    await sdk.close();
  }
});
