/**
 * What the PostgreSQL parse tree (pg_changes.ts) and the MariaDB/SQLite
 * lexers (dml_shape.ts) say of a write: its target, whether its keys can be
 * bound, and why its choice of rows may differ from run to run (issue 32).
 */

import { assertEquals } from "@std/assert";
import { dmlShape } from "../../lib/db/sql/dml_shape.ts";
import { pgWriteShape } from "../../lib/db/postgres/pg_changes.ts";

const VARIES = (what: string) =>
  `which rows it changes may differ from run to run (${what})`;

Deno.test("pgWriteShape() names chance and the clock in the row choice", async () => {
  const cases: [string, string | null][] = [
    [
      `UPDATE w SET v = 'x' WHERE id = (SELECT 1 + floor(random()*10)::int)`,
      "random()",
    ],
    [`DELETE FROM w WHERE ts < now()`, "now()"],
    [`DELETE FROM w WHERE ts < current_timestamp`, "current_timestamp"],
    [
      `DELETE FROM w WHERE ts < clock_timestamp() - interval '1 day'`,
      "clock_timestamp()",
    ],
    [
      `DELETE FROM w WHERE id IN (SELECT id FROM w LIMIT 3)`,
      "LIMIT without ORDER BY",
    ],
    [
      `DELETE FROM w WHERE id IN (SELECT id FROM w ORDER BY random() LIMIT 3)`,
      "random()",
    ],
    [`INSERT INTO x SELECT * FROM y TABLESAMPLE SYSTEM (10)`, "TABLESAMPLE"],
    [`UPDATE w SET v = 'x' WHERE k = gen_random_uuid()`, "gen_random_uuid()"],
    [`UPDATE w SET v = 'x' WHERE id = pg_catalog.random()::int`, "random()"],
    // New values are not the row choice: none of these vary which rows change.
    [`UPDATE w SET v = now()::text, r = random() WHERE id = 1`, null],
    [`INSERT INTO w (id, v) VALUES (1, gen_random_uuid()::text)`, null],
    [`DELETE FROM w WHERE id IN (SELECT id FROM w ORDER BY id LIMIT 3)`, null],
  ];
  for (const [sql, what] of cases) {
    assertEquals(
      (await pgWriteShape(sql)).choice,
      what === null ? null : VARIES(what),
      sql,
    );
  }
});

Deno.test("pgWriteShape() binds keys of a plain UPDATE or DELETE only", async () => {
  const plain = await pgWriteShape(`UPDATE s."My T" AS t SET v = 1`);
  assertEquals(plain.keyed, { schema: "s", name: "My T", ref: '"t"' });
  assertEquals(plain.wrappable, true);
  const cte = await pgWriteShape(
    `WITH d AS (DELETE FROM log RETURNING 1) UPDATE w SET v = 'c'`,
  );
  assertEquals([cte.wrappable, cte.keyed], [false, null]);
  const readCte = await pgWriteShape(
    `WITH s AS (SELECT 1 AS id) DELETE FROM w USING s WHERE w.id = s.id`,
  );
  assertEquals(readCte.wrappable, true);
  const own = await pgWriteShape(`DELETE FROM w RETURNING id`);
  assertEquals([own.wrappable, own.keyed], [false, null]);
  const insert = await pgWriteShape(`INSERT INTO w VALUES (1)`);
  assertEquals([insert.wrappable, insert.keyed, insert.unbound], [
    true,
    null,
    null,
  ]);
  const merge = await pgWriteShape(
    `MERGE INTO w USING s ON w.id = s.id WHEN MATCHED THEN DELETE`,
  );
  assertEquals([merge.write, merge.wrappable], [true, false]);
});

