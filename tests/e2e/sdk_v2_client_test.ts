/**
 * The official TypeScript SDK v2 client against a started server: pinned to
 * 2026-07-28, and with `auto` negotiation (it probes server/discover).
 */
import {
  Client,
  StreamableHTTPClientTransport,
} from "@modelcontextprotocol/client";
import { assertEquals, assertExists } from "@std/assert";
import { fixtureCatalog, numberedTools } from "../_catalog.ts";
import { startTestServer } from "../_server.ts";

function client(mode: "auto" | { pin: string }) {
  return new Client(
    { name: "dbport-e2e", version: "1.0.0" },
    { capabilities: {}, versionNegotiation: { mode } },
  );
}

Deno.test("SDK v2 client pinned to 2026-07-28 connects and reads discover", async () => {
  await using t = await startTestServer();
  const sdk = client({ pin: "2026-07-28" });
  await sdk.connect(
    new StreamableHTTPClientTransport(new URL(t.url), {
      requestInit: { headers: { authorization: `Bearer ${t.token}` } },
    }),
  );
  try {
    assertEquals(sdk.getNegotiatedProtocolVersion(), "2026-07-28");
    const discover = sdk.getDiscoverResult();
    assertExists(discover);
    assertEquals(discover.supportedVersions.includes("2026-07-28"), true);
    assertEquals(discover._meta?.["dbport/instanceId"], t.server.instanceId);
    assertEquals(sdk.getServerVersion()?.name, "dbport");
    assertEquals(sdk.getServerCapabilities()?.resources?.subscribe, true);
    assertEquals(typeof sdk.getInstructions(), "string");
  } finally {
    await sdk.close();
  }
});

Deno.test("SDK v2 client with auto negotiation picks the modern era and pages tools", async () => {
  await using t = await startTestServer({
    catalog: fixtureCatalog(numberedTools(60)),
  });
  const sdk = client("auto");
  await sdk.connect(
    new StreamableHTTPClientTransport(new URL(t.url), {
      requestInit: { headers: { authorization: `Bearer ${t.token}` } },
    }),
  );
  try {
    assertEquals(sdk.getNegotiatedProtocolVersion(), "2026-07-28");
    // The v2 client follows nextCursor itself: 65 tools arrive over two pages
    // of at most 50 each.
    const all = await sdk.listTools();
    assertEquals(all.tools.length, 65);
    assertEquals(new Set(all.tools.map((tool) => tool.name)).size, 65);
    assertEquals(all.nextCursor, undefined);
    const result = await sdk.callTool({
      name: "echo",
      arguments: { hello: "world" },
    });
    assertEquals(result.structuredContent, { args: { hello: "world" } });
  } finally {
    await sdk.close();
  }
});

Deno.test("SDK v2 client receives progress notifications on the request's own stream", async () => {
  await using t = await startTestServer({ catalog: fixtureCatalog() });
  const sdk = client({ pin: "2026-07-28" });
  await sdk.connect(
    new StreamableHTTPClientTransport(new URL(t.url), {
      requestInit: { headers: { authorization: `Bearer ${t.token}` } },
    }),
  );
  try {
    const seen: number[] = [];
    const result = await sdk.callTool({ name: "progress", arguments: {} }, {
      onprogress: (progress) => seen.push(progress.progress),
    });
    assertEquals(seen, [0, 0.3, 1]);
    assertEquals(result.structuredContent, { done: true });
  } finally {
    await sdk.close();
  }
});
