/**
 * The three drivers against real PostgreSQL, MariaDB and a SQLite file, with
 * the same fixture schema on each (tests/_db.ts).
 */

import { assert, assertEquals, assertRejects } from "@std/assert";
import { DbError } from "../../lib/db/errors.ts";
import { openDriver } from "../../lib/db/open_driver.ts";
import type { Driver, Engine } from "../../lib/db/types.ts";
import {
  ENGINES,
  type Fixture,
  needs,
  openFixture,
  runningCount,
} from "../_db.ts";
import { waitUntil } from "../_wait.ts";

const OPTIONS = {
  signal: new AbortController().signal,
  timeoutMs: 10_000,
  mode: "read" as const,
  maxBytes: 100_000_000,
  maxCellChars: 1_000_000,
};
const WRITE = { ...OPTIONS, mode: "write" as const, maxRows: 10 };

async function withDriver(
  engine: Engine,
  run: (driver: Driver, fixture: Fixture) => Promise<void>,
  fixtureOptions: { ownDatabase?: boolean } = {},
): Promise<void> {
  await using fixture = await openFixture(engine, fixtureOptions);
  const driver = openDriver({
    id: crypto.randomUUID(),
    engine,
    url: fixture.url,
  });
  try {
    await run(driver, fixture);
  } finally {
    await driver.close();
  }
}

/** A table name the fixture's engine resolves (PostgreSQL: schema-qualified). */
function table(fixture: Fixture, name: string): string {
  return fixture.engine === "postgres" ? `${fixture.schema}.${name}` : name;
}

const SLEEP: Record<Engine, string> = {
  postgres: "select pg_sleep(30)",
  mysql: "select sleep(30)",
  sqlite:
    "with recursive c(x) as (select 1 union all select x + 1 from c where x < 2000000000) select count(*) from c",
};

/** A session setting that would switch the read fence off, were it kept. */
const SESSION_SET: Record<Engine, string> = {
  postgres: "set session characteristics as transaction read write",
  mysql: "set session transaction read write",
  sqlite: "pragma query_only = off",
};

/** A write that changes rows first and then takes long. */
const SLOW_WRITE: Record<Engine, (table: string) => string> = {
  postgres: (t) =>
    `with a as (insert into ${t} (name) values ('slow') returning id) select pg_sleep(30) from a`,
  mysql: (t) => `insert into ${t} (name) select concat('slow', sleep(30))`,
  sqlite: (t) =>
    `insert into ${t} (name) with recursive c(x) as (select 1 union all select x + 1 from c where x < 2000000000) select 'slow' || count(*) from c`,
};

const MILLION: Record<Engine, string> = {
  postgres:
    "select g, g * 2 as twice, md5(g::text) as hash, now() as at, g::numeric / 7 as ratio from generate_series(1, 1000000) g",
  mysql:
    "select seq, seq * 2 as twice, md5(seq) as hash, now() as at, seq / 7 as ratio from seq_1_to_1000000",
  sqlite:
    "with recursive g(n) as (select 1 union all select n + 1 from g where n < 1000000) select n, n * 2 as twice, hex(randomblob(16)) as hash, datetime('now') as at, n / 7.0 as ratio from g",
};

