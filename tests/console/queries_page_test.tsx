/**
 * The Queries page component: each saved query with its tool name,
 * connection, parameters and statement, every value escaped.
 */

import { assert, assertEquals } from "@std/assert";
import { QueriesTable } from "../../lib/console/pages/queries.tsx";
import type { SavedConnection } from "../../lib/app/connections.ts";

const SHOP: SavedConnection = {
  id: "0b6f3c1e-0000-4000-8000-000000000001",
  name: "Shop",
  engine: "sqlite",
  url: "/tmp/shop.db",
  externalAccess: "readOnly",
  aiPolicy: "alwaysAllow",
  safeMode: "alert",
};

Deno.test("the Queries page lists each query, escaped", async () => {
  const html = await (
    <QueriesTable
      connections={[SHOP]}
      queries={[{
        name: "top_customers",
        connectionId: SHOP.id,
        sql: "select * from c where region = :region and x < '<b>'",
        params: [{ name: "region", type: "text" }, {
          name: "n",
          type: "int",
          default: 10,
        }],
        description: "Best <customers>",
      }]}
    />
  ).toString();
  assert(html.includes("q_top_customers"), html);
  assert(html.includes(`<td data-label="Connection">Shop</td>`), html);
  assert(html.includes(":n int = 10"), html);
  assert(html.includes("&lt;b&gt;"), html);
  assert(html.includes("Best &lt;customers&gt;"), html);
  assert(!html.includes("<b>"), html);
});

Deno.test("the Queries page says how to add one when there is none", async () => {
  const html = await (<QueriesTable connections={[]} queries={[]} />)
    .toString();
  assertEquals(html.includes("dbport queries add"), true);
});
