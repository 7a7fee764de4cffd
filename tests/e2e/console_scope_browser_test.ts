/**
 * The console's cookie as an outsider on the same machine sees it, in a
 * real headless Chromium: another web server on 127.0.0.1 (any port) that
 * the user opens never receives the console's cookie, nor its prefix in a
 * Referer; the cookie replayed to the console outside its prefix opens
 * nothing (docs/console.md "Security").
 */

import type { Page } from "puppeteer-core";
import { assert, assertEquals } from "@std/assert";
import { savedConnection, serverWith } from "../_connections.ts";
import { needsChromium, startBrowser } from "../_browser.ts";

/** A local web server that records what browsers send it. */
function rogueServer() {
  const seen: { path: string; cookie: string; referer: string }[] = [];
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen() {} },
    (request) => {
      seen.push({
        path: new URL(request.url).pathname,
        cookie: request.headers.get("cookie") ?? "",
        referer: request.headers.get("referer") ?? "",
      });
      return new Response(
        "<!doctype html><title>elsewhere</title><p>elsewhere</p>",
        { headers: { "content-type": "text/html" } },
      );
    },
  );
  return {
    seen,
    origin: `http://127.0.0.1:${server.addr.port}`,
    [Symbol.asyncDispose]: () => server.shutdown(),
  };
}

Deno.test({
  name:
    "the console's cookie never reaches another server on 127.0.0.1, and the prefix leaks in no Referer",
  ignore: needsChromium().ignore,
  sanitizeOps: false,
  sanitizeResources: false,
  async fn() {
    const saved = savedConnection({
      engine: "sqlite",
      url: await Deno.makeTempFile({ suffix: ".db" }),
    }, "Secret Shop");
    await using server = await serverWith([saved], {}, {
      openBrowser: () => Promise.resolve(false),
    });
    const browserConsole = server.server.console!;
    const prefix = browserConsole.path;
    await using rogue = rogueServer();
    await using chromium = await startBrowser();
    const page: Page = await chromium.browser.newPage();
    assertEquals((await page.goto(browserConsole.keyUrl))?.status(), 200);
    const cookie = (await chromium.browser.cookies()).find((c) =>
      c.name === `dbport_console_${browserConsole.port}`
    )!;
    assertEquals(cookie.path, prefix);
    // The user opens another local site: at its root, at a console-like
    // path of its own, and by leaving the console page for it.
    await page.goto(`${rogue.origin}/`);
    await page.goto(`${rogue.origin}/c/${"0".repeat(32)}/`);
    await page.goto(`${browserConsole.url}connections`);
    await Promise.all([
      page.waitForNavigation(),
      page.evaluate((to) => {
        location.href = to;
      }, `${rogue.origin}/left`),
    ]);
    // A page of the console that tries to reach it (CSP connect-src 'self').
    await page.goto(`${browserConsole.url}tokens`);
    await page.evaluate(async (to) => {
      await fetch(to, { credentials: "include" }).catch(() => null);
    }, `${rogue.origin}/fetched`);
    const paths = rogue.seen.map((s) => s.path);
    assert(paths.includes("/"), paths.join());
    assert(paths.includes("/left"), paths.join());
    assert(!paths.includes("/fetched"), "the CSP keeps the console to itself");
    for (const request of rogue.seen) {
      assert(!request.cookie.includes(cookie.value), JSON.stringify(request));
      assert(!request.cookie.includes("dbport_console"), request.cookie);
      assert(!request.referer.includes(prefix), JSON.stringify(request));
    }
    // The console's own pages still see the session.
    const back = await page.goto(`${browserConsole.url}connections`);
    assertEquals(back?.status(), 200);
    assert((await page.content()).includes("Secret Shop"));
    // Outside the prefix the browser sends no cookie and gets a bare 404.
    const bare = await page.goto(
      `http://127.0.0.1:${browserConsole.port}/connections`,
    );
    assertEquals(bare?.status(), 404);
    assert(!(await page.content()).includes("Secret Shop"));
    await Deno.remove(saved.url).catch(() => {});
  },
});
