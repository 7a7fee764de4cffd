// deno-lint-ignore-file no-explicit-any -- SDK results are untyped JSON
/**
 * `deno task serve` on an empty app directory: it creates the demo shop and
 * its saved connection, and an SDK v2 client lists its tables and queries it.
 */
import {
  Client,
  StreamableHTTPClientTransport,
} from "@modelcontextprotocol/client";
import { assert, assertEquals, assertStringIncludes } from "@std/assert";
import { spawnServe } from "../_main.ts";

Deno.test("serve on an empty DBPORT_HOME creates the demo shop, and an SDK v2 client queries it", async () => {
  const home = await Deno.makeTempDir({ prefix: "dbport-demo-" });
  const serve = await spawnServe(home);
  const sdk = new Client(
    { name: "dbport-demo-e2e", version: "1.0.0" },
    { capabilities: {}, versionNegotiation: { mode: { pin: "2026-07-28" } } },
  );
  try {
    const out = serve.out;
    assertStringIncludes(out, 'Created the demo connection "Demo shop"');
    const url = serve.url;
    assert(url !== undefined, out);
    const handshake = JSON.parse(
      await Deno.readTextFile(`${home}/mcp-handshake.json`),
    );
    await sdk.connect(
      new StreamableHTTPClientTransport(new URL(url), {
        requestInit: {
          headers: { authorization: `Bearer ${handshake.token}` },
        },
      }),
    );
    const listed = await sdk.callTool({
      name: "list_connections",
      arguments: {},
    });
    const [demo] = (listed.structuredContent as any).connections;
    assertEquals([demo.name, demo.type, demo.external_access], [
      "Demo shop",
      "SQLite",
      "readWrite",
    ]);
    const tables = await sdk.callTool({
      name: "list_tables",
      arguments: { connection_id: demo.id, include_row_counts: true },
    });
    const byName = Object.fromEntries(
      (tables.structuredContent as any).tables.map((t: any) => [t.name, t]),
    );
    assertEquals(Object.keys(byName).sort(), [
      "customers",
      "order_items",
      "order_totals",
      "orders",
      "products",
    ]);
    assertEquals(byName.order_totals.type, "view");
    assert(byName.order_items.row_count > 1000);
    const query = await sdk.callTool({
      name: "execute_query",
      arguments: {
        connection_id: demo.id,
        query:
          "select status, count(*) as n from orders group by status order by status",
      },
    });
    const result = query.structuredContent as any;
    assertEquals(result.columns, ["status", "n"]);
    assertEquals(
      result.rows.reduce(
        (sum: number, row: [string, number]) => sum + row[1],
        0,
      ),
      2000,
    );
    const described = await sdk.callTool({
      name: "describe_table",
      arguments: { connection_id: demo.id, table: "orders" },
    });
    assertEquals(
      (described.structuredContent as any).foreign_keys[0].referenced_table,
      "customers",
    );
  } finally {
    await sdk.close().catch(() => {});
    serve.child.kill("SIGTERM");
    await serve.readRest();
    await serve.child.status;
    await serve.child.stderr.cancel();
    await Deno.remove(home, { recursive: true });
  }
});
