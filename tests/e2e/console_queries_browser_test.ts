/**
 * The console's Queries page in a real headless Chromium: reached from the
 * navigation, it shows queries.json as the server has it (a change to the
 * file shows at the next load), every value as text (a `<script>` in a
 * statement never runs), under the console's guards, within 390 px and with
 * no CSP violation.
 */

import { assert, assertEquals } from "@std/assert";
import { inAppDir } from "../../lib/app/paths.ts";
import { editQueries, QUERIES_FILE } from "../../lib/app/queries.ts";
import { savedConnection, serverWith } from "../_connections.ts";
import { openFixture } from "../_db.ts";
import { needsChromium, startBrowser } from "../_browser.ts";
import { assertGuarded, openConsole, overflowsAt390 } from "../_console.ts";
import { waitUntil } from "../_wait.ts";

Deno.test({
  name:
    "the Queries page in Chromium: from the navigation, as queries.json is now, escaped, guarded, 390 px",
  ignore: needsChromium().ignore,
  sanitizeOps: false,
  sanitizeResources: false,
  async fn() {
    await using fixture = await openFixture("sqlite");
    const shop = savedConnection(fixture, "Shop");
    await using server = await serverWith([shop], {}, {
      openBrowser: () => Promise.resolve(false),
    });
    const file = inAppDir(server.home, QUERIES_FILE);
    await using chromium = await startBrowser();
    const t = await openConsole(chromium.browser, server.server.console!);
    const { page } = t;

    await page.goto(t.base);
    await Promise.all([
      page.waitForNavigation(),
      page.click(`nav a[href$="/queries"]`),
    ]);
    assert(page.url().endsWith("/queries"), page.url());
    assert((await page.content()).includes("No saved query"));

    await editQueries(file, () => [{
      name: "authors_named",
      connectionId: shop.id,
      sql:
        "select * from authors where name = :name -- <script>window.pwned = 1</script> " +
        "x".repeat(300),
      params: [{ name: "name", type: "text", default: "<b>Ada</b>" }],
      description: '<img src=x onerror="window.pwned = 2">',
    }]);
    await waitUntil("the page to show the saved query", async () => {
      await page.goto(`${t.base}queries`);
      return (await page.$(`tr[data-query="authors_named"]`)) !== null;
    });
    const cells = await page.$$eval(
      `tr[data-query="authors_named"] td`,
      (tds) =>
        tds.map((td) => (td as unknown as { innerText: string }).innerText),
    );
    assertEquals(cells[0], "q_authors_named");
    assertEquals(cells[1], "Shop");
    assertEquals(cells[2], ':name text = "<b>Ada</b>"');
    assert(cells[3]!.includes("<script>window.pwned = 1</script>"), cells[3]);
    assertEquals(cells[4], '<img src=x onerror="window.pwned = 2">');
    assertEquals(await page.evaluate("window.pwned"), undefined);
    assertEquals(
      await page.$$("tr[data-query] script, tr[data-query] img"),
      [],
    );
    assert(await overflowsAt390(page) <= 1, "Queries at 390 px");

    await assertGuarded(t, "GET", "/queries");
    assertEquals(t.problems, []);
  },
});