/** Statements of this test still running on the server. */
for (const engine of ENGINES) {
  Deno.test(
    `${engine}: listTables() lists tables and views of the schema, with row counts`,
    needs(engine),
    async () => {
      await withDriver(engine, async (driver, fixture) => {
        const tables = await driver.listTables({
          ...OPTIONS,
          schema: fixture.schema,
          rowCounts: true,
        }).then((page) => page.tables);
        assertEquals(
          tables.map((t) => [t.name, t.schema, t.type]),
          [
            ["authors", fixture.schema, "table"],
            ["book_titles", fixture.schema, "view"],
            ["books", fixture.schema, "table"],
            ["kinds", fixture.schema, "table"],
          ],
        );
        assertEquals(
          tables.find((t) => t.name === "book_titles")?.rowCount,
          undefined,
        );
        if (engine === "sqlite") {
          assertEquals(tables.find((t) => t.name === "authors")?.rowCount, 2);
        }
      });
    },
  );

  Deno.test(
    `${engine}: overview() gives the first tables with their columns and the total`,
    needs(engine),
    async () => {
      await withDriver(engine, async (driver, fixture) => {
        const schema = fixture.schema;
        const all = await driver.overview({
          ...OPTIONS,
          schema,
          maxTables: 100,
        });
        assertEquals(all.totalTables, 4);
        assertEquals(all.tables.map((t) => [t.name, t.type]), [
          ["authors", "table"],
          ["book_titles", "view"],
          ["books", "table"],
          ["kinds", "table"],
        ]);
        const authors = all.tables[0]!;
        assertEquals(
          authors.columns.map((c) => [c.name, c.nullable, c.primaryKey]),
          [
            ["id", false, true],
            ["name", false, false],
            ["born", true, false],
          ],
        );
        assert(
          /int/i.test(authors.columns[0]!.dataType),
          authors.columns[0]!.dataType,
        );
        assertEquals(
          all.tables[1]!.columns.map((c) => c.name),
          ["title", "name"],
        );
        const two = await driver.overview({ ...OPTIONS, schema, maxTables: 2 });
        assertEquals(two.totalTables, 4);
        assertEquals(two.tables, all.tables.slice(0, 2));
      });
    },
  );

  Deno.test(
    `${engine}: fingerprint() changes with ALTER TABLE, and only then`,
    needs(engine),
    async () => {
      await withDriver(engine, async (driver, fixture) => {
        const before = await driver.fingerprint(OPTIONS);
        assertEquals(await driver.fingerprint(OPTIONS), before);
        await fixture.admin(
          `insert into ${table(fixture, "authors")} (name) values ('Grace')`,
        );
        assertEquals(
          await driver.fingerprint(OPTIONS),
          before,
          "data is not schema",
        );
        await fixture.admin(
          `alter table ${
            table(fixture, "authors")
          } add column email varchar(80)`,
        );
        const added = await driver.fingerprint(OPTIONS);
        assert(added !== before, "a new column changes the fingerprint");
        await fixture.admin(
          `create table ${table(fixture, "extra")} (id integer)`,
        );
        assert(
          await driver.fingerprint(OPTIONS) !== added,
          "a new table changes it",
        );
        // The fingerprint reads the whole database: on PostgreSQL, a database
        // of its own keeps other test runs' schemas out of it.
      }, { ownDatabase: true });
    },
  );

  Deno.test(
    `${engine}: describeTable() gives columns, keys, indexes and DDL`,
    needs(engine),
    async () => {
      await withDriver(engine, async (driver, fixture) => {
        const detail = await driver.describeTable("books", {
          ...OPTIONS,
          schema: fixture.schema,
        });
        assert(detail !== null);
        assertEquals(detail.schema, fixture.schema);
        assertEquals(detail.columns.map((c) => c.name), [
          "id",
          "author_id",
          "title",
          "price",
          "in_print",
        ]);
        assertEquals(
          detail.columns.filter((c) => c.primaryKey).map((c) => c.name),
          ["id"],
        );
        assertEquals(
          detail.columns.find((c) => c.name === "title")?.nullable,
          false,
        );
        assert(
          detail.columns.find((c) => c.name === "price")?.defaultValue
            ?.includes(
              "9.99",
            ),
        );
        const fk = detail.foreignKeys[0];
        assertEquals(detail.foreignKeys.length, 1);
        assertEquals([
          fk?.columns,
          fk?.referencedTable,
          fk?.referencedColumns,
          fk?.onDelete,
        ], [
          ["author_id"],
          "authors",
          ["id"],
          "CASCADE",
        ]);
        assert(
          detail.indexes.some((i) => i.primary && i.columns.join() === "id"),
        );
        assert(
          detail.indexes.some((i) =>
            i.unique && !i.primary && i.columns.join() === "title"
          ),
        );
        assert(
          detail.indexes.some((i) =>
            i.name === "books_author_idx" && !i.unique
          ),
        );
        assert(
          detail.ddl !== null && /create table/i.test(detail.ddl) &&
            detail.ddl.includes("books"),
        );
        assertEquals(
          await driver.describeTable("no_such_table", OPTIONS),
          null,
        );
        const view = await driver.describeTable("book_titles", {
          ...OPTIONS,
          schema: fixture.schema,
        });
        assertEquals(view?.type, "view");
        assert(view?.ddl !== null && /view/i.test(view?.ddl ?? ""));
      });
    },
  );

  Deno.test(
    `${engine}: query() maps every type to the same JSON`,
    needs(engine),
    async () => {
      await withDriver(engine, async (driver, fixture) => {
        const result = await driver.query(
          `select big, ${
            engine === "mysql" ? "`dec`" : "dec"
          }, flag, day, at, doc, bytes, missing, words from ${
            table(fixture, "kinds")
          }`,
          { ...OPTIONS, maxRows: 10 },
        );
        assertEquals(result.columns, [
          "big",
          "dec",
          "flag",
          "day",
          "at",
          "doc",
          "bytes",
          "missing",
          "words",
        ]);
        assertEquals(result.rows, [[
          "9007199254740993",
          "12345.67891",
          true,
          "2024-02-29",
          "2024-02-29T13:14:15.123456Z",
          { a: [1, 2.5, "x"] },
          "AP8Q",
          null,
          "héllo wörld ✓ 日本",
        ]]);
        assertEquals(result.truncated, false);
      });
    },
  );

  Deno.test(
    `${engine}: query() runs read-only: the engine refuses a write`,
    needs(engine),
    async () => {
      await withDriver(engine, async (driver, fixture) => {
        const error = await assertRejects(
          () =>
            driver.query(
              `insert into ${
                table(fixture, "authors")
              } (name) values ('Mallory')`,
              {
                ...OPTIONS,
                maxRows: 10,
              },
            ),
          DbError,
        );
        assertEquals(error.kind, "read_only");
        const rows = await fixture.admin(
          `select count(*) as n from ${table(fixture, "authors")}`,
        );
        assertEquals(Number((rows[0] as { n: unknown }).n), 2);
      });
    },
  );

  Deno.test(
    `${engine}: a write commits and reports rows_affected`,
    needs(engine),
    async () => {
      await withDriver(engine, async (driver, fixture) => {
        const authors = table(fixture, "authors");
        const inserted = await driver.query(
          `insert into ${authors} (name) values ('Grace'), ('Edsger')`,
          WRITE,
        );
        assertEquals(inserted.rowsAffected, 2);
        assertEquals(inserted.rows, []);
        const updated = await driver.query(
          `update ${authors} set born = '1906-12-09' where name = 'Grace'`,
          WRITE,
        );
        assertEquals(updated.rowsAffected, 1);
        const rows = await fixture.admin(
          `select count(*) as n from ${authors}`,
        );
        assertEquals(Number((rows[0] as { n: unknown }).n), 4);
        // DDL commits too, and reports no rows.
        const created = await driver.query(
          `create table ${table(fixture, "made_here")} (id int)`,
          WRITE,
        );
        assertEquals(created.rowsAffected, 0);
        const listed = await driver.listTables({
          ...OPTIONS,
          rowCounts: false,
        }).then((page) => page.tables);
        assert(listed.some((t) => t.name === "made_here"));
      });
    },
  );

  Deno.test(
    `${engine}: RETURNING rows of a write come back capped`,
    needs(engine),
    async () => {
      await withDriver(engine, async (driver, fixture) => {
        const authors = table(fixture, "authors");
        // MariaDB has DELETE ... RETURNING; INSERT ... RETURNING since 10.5.
        const result = await driver.query(
          `delete from ${authors} where id > 0 returning name`,
          { ...WRITE, maxRows: 1 },
        );
        assertEquals(result.columns, ["name"]);
        assertEquals(result.rows.length, 1);
        assertEquals(result.truncated, true);
        // Every row was deleted, not only the one returned.
        const rows = await fixture.admin(
          `select count(*) as n from ${authors}`,
        );
        assertEquals(Number((rows[0] as { n: unknown }).n), 0);
      });
    },
  );

  Deno.test(
    `${engine}: a failed write rolls back and the next read is still read-only`,
    needs(engine),
    async () => {
      await withDriver(engine, async (driver, fixture) => {
        const authors = table(fixture, "authors");
        const error = await assertRejects(
          () =>
            driver.query(
              `insert into ${authors} (id, name) values (1, 'duplicate')`,
              WRITE,
            ),
          DbError,
        );
        assertEquals(error.kind, "query");
        // A session setting made by a write never reaches a pooled read.
        await driver.query(SESSION_SET[engine], WRITE);
        const refused = await assertRejects(
          () =>
            driver.query(
              `insert into ${authors} (name) values ('Mallory')`,
              { ...OPTIONS, maxRows: 1 },
            ),
          DbError,
        );
        assertEquals(refused.kind, "read_only");
        const rows = await fixture.admin(
          `select count(*) as n from ${authors}`,
        );
        assertEquals(Number((rows[0] as { n: unknown }).n), 2);
      });
    },
  );

  Deno.test(
    `${engine}: a write stopped before it commits is rolled back`,
    needs(engine),
    async () => {
      await withDriver(engine, async (driver, fixture) => {
        const authors = table(fixture, "authors");
        const controller = new AbortController();
        setTimeout(() => controller.abort(), 300);
        const error = await assertRejects(
          () =>
            driver.query(SLOW_WRITE[engine](authors), {
              ...WRITE,
              signal: controller.signal,
              timeoutMs: 20_000,
            }),
          DbError,
        );
        assertEquals(error.kind, "cancelled");
        const rows = await fixture.admin(
          `select count(*) as n from ${authors}`,
        );
        assertEquals(Number((rows[0] as { n: unknown }).n), 2);
      });
    },
  );

  Deno.test(
    `${engine}: query() keeps max_rows of a million-row result, in bounded memory`,
    needs(engine),
    async () => {
      await withDriver(engine, async (driver) => {
        // Warm up, then measure the growth of a second run.
        await driver.query(MILLION[engine], {
          ...OPTIONS,
          timeoutMs: 60_000,
          maxRows: 10_000,
        });
        const before = Deno.memoryUsage().rss;
        const result = await driver.query(MILLION[engine], {
          ...OPTIONS,
          timeoutMs: 60_000,
          maxRows: 10_000,
        });
        const grown = Deno.memoryUsage().rss - before;
        assertEquals(result.rows.length, 10_000);
        assertEquals(result.truncated, true);
        assertEquals(result.columns.length, 5);
        // A million rows held at once would take hundreds of MB.
        assert(
          grown < 120 * 1024 * 1024,
          `RSS grew by ${Math.round(grown / 1048576)} MB`,
        );
      });
    },
  );

  Deno.test(
    `${engine}: the statement timeout stops the query on the database`,
    needs(engine),
    async () => {
      await withDriver(engine, async (driver, fixture) => {
        const error = await assertRejects(
          () =>
            driver.query(SLEEP[engine], {
              ...OPTIONS,
              timeoutMs: 500,
              maxRows: 10,
            }),
          DbError,
        );
        assertEquals(error.kind, "timeout");
        assert(error.message.includes("0.5 s"), error.message);
        await waitUntil(
          "the timed-out statement to leave the database",
          async () =>
            await runningCount(fixture, SLEEP[engine].slice(7, 20)) === 0,
          { timeoutMs: 2_000, intervalMs: 100 },
        );
        assertEquals(
          await runningCount(fixture, SLEEP[engine].slice(7, 20)),
          0,
          "the statement still runs on the database",
        );
        // The driver is usable straight after.
        const next = await driver.query("select 1 as one", {
          ...OPTIONS,
          maxRows: 1,
        });
        assertEquals(next.rows, [[1]]);
      });
    },
  );

  Deno.test(
    `${engine}: an abort stops the query as cancelled`,
    needs(engine),
    async () => {
      await withDriver(engine, async (driver) => {
        const controller = new AbortController();
        setTimeout(() => controller.abort(), 300);
        const error = await assertRejects(
          () =>
            driver.query(SLEEP[engine], {
              ...OPTIONS,
              signal: controller.signal,
              timeoutMs: 20_000,
              maxRows: 10,
            }),
          DbError,
        );
        assertEquals(error.kind, "cancelled");
      });
    },
  );
}

