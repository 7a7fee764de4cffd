/**
 * The console's Query page in a real headless Chromium, on a PostgreSQL
 * fixture of the test's own: a read typed and run with Ctrl+Enter shows its
 * rows in a grid (column types, NULL apart from text, a long cell cut with
 * a way to expand it, the row count and time); a write shows the preview an
 * approval shows and runs only on Confirm, then appears in History as the
 * owner's, approved; Export CSV answers the rows as `export_query` writes
 * them; the statement never travels in a URL; no CSP violation; each route
 * keeps the key/cookie/CSRF/Host rules.
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
  send,
} from "../_console.ts";

const ignore = needsChromium().ignore || needs("postgres").ignore;

Deno.test({
  name:
    "the Query page: a read's grid, a write confirmed with its preview and kept in History as yours, CSV, and the routes' guards",
  ignore,
  sanitizeOps: false,
  sanitizeResources: false,
  async fn() {
    await using fixture = await openFixture("postgres");
    const s = fixture.schema;
    const saved = savedConnection(fixture, "Shop");
    await using server = await serverWith([saved], {}, {
      openBrowser: () => Promise.resolve(false),
    });
    await using chromium = await startBrowser();
    const t = await openConsole(chromium.browser, server.server.console!);
    const { page } = t;
    const urls: string[] = [];
    page.on("request", (request) => urls.push(request.url()));

    await page.goto(`${t.base}query`);
    await page.select("#query-connection", saved.id);
    await page.type(
      "#query-sql",
      `select b.id, b.title, b.price, k.missing, repeat('xy', 150) as long\nfrom ${s}.books b left join ${s}.kinds k on k.id = b.id order by b.id`,
    );
    await Promise.all([
      page.waitForNavigation(),
      page.keyboard.down("Control").then(() => page.keyboard.press("Enter"))
        .then(() => page.keyboard.up("Control")),
    ]);
    const error = await page.$eval("#query-error", (n) => n.textContent)
      .catch(() => null);
    assertEquals(error, null);
    assertEquals(
      await page.$eval("#query-count", (n) => n.textContent),
      "2 rows",
    );
    const heads = await page.$$eval(
      "#query-grid th",
      (nodes) => nodes.map((n) => n.textContent),
    );
    assertEquals(heads, [
      "idint8",
      "titlevarchar",
      "pricenumeric",
      "missingtext",
      "longtext",
    ]);
    const first = await page.$$eval(
      "#query-grid tbody tr:first-child td",
      (nodes) => nodes.map((n) => n.innerHTML),
    );
    assertMatch(first[0]!, /<code>1<\/code>/);
    assertMatch(first[1]!, /Notes/);
    // NULL is its own mark, not the text "NULL".
    assertMatch(first[3]!, /<span class="null">NULL<\/span>/);
    // The 300-character cell is cut, the rest behind its <details>.
    assertMatch(first[4]!, /<details class="long">/);
    assertMatch(first[4]!, /300 characters/);
    assertMatch(await page.$eval("#query-ms", (n) => n.textContent!), / ms$/);
    // The statement stayed in the box after the run.
    assertMatch(
      await page.$eval(
        "#query-sql",
        (n) => (n as unknown as { value: string }).value,
      ),
      /from .*books b/,
    );
    await screenshots(page, "console-query");
    assert(
      await overflowsAt390(page) <= 1,
      "the Query page scrolls sideways at 390 px",
    );

    // The tools' budgets: a long read is cut at the row limit, and says so.
    const long = await send(`${t.base}query`, "POST", {
      cookie: t.cookie,
      origin: t.origin,
    }, {
      csrf: t.csrf,
      connection: saved.id,
      sql: "select g from generate_series(1, 5000) g",
    });
    const limit = server.server.state.settings.defaultRowLimit;
    assertMatch(long.text, new RegExp(`id="query-count">${limit} rows<`));
    assertMatch(long.text, /id="query-truncation"/);

    // A statement the engine cannot parse: its error, the text kept.
    await page.$eval(
      "#query-sql",
      (n) => (n as unknown as { value: string }).value = "selec 1",
    );
    await Promise.all([page.waitForNavigation(), page.click("#query-run")]);
    assertMatch(
      await page.$eval("#query-error", (n) => n.textContent!),
      /syntax error/,
    );
    assertEquals(
      await page.$eval(
        "#query-sql",
        (n) => (n as unknown as { value: string }).value,
      ),
      "selec 1",
    );

    // Cancel: the write shown, then dropped; nothing is written.
    await page.$eval(
      "#query-sql",
      (n) => (n as unknown as { value: string }).value = "",
    );
    await page.type("#query-sql", `delete from ${s}.books`);
    await Promise.all([page.waitForNavigation(), page.click("#query-run")]);
    assertMatch(
      await page.$eval("#query-confirm h2", (n) => n.textContent!),
      /It writes/,
    );
    await Promise.all([page.waitForNavigation(), page.click("#query-cancel")]);
    assertMatch(await page.content(), /Cancelled: nothing was run/);
    assertEquals(
      (await fixture.admin(`select count(*)::int as n from ${s}.books`))
        .map((row) => (row as { n: number }).n),
      [2],
    );

    // A write: the preview first, nothing written until Confirm.
    await page.$eval(
      "#query-sql",
      (n) => (n as unknown as { value: string }).value = "",
    );
    await page.type(
      "#query-sql",
      `update ${s}.books set price = 1.25 where id = 1`,
    );
    await Promise.all([page.waitForNavigation(), page.click("#query-run")]);
    assertMatch(
      await page.$eval("#query-preview", (n) => n.textContent!),
      /^Changes 1 row/,
    );
    await screenshots(page, "console-query-confirm");
    const before = await fixture.admin(
      `select price::text as p from ${s}.books where id = 1`,
    );
    assertEquals((before[0] as { p: string }).p, "12.50");
    await Promise.all([
      page.waitForNavigation(),
      page.click("#query-confirm-run"),
    ]);
    assertEquals(
      await page.$eval("#query-count", (n) => n.textContent),
      "1 row changed",
    );
    const after = await fixture.admin(
      `select price::text as p from ${s}.books where id = 1`,
    );
    assertEquals((after[0] as { p: string }).p, "1.25");
    // A Confirm runs once.
    const replay = await send(`${t.base}query/confirm`, "POST", {
      cookie: t.cookie,
      origin: t.origin,
    }, {
      csrf: t.csrf,
      plan: "0".repeat(64),
    });
    assertEquals(replay.status, 409);

    // History: the write as the owner's, approved by them.
    await page.goto(`${t.base}history`);
    const row = await page.$eval(
      "#live tbody tr:first-child",
      (n) => n.textContent!,
    );
    assertMatch(row, /update .*books set price = 1\.25/);
    assertMatch(row, /you \(console\)/);
    assertMatch(row, /approved by you/);

    // Export CSV: the same read, every row, as export_query writes CSV.
    const csv = await send(`${t.base}query/export`, "POST", {
      cookie: t.cookie,
      origin: t.origin,
    }, {
      csrf: t.csrf,
      connection: saved.id,
      sql: `select id, title from ${s}.books order by id`,
    });
    assertEquals(csv.status, 200);
    assertEquals(csv.text, "id,title\r\n1,Notes\r\n2,Computing Machinery\r\n");
    // A write is no export.
    const refused = await send(`${t.base}query/export`, "POST", {
      cookie: t.cookie,
      origin: t.origin,
    }, {
      csrf: t.csrf,
      connection: saved.id,
      sql: `delete from ${s}.books`,
    });
    assertMatch(refused.text, /Export CSV runs reads only/);

    // The schema page's way in: prefilled by a POST, quoted.
    const opened = await send(`${t.base}query/open`, "POST", {
      cookie: t.cookie,
      origin: t.origin,
    }, { csrf: t.csrf, connection: saved.id, schema: s, table: "books" });
    assertMatch(
      opened.text,
      new RegExp(
        `SELECT \\* FROM &quot;${s}&quot;\\.&quot;books&quot; LIMIT 100`,
      ),
    );

    // The statement never went in a URL.
    for (const url of urls) {
      assert(!/books|update|select/i.test(decodeURIComponent(url)), url);
    }
    assertEquals(t.problems, []);

    await assertGuarded(t, "GET", "/query");
    for (
      const [path, form] of [
        ["/query", { connection: saved.id, sql: "select 1" }],
        ["/query/confirm", { plan: "x" }],
        ["/query/cancel", { plan: "x" }],
        ["/query/export", { connection: saved.id, sql: "select 1" }],
        ["/query/open", { connection: saved.id, table: "books" }],
      ] as const
    ) await assertGuarded(t, "POST", path, form);
  },
});
