/**
 * The console's Schema page in a real headless Chromium, on a PostgreSQL
 * fixture of the test's own: pick the schema, filter its tables as you type
 * (no button), page through 200 at a time, open a table, follow a foreign
 * key to the table it references, and open the Query page on it; no CSP
 * violation; the routes keep the key/cookie/Host rules.
 */

import { assert, assertEquals, assertMatch } from "@std/assert";
import { savedConnection, serverWith } from "../_connections.ts";
import { needs, openFixture } from "../_db.ts";
import { needsChromium, startBrowser } from "../_browser.ts";
import {
  assertGuarded,
  openConsole,
  overflowsAt390,
  screenshots,
} from "../_console.ts";
import { waitUntil } from "../_wait.ts";

const ignore = needsChromium().ignore || needs("postgres").ignore;

Deno.test({
  name:
    "the Schema page: a schema's tables filtered as you type and paged, a table's columns, a foreign key followed, and Query on it",
  ignore,
  sanitizeOps: false,
  sanitizeResources: false,
  async fn() {
    await using fixture = await openFixture("postgres");
    const s = fixture.schema;
    await fixture.admin(
      `comment on column ${s}.books.title is 'The title on the cover'`,
    );
    await fixture.admin(
      `create type ${s}.mood as enum ('calm', 'busy'); alter table ${s}.authors add column mood ${s}.mood`,
    );
    await fixture.admin(
      `do $$ begin for i in 1..205 loop execute format('create table %I.%I (id int)', '${s}', 'zz_' || lpad(i::text, 3, '0')); end loop; end $$`,
    );
    const saved = savedConnection(fixture, "Shop");
    await using server = await serverWith([saved], {}, {
      openBrowser: () => Promise.resolve(false),
    });
    await using chromium = await startBrowser();
    const t = await openConsole(chromium.browser, server.server.console!);
    const { page } = t;

    await page.goto(`${t.base}schema?connection=${saved.id}`);
    await Promise.all([
      page.waitForNavigation(),
      page.click(
        `.schemas a[href*="schema=${s}&"], .schemas a[href$="schema=${s}"]`,
      ),
    ]);
    assertMatch(
      await page.$eval("#schema-total", (n) => n.textContent!),
      /^209 +tables and views/,
    );
    const names = () =>
      page.$$eval(
        "#schema-tables tbody tr",
        (rows) => rows.map((row) => row.getAttribute("data-table")),
      );
    assertEquals((await names()).length, 200);
    // The next page continues after the 200th.
    await Promise.all([page.waitForNavigation(), page.click("#schema-next")]);
    assertEquals(await names(), [
      "zz_197",
      "zz_198",
      "zz_199",
      "zz_200",
      "zz_201",
      "zz_202",
      "zz_203",
      "zz_204",
      "zz_205",
    ]);
    await page.goto(`${t.base}schema?connection=${saved.id}&schema=${s}`);
    await screenshots(page, "console-schema");
    assert(
      await overflowsAt390(page) <= 1,
      "Schema scrolls sideways at 390 px",
    );
    // Filter as you type: no button, the list follows.
    await page.type("#schema-filter", "boo");
    await waitUntil(
      "the list filtered to boo",
      async () =>
        JSON.stringify(await names()) ===
          JSON.stringify(["book_titles", "books"]),
    );
    assertMatch(page.url(), /q=boo/);
    await Promise.all([
      page.waitForNavigation(),
      page.click(`#schema-tables tr[data-table="books"] a`),
    ]);
    assertEquals(
      await page.$eval("#table-name", (n) => n.textContent),
      "books",
    );
    const title = await page.$eval(
      `#table-columns tr[data-column="title"]`,
      (n) => n.textContent!,
    );
    assertMatch(title, /character varying\(200\)|varchar/);
    assertMatch(title, /not null/);
    assertMatch(title, /The title on the cover/);
    const price = await page.$eval(
      `#table-columns tr[data-column="price"]`,
      (n) => n.textContent!,
    );
    assertMatch(price, /9\.99/);
    assertMatch(
      await page.$eval("#table-indexes", (n) => n.textContent!),
      /books_author_idx \(author_id\)/,
    );
    await screenshots(page, "console-schema-table");
    // The foreign key is a link to the table it references.
    await Promise.all([
      page.waitForNavigation(),
      page.click("#table-foreign-keys a.fk"),
    ]);
    assertEquals(
      await page.$eval("#table-name", (n) => n.textContent),
      "authors",
    );
    assertMatch(
      await page.$eval(
        `#table-columns tr[data-column="mood"]`,
        (n) => n.textContent!,
      ),
      /one of calm, busy/,
    );
    // Query opens the Query page on it, posted (the SQL in no URL).
    await Promise.all([page.waitForNavigation(), page.click("#table-query")]);
    assertEquals(new URL(page.url()).pathname.endsWith("/query/open"), true);
    assertEquals(
      await page.$eval(
        "#query-sql",
        (n) => (n as unknown as { value: string }).value,
      ),
      `SELECT * FROM "${s}"."authors" LIMIT 100`,
    );
    await Promise.all([page.waitForNavigation(), page.click("#query-run")]);
    assertEquals(
      await page.$eval("#query-count", (n) => n.textContent),
      "2 rows",
    );
    assertEquals(t.problems, []);

    await assertGuarded(t, "GET", `/schema?connection=${saved.id}`);
    await assertGuarded(
      t,
      "GET",
      `/schema/table?connection=${saved.id}&schema=${s}&table=books`,
    );
  },
});