Deno.test("dmlShape() reads MariaDB targets, several tables and upserts", () => {
  const cases: [string, Partial<ReturnType<typeof dmlShape>>][] = [
    ["UPDATE `Orders` SET v = 1", {
      keyword: "UPDATE",
      target: { schema: null, name: "Orders" },
      multiTable: false,
    }],
    ["UPDATE a, b SET a.v = 1", { target: null, multiTable: true }],
    ["UPDATE a JOIN b ON a.id = b.id SET a.v = 1", { multiTable: true }],
    ["DELETE a FROM a JOIN b ON a.id = b.id", { multiTable: true }],
    ["DELETE FROM a USING a, b WHERE a.id = b.id", { multiTable: true }],
    ["DELETE LOW_PRIORITY FROM shop.a WHERE id = 1", {
      target: { schema: "shop", name: "a" },
      multiTable: false,
    }],
    ["INSERT INTO t VALUES (1) ON DUPLICATE KEY UPDATE v = 2", {
      keyword: "INSERT",
      upsert: true,
    }],
    ["REPLACE INTO t VALUES (1)", { keyword: "REPLACE", upsert: false }],
    ["DELETE FROM t WHERE id = 1 RETURNING id", { returning: true }],
  ];
  for (const [sql, expected] of cases) {
    const shape = dmlShape(sql, "mysql");
    for (const [key, value] of Object.entries(expected)) {
      assertEquals(shape[key as keyof typeof shape], value, `${sql}: ${key}`);
    }
  }
});

Deno.test("dmlShape() names chance, the clock and LIMIT without ORDER BY", () => {
  const cases: [string, "mysql" | "sqlite", string | null][] = [
    ["DELETE FROM w WHERE id = FLOOR(1 + RAND() * 10)", "mysql", "rand"],
    ["DELETE FROM w WHERE ts < NOW()", "mysql", "now"],
    ["DELETE FROM w WHERE k = UUID()", "mysql", "uuid"],
    ["DELETE FROM w LIMIT 2", "mysql", "LIMIT without ORDER BY"],
    ["DELETE FROM w ORDER BY id LIMIT 2", "mysql", null],
    ["UPDATE w SET v = NOW() WHERE id = 1", "mysql", null],
    ["INSERT INTO w (id, v) VALUES (1, UUID())", "mysql", null],
    ["DELETE FROM w WHERE ts < datetime('now')", "sqlite", "'now'"],
    ["DELETE FROM w WHERE id = abs(random()) % 10", "sqlite", "random"],
    [
      "DELETE FROM w WHERE id IN (SELECT id FROM w LIMIT 2)",
      "sqlite",
      "LIMIT without ORDER BY",
    ],
    [
      "DELETE FROM w WHERE id IN (SELECT id FROM w ORDER BY id LIMIT 2)",
      "sqlite",
      null,
    ],
    ["UPDATE w SET v = random() WHERE id = 1", "sqlite", null],
    [
      "UPDATE w SET v = 'x' WHERE ts < CURRENT_TIMESTAMP",
      "sqlite",
      "current_timestamp",
    ],
  ];
  for (const [sql, dialect, what] of cases) {
    assertEquals(
      dmlShape(sql, dialect).choice,
      what === null ? null : VARIES(what),
      sql,
    );
  }
});

Deno.test("an UPDATE setting columns from chance names them (its keys then bind nothing)", async () => {
  assertEquals(
    (await pgWriteShape(
      `UPDATE w SET id = 100 + (random() * 10)::int, v = 'x' WHERE id = 1`,
    )).varyingSet,
    ["id", "v"],
  );
  assertEquals(
    (await pgWriteShape(`UPDATE w SET id = id + 1 WHERE id = 1`)).varyingSet,
    [],
  );
  assertEquals(
    dmlShape(
      "UPDATE w SET `id` = FLOOR(RAND() * 9), v = 1 WHERE id = 1",
      "mysql",
    )
      .varyingSet,
    ["id", "v"],
  );
  assertEquals(
    dmlShape(
      "UPDATE w SET id = abs(random()) WHERE ts < datetime('now')",
      "sqlite",
    )
      .varyingSet,
    ["id"],
  );
  assertEquals(
    dmlShape("UPDATE w SET id = id + 1 WHERE id = random()", "sqlite")
      .varyingSet,
    [],
  );
});