Deno.test("an unreachable server is a redacted connect error that keeps the host and port list_connections shows", async () => {
  for (
    const [engine, url] of [
      ["postgres", "postgres://bob:hunter22@127.0.0.1:1/secretdb"],
      ["mysql", "mysql://bob:hunter22@127.0.0.1:1/secretdb"],
    ] as const
  ) {
    const driver = openDriver({ id: crypto.randomUUID(), engine, url });
    const error = await assertRejects(() => driver.version(OPTIONS), DbError);
    await driver.close();
    assertEquals(error.kind, "connect", `${engine}: ${error.message}`);
    for (const secret of ["hunter22", "bob"]) {
      assert(
        !error.message.includes(secret),
        `${engine} leaked ${secret}: ${error.message}`,
      );
    }
    assert(error.message.includes("127.0.0.1:1"), error.message);
  }
});

Deno.test("a missing SQLite file is a connect error, and is not created", async () => {
  const dir = await Deno.makeTempDir();
  const driver = openDriver({
    id: crypto.randomUUID(),
    engine: "sqlite",
    url: `${dir}/none.db`,
  });
  const error = await assertRejects(() => driver.version(OPTIONS), DbError);
  await driver.close();
  assertEquals(error.kind, "connect");
  assert(!error.message.includes(dir), error.message);
  assertEquals([...Deno.readDirSync(dir)].length, 0);
  await Deno.remove(dir, { recursive: true });
});

