import { assert, assertEquals } from "@std/assert";
import Database from "libsql/promise";
import { parseConnections } from "../../lib/app/connections.ts";
import { ensureDemo } from "../../lib/app/demo_db.ts";

Deno.test("ensureDemo() leaves the whole shop in demo-shop.db and saves its connection", async () => {
  const home = await Deno.makeTempDir({ prefix: "dbport-demo-unit-" });
  try {
    const demo = await ensureDemo(home);
    assert(demo !== null);
    // Only the database and the connections file: no journal or partial file
    // whose loss would take data with it.
    assertEquals(
      [...Deno.readDirSync(home)].map((entry) => entry.name).sort(),
      ["connections.json", "demo-shop.db"],
    );
    const db = new Database(`${home}/demo-shop.db`, {});
    try {
      const statement = await db.prepare(
        "select (select count(*) from orders) as orders, (select count(*) from sqlite_schema where type = 'view') as views",
      );
      const [row] = [...await statement.iterate()];
      assertEquals(row, { orders: 2000, views: 1 });
    } finally {
      db.close();
    }
    const saved = parseConnections(
      await Deno.readTextFile(`${home}/connections.json`),
    );
    assert(saved.ok);
    assertEquals(saved.connections.map((c) => [c.name, c.url]), [[
      "Demo shop",
      `${home}/demo-shop.db`,
    ]]);
    // A second start finds the connections file and creates nothing.
    assertEquals(await ensureDemo(home), null);
  } finally {
    await Deno.remove(home, { recursive: true });
  }
});
