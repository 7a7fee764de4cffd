/**
 * A result's column types (`QueryResult.columnTypes`), as each engine names
 * them: what the console's Query grid shows under each column's name.
 */

import { assertEquals } from "@std/assert";
import { openDriver } from "../../lib/db/open_driver.ts";
import type { Engine } from "../../lib/db/types.ts";
import { needs, openFixture, READ_OPTIONS } from "../_db.ts";

const EXPECTED: Record<Engine, (string | null)[]> = {
  postgres: ["int8", "varchar", "numeric", "bool", "jsonb"],
  mysql: ["longlong", "var_string", "newdecimal", "tiny", "json"],
  sqlite: ["INTEGER", "varchar(200)", "decimal(10,2)", "boolean", null],
};

for (const engine of ["postgres", "mysql", "sqlite"] as const) {
  Deno.test({
    name: `${engine}: a read names each column's type`,
    ignore: needs(engine).ignore,
    async fn() {
      await using fixture = await openFixture(engine);
      const driver = openDriver({
        id: crypto.randomUUID(),
        engine,
        url: fixture.url,
      });
      try {
        const doc = engine === "sqlite" ? "null" : "k.doc";
        const result = await driver.query(
          `select b.id, b.title, b.price, b.in_print, ${doc} as doc
           from books b left join kinds k on k.id = b.id order by b.id`
            .replace(
              /books|kinds/g,
              (t) => engine === "postgres" ? `${fixture.schema}.${t}` : t,
            ),
          READ_OPTIONS,
        );
        assertEquals(result.columnTypes, EXPECTED[engine]);
      } finally {
        await driver.close();
      }
    },
  });
}