Deno.test(
  "postgres: sessions start read-only; a write and a statement that refuses a transaction still run",
  needs("postgres"),
  async () => {
    await withDriver("postgres", async (driver, fixture) => {
      const read = await driver.query(
        "select current_setting('default_transaction_read_only') as ro",
        { ...OPTIONS, maxRows: 10 },
      );
      assertEquals(read.rows, [["on"]]);
      const t = table(fixture, "books");
      // CREATE INDEX CONCURRENTLY refuses a transaction block: it runs alone,
      // with the read-only default lifted for that session only.
      await driver.query(
        `create index concurrently books_ro_idx on ${t} (id)`,
        WRITE,
      );
      const after = await driver.query(
        "select current_setting('default_transaction_read_only') as ro",
        { ...OPTIONS, maxRows: 10 },
      );
      assertEquals(after.rows, [["on"]]);
    });
  },
);

Deno.test(
  "mysql: every pooled session starts read-only, in UTC, with the quoting rules the lexer reads by",
  needs("mysql"),
  async () => {
    await withDriver("mysql", async (driver) => {
      // Twice: a fresh session, then one set up again after RESET CONNECTION.
      for (let i = 0; i < 2; i++) {
        const read = await driver.query(
          "select @@SESSION.tx_read_only, @@SESSION.time_zone, @@SESSION.sql_mode",
          { ...OPTIONS, maxRows: 10 },
        );
        const [row] = read.rows;
        assertEquals(Number(row![0]), 1);
        assertEquals(row![1], "+00:00");
        assert(!/ANSI_QUOTES|NO_BACKSLASH_ESCAPES/.test(String(row![2])));
      }
    });
  },
);
