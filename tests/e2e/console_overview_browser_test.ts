/**
 * The console's Overview (its home) in a real headless Chromium: after real
 * calls from an SDK client (reads, a denied write, a call to a database
 * that is down) and older rows in the log, its figures for the last hour and
 * day — calls, p50/p95, denials, errors, by client and by connection — are
 * the activity log's, counted here independently; the connection that is
 * down is listed with its error; the charts are SVG from the server; no CSP
 * violation.
 */

import { assert, assertEquals, assertMatch } from "@std/assert";
import type { ActivityEntry } from "../../lib/app/activity_log.ts";
import { savedConnection, serverWith } from "../_connections.ts";
import { needs, openFixture } from "../_db.ts";
import { needsChromium, startBrowser } from "../_browser.ts";
import {
  assertGuarded,
  openConsole,
  overflowsAt390,
  screenshots,
} from "../_console.ts";
import { sdkClient } from "../_sdk.ts";

const ignore = needsChromium().ignore || needs("postgres").ignore;

/** Nearest-rank percentile, written again here. */
function nearestRank(values: number[], p: number): number | null {
  if (values.length === 0) return null;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.ceil(p * sorted.length) - 1] ?? sorted[0]!;
}

Deno.test({
  name:
    "the Overview: the last hour's and day's calls, latency, denials and errors match the activity log; a connection that is down is listed",
  ignore,
  sanitizeOps: false,
  sanitizeResources: false,
  async fn() {
    await using fixture = await openFixture("postgres");
    const shop = savedConnection(fixture, "Shop");
    const down = savedConnection(
      { engine: "postgres", url: "postgres://postgres@127.0.0.1:1/none" },
      "Down",
    );
    await using server = await serverWith([shop, down], {}, {
      openBrowser: () => Promise.resolve(false),
    });
    const reader = await server.mint("readOnly");
    const client = await sdkClient(server.url, reader.plaintext);
    try {
      const call = (connection: string, query: string) =>
        client.callTool({
          name: "execute_query",
          arguments: { connection_id: connection, query },
        }).catch(() => null);
      for (let i = 0; i < 4; i++) {
        await call(shop.id, `select count(*) from ${fixture.schema}.books`);
      }
      await call(shop.id, `delete from ${fixture.schema}.books`);
      await call(down.id, "select 1");
    } finally {
      await client.close();
    }
    // Older rows: one inside the day only, one outside both.
    const now = Date.now();
    const old: ActivityEntry = {
      time: now - 2 * 3_600_000,
      principalKind: "token",
      tokenId: null,
      tokenName: "old",
      clientName: "Old client",
      clientVersion: null,
      method: "tools/call",
      target: "execute_query",
      connectionId: shop.id,
      outcome: "denied",
      errorCode: null,
      durationMs: 999,
      sqlDigest: null,
      traceparent: null,
      tracestate: null,
      baggage: null,
      detail: null,
    };
    server.server.activity.record(old);
    server.server.activity.record({
      ...old,
      time: now - 30 * 3_600_000,
      outcome: "error",
    });
    const rows = await server.server.activity.search({ limit: 100_000 });

    await using chromium = await startBrowser();
    const t = await openConsole(chromium.browser, server.server.console!);
    const { page } = t;
    await page.goto(t.base);
    const figure = (key: string) =>
      page.$eval(`[data-figure="${key}"]`, (n) => n.textContent!);
    for (
      const [key, span] of [["hour", 3_600_000], ["day", 86_400_000]] as const
    ) {
      const inside = rows.filter((row) => row.time > Date.now() - span);
      assert(inside.length > 0);
      assertEquals(await figure(`${key}-calls`), String(inside.length), key);
      assertEquals(
        await figure(`${key}-denied`),
        String(inside.filter((row) => row.outcome === "denied").length),
        key,
      );
      assertEquals(
        await figure(`${key}-errors`),
        String(
          inside.filter((row) =>
            row.outcome === "error" || row.outcome === "rateLimited"
          ).length,
        ),
        key,
      );
      const durations = inside.map((row) => row.durationMs);
      assertEquals(
        await figure(`${key}-p50`),
        `${nearestRank(durations, 0.5)} ms`,
        key,
      );
      assertEquals(
        await figure(`${key}-p95`),
        `${nearestRank(durations, 0.95)} ms`,
        key,
      );
      // By connection: Shop's calls.
      const shopCalls = inside.filter((row) => row.connectionId === shop.id);
      assertEquals(
        await page.$eval(
          `[data-window="${key}"] table.by-connection tr[data-key="${shop.id}"] [data-calls]`,
          (n) => n.textContent!,
        ),
        String(shopCalls.length),
      );
    }
    // The old client shows in the day, not the hour.
    assertEquals(
      await page.$$eval(
        `[data-window="hour"] table.by-client tr[data-key="Old client"]`,
        (n) => n.length,
      ),
      0,
    );
    assertEquals(
      await page.$eval(
        `[data-window="day"] table.by-client tr[data-key="Old client"] [data-denied]`,
        (n) => n.textContent!,
      ),
      "1",
    );
    // The charts are the server's SVG.
    assertEquals(await page.$$eval("figure.chart svg", (n) => n.length), 2);
    assert(
      await page.$$eval("figure.chart svg rect", (n) => n.length) >= 2,
    );
    // The connection that is down, with its error.
    assertMatch(
      await page.$eval(`[data-problem="${down.id}"]`, (n) => n.textContent!),
      /Down — .*(refused|connect|reach)/i,
    );
    // Shop answered: at most its login's risks (a superuser here), no failure.
    assertEquals(
      await page.$$eval(
        `[data-problem="${shop.id}"] .failure`,
        (n) => n.length,
      ),
      0,
    );
    await screenshots(page, "console-overview");
    assert(
      await overflowsAt390(page) <= 1,
      "Overview scrolls sideways at 390 px",
    );
    assertEquals(t.problems, []);
    await assertGuarded(t, "GET", "/");
  },
});
