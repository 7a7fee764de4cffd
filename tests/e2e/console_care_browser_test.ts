/**
 * The console's everyday care in a real headless Chromium: times in the
 * browser's own zone with UTC on hover; Activity with method and tool apart,
 * the bridge's token named as such and never `__stdio_bridge__`, live
 * filters without a button, and pages of 200; an AI client's write
 * approved with the `a` key on the focused card shows in History as
 * "approved by you"; `/` focuses the search; the token form's connections
 * are a searchable list; every page fits 390 px; no CSP violation.
 */

import { assert, assertEquals, assertMatch } from "@std/assert";
import type { ActivityEntry } from "../../lib/app/activity_log.ts";
import { BRIDGE_TOKEN_NAME } from "../../lib/base/identity.ts";
import { savedConnection, serverWith } from "../_connections.ts";
import { openFixture } from "../_db.ts";
import { needsChromium, startBrowser } from "../_browser.ts";
import { openConsole, overflowsAt390, screenshots } from "../_console.ts";
import { sdkClient } from "../_sdk.ts";
import { waitUntil } from "../_wait.ts";

Deno.test({
  name:
    "the console's everyday care: local time, method and tool apart, the bridge's clients by name, live filters, paging, a/d and /, approved by you, a searchable connection list, 390 px",
  ignore: needsChromium().ignore,
  sanitizeOps: false,
  sanitizeResources: false,
  async fn() {
    await using fixture = await openFixture("sqlite");
    const shop = savedConnection(fixture, "Shop", {
      externalAccess: "readWrite",
      safeMode: "alert",
    });
    const many = Array.from({ length: 40 }, (_, i) =>
      savedConnection(
        { engine: "sqlite", url: `/tmp/dbport-care-${i}.db` },
        `Branch ${String(i).padStart(2, "0")}`,
      ));
    await using server = await serverWith([shop, ...many], {
      hostDialog: "console",
      approvalTimeoutSeconds: 60,
    }, { openBrowser: () => Promise.resolve(false) });
    // 205 calls through the stdio bridge by a named client.
    const now = Date.now();
    const entry: ActivityEntry = {
      time: now - 60_000,
      principalKind: "bridge",
      tokenId: null,
      tokenName: BRIDGE_TOKEN_NAME,
      clientName: "claude-code",
      clientVersion: "2.1.0",
      method: "tools/call",
      target: "list_tables",
      connectionId: shop.id,
      outcome: "success",
      errorCode: null,
      durationMs: 3,
      sqlDigest: null,
      traceparent: null,
      tracestate: null,
      baggage: null,
      detail: null,
    };
    for (let i = 0; i < 205; i++) {
      server.server.activity.record({ ...entry, time: now - 60_000 + i });
    }
    server.server.activity.record({
      ...entry,
      clientName: "Other",
      principalKind: "token",
      tokenName: "ci",
      target: "execute_query",
      outcome: "denied",
    });

    await using chromium = await startBrowser();
    const t = await openConsole(chromium.browser, server.server.console!);
    const { page } = t;
    await page.emulateTimezone("Asia/Tokyo");

    // Activity: method and tool apart, the bridge's token in words.
    await page.goto(`${t.base}activity`);
    const first = `#activity-table tbody tr:nth-child(2)`;
    assertEquals(
      await page.$eval(`${first} .method`, (n) => n.textContent),
      "tools/call",
    );
    assertEquals(
      await page.$eval(`${first} .target`, (n) => n.textContent),
      "list_tables",
    );
    assertEquals(
      await page.$eval(`${first} .token`, (n) => n.textContent),
      "stdio bridge",
    );
    assertMatch(
      await page.$eval(`${first} .client`, (n) => n.textContent!),
      /^claude-code 2\.1\.0$/,
    );
    assert(!(await page.content()).includes(BRIDGE_TOKEN_NAME));
    // Local time (Tokyo, UTC+9), UTC in the title.
    const time = await page.$eval(`${first} time`, (n) => ({
      text: n.textContent!,
      title: n.getAttribute("title")!,
      iso: n.getAttribute("datetime")!,
    }));
    const tokyo = new Date(Date.parse(time.iso) + 9 * 3_600_000).toISOString()
      .replace("T", " ").slice(0, 19);
    assertEquals(time.text, `${tokyo} GMT+9`);
    assertEquals(
      time.title,
      `${time.iso.replace("T", " ").slice(0, 19)} UTC`,
    );
    // Pages of 200, then the older ones.
    const rows = () => page.$$eval("#activity-table tbody tr", (n) => n.length);
    assertEquals(await rows(), 200);
    await Promise.all([page.waitForNavigation(), page.click("#older")]);
    assertEquals(await rows(), 6);
    // A live filter: no button, the rows follow the choice.
    await page.goto(`${t.base}activity`);
    await page.select("select[name=client]", "Other");
    await waitUntil(
      "the activity filtered to Other",
      async () => await rows() === 1,
    );
    assertMatch(page.url(), /client=Other/);
    await screenshots(page, "console-activity");
    assert(await overflowsAt390(page) <= 1, "Activity at 390 px");

    // An AI client's write, approved with "a" on the focused card.
    const writer = await server.mint("readWrite", { name: "editor" });
    const client = await sdkClient(server.url, writer.plaintext, {
      name: "Claude Code",
    });
    try {
      await page.goto(t.base);
      const call = client.callTool({
        name: "execute_query",
        arguments: {
          connection_id: shop.id,
          query: "INSERT INTO authors (name) VALUES ('Grace')",
        },
      });
      await page.waitForSelector("[data-approval]", { timeout: 20_000 });
      await screenshots(page, "console-approvals");
      await page.focus("[data-approval]");
      // Approve arms a second after the card appears (assets.ts).
      await page.waitForSelector("[data-approval][data-armed]");
      await Promise.all([page.waitForNavigation(), page.keyboard.press("a")]);
      const result = await call as { isError?: boolean };
      assertEquals(result.isError ?? false, false);
    } finally {
      await client.close();
    }
    await page.goto(`${t.base}history`);
    const row = await page.$eval(
      "#history-table tbody tr:first-child",
      (n) => n.textContent!,
    );
    assertMatch(row, /INSERT INTO authors/);
    assertMatch(
      row,
      /approved by you at \d{4}-\d\d-\d\d \d\d:\d\d:\d\d GMT\+9/,
    );
    // "/" focuses the search; the text filters live.
    await page.keyboard.press("/");
    assertEquals(
      await page.evaluate("document.activeElement.name"),
      "q",
    );
    await page.keyboard.type("nothing-like-this");
    await waitUntil(
      "the history filtered",
      async () => (await page.content()).includes("No statement matches."),
    );
    await screenshots(page, "console-history");
    assert(await overflowsAt390(page) <= 1, "History at 390 px");

    // Tokens: the connections are a list to search, not 41 boxes in a row.
    await page.goto(`${t.base}tokens`);
    await page.type("#token-connection-search", "branch 3");
    const shown = await page.$$eval(
      "#token-connections label:not([hidden])",
      (n) => n.map((label) => label.textContent!.trim()),
    );
    assertEquals(shown, Array.from({ length: 10 }, (_, i) => `Branch 3${i}`));
    const box = await page.$eval("#token-connections", (n) => ({
      height: (n as unknown as { clientHeight: number }).clientHeight,
    }));
    assert(box.height < 300, `the list is ${box.height} px high`);
    await screenshots(page, "console-tokens");
    assert(await overflowsAt390(page) <= 1, "Tokens at 390 px");
    assertEquals(t.problems, []);
  },
});
