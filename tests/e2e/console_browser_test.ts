/**
 * The console in a real headless Chromium (docs/console.md): an SDK
 * client's write waits, its approval appears on the page without a reload,
 * Approve lets it commit, Deny ends it `denied`, an unanswered one ends
 * `user_cancelled`; a token made on the page works at once and a revoked one
 * stops; a policy changed on the page holds from the next call; and the
 * key, cookie, Host, Origin and CSRF refusals over real HTTP. Each page is
 * saved as a screenshot in test-artifacts/.
 */

import type { Client } from "@modelcontextprotocol/client";
import type { Page } from "puppeteer-core";
import { assert, assertEquals, assertMatch } from "@std/assert";
import { saveSettings } from "../../lib/serve.ts";
import { savedConnection, serverWith } from "../_connections.ts";
import { needs, openFixture } from "../_db.ts";
import { needsChromium, screenshot, startBrowser } from "../_browser.ts";
import { sdkClient, wireCode } from "../_sdk.ts";
import { waitUntil } from "../_wait.ts";

const ignore = needsChromium().ignore || needs("postgres").ignore;

/** A request with exactly these headers, over a plain socket. */
async function raw(
  port: number,
  head: string,
  body = "",
): Promise<{ status: number; text: string }> {
  const conn = await Deno.connect({ hostname: "127.0.0.1", port });
  try {
    const bytes = new TextEncoder().encode(body);
    await conn.write(
      new TextEncoder().encode(
        `${head}\r\nContent-Length: ${bytes.length}\r\nConnection: close\r\n\r\n${body}`,
      ),
    );
    const chunks: Uint8Array[] = [];
    const buffer = new Uint8Array(65536);
    for (;;) {
      const n = await conn.read(buffer);
      if (n === null) break;
      chunks.push(buffer.slice(0, n));
    }
    const text = new TextDecoder().decode(
      new Uint8Array(chunks.flatMap((chunk) => [...chunk])),
    );
    return { status: Number(text.split(" ")[1]), text };
  } finally {
    try {
      conn.close();
    } catch { /* closed by the server */ }
  }
}

/** The text of a tool result's first item. */
function textOf(result: unknown): string {
  const content = (result as { content: { text: string }[] }).content;
  return content[0]?.text ?? "";
}

Deno.test({
  name:
    "the console in Chromium: approvals live, tokens, policies, and every refusal",
  ignore,
  // puppeteer keeps its own sockets and timers between steps.
  sanitizeOps: false,
  sanitizeResources: false,
  async fn(t) {
    await using fixture = await openFixture("postgres");
    const saved = savedConnection(fixture, "Shop", {
      externalAccess: "readWrite",
      safeMode: "alert",
    });
    const opened: string[] = [];
    await using server = await serverWith([saved], {
      hostDialog: "console",
      approvalTimeoutSeconds: 60,
    }, {
      openBrowser: (url) => {
        opened.push(url);
        return Promise.resolve(false);
      },
    });
    const browserConsole = server.server.console!;
    assert(browserConsole !== null, "the console runs by default");
    const base = browserConsole.url;
    const port = browserConsole.port;
    const prefix = browserConsole.path;
    await using chromium = await startBrowser();
    const page: Page = await chromium.browser.newPage();
    await page.setViewport({ width: 1200, height: 800 });
    const cspErrors: string[] = [];
    page.on("console", (message) => {
      if (/Content.Security.Policy/i.test(message.text())) {
        cspErrors.push(message.text());
      }
    });
    const writer = await server.mint("readWrite", { name: "editor" });
    const client: Client = await sdkClient(server.url, writer.plaintext, {
      name: "Claude Code",
    });
    const authors = `${fixture.schema}.authors`;
    const insert = (name: string) =>
      client.callTool({
        name: "execute_query",
        arguments: {
          connection_id: saved.id,
          query: `INSERT INTO ${authors} (name) VALUES ('${name}')`,
        },
      });
    const names = async () =>
      (await fixture.admin(`select name from ${authors}`) as {
        name: string;
      }[]).map((row) => row.name);

    try {
      await t.step(
        "without the key: 403, nothing about connections",
        async () => {
          const response = await page.goto(base);
          assertEquals(response?.status(), 403);
          const body = await page.content();
          assert(!body.includes("Shop"), body);
          const wrong = await page.goto(`${base}?key=${"0".repeat(64)}`);
          assertEquals(wrong?.status(), 403);
          const connections = await page.goto(`${base}connections`);
          assertEquals(connections?.status(), 403);
          assert(!(await page.content()).includes("Shop"));
        },
      );

      await t.step(
        "the key becomes an HttpOnly SameSite=Strict cookie and leaves the address bar",
        async () => {
          const response = await page.goto(browserConsole.keyUrl);
          assertEquals(response?.status(), 200);
          assertEquals(page.url(), base);
          const cookies = await chromium.browser.cookies();
          const cookie = cookies.find((c) =>
            c.name === `dbport_console_${port}`
          );
          assert(cookie !== undefined, JSON.stringify(cookies));
          assertEquals(cookie.httpOnly, true);
          assertEquals(cookie.sameSite, "Strict");
          assertEquals(cookie.path, prefix, "sent only under the prefix");
          assert(!cookie.value.includes(browserConsole.key));
          // The live feed is open: approvals will not open another tab.
          await waitUntil(
            "the page's event stream",
            () => browserConsole.events.listeners > 0,
          );
        },
      );

      await t.step(
        "a write waits; its approval appears without a reload; Approve commits it",
        async () => {
          await page.evaluate(() => {
            (globalThis as unknown as { sameDocument: boolean }).sameDocument =
              true;
          });
          const call = insert("Approved Ann");
          const card = await page.waitForSelector("[data-approval]", {
            timeout: 15_000,
          });
          assert(card !== null);
          assertEquals(
            await page.evaluate(() =>
              (globalThis as unknown as { sameDocument?: boolean }).sameDocument
            ),
            true,
            "the page was not reloaded",
          );
          const text = await page.$eval(
            "[data-approval]",
            (node) => node.textContent ?? "",
          );
          assertMatch(text, /Claude Code/);
          assertMatch(text, /editor/);
          assertMatch(text, /Shop/);
          assertMatch(
            text,
            /INSERT INTO .*authors \(name\) VALUES \('Approved Ann'\)/,
          );
          assertMatch(text, /Adds 1 row|1 row/);
          assertEquals(
            await page.$eval("#pending-badge", (node) => node.textContent),
            "1",
          );
          assertEquals(
            opened,
            [],
            "a console already open is not opened again",
          );
          await screenshot(page, "console-approvals");
          // Approve arms a second after the card appears (assets.ts).
          await page.waitForSelector("[data-approval][data-armed]");
          await Promise.all([
            page.waitForNavigation(),
            page.click("button.approve"),
          ]);
          const result = await call;
          assert(result.isError !== true, textOf(result));
          assert((await names()).includes("Approved Ann"));
          assertMatch(await page.content(), /Approved: the request goes on/);
          assertEquals(await page.$("[data-approval]"), null);
        },
      );

      await t.step("Deny ends the write denied, nothing written", async () => {
        const call = insert("Denied Dan");
        await page.waitForSelector("[data-approval]", { timeout: 15_000 });
        await Promise.all([
          page.waitForNavigation(),
          page.click("button.deny"),
        ]);
        const result = await call;
        assertEquals(result.isError, true);
        assertMatch(textOf(result), /^denied:/);
        assert(!(await names()).includes("Denied Dan"));
      });

      await t.step(
        "an approval no one answers ends user_cancelled and leaves the page",
        async () => {
          await saveSettings(server.home, {
            hostDialog: "console",
            approvalTimeoutSeconds: 2,
          });
          await waitUntil(
            "the new approvalTimeoutSeconds",
            () => server.server.state.settings.approvalTimeoutSeconds === 2,
          );
          const call = insert("Nobody");
          await page.waitForSelector("[data-approval]", { timeout: 15_000 });
          const result = await call;
          assertEquals(result.isError, true);
          assertMatch(
            textOf(result),
            /^user_cancelled: no one answered .* within 2 s/,
          );
          await page.waitForSelector("[data-approval]", {
            hidden: true,
            timeout: 15_000,
          });
          assert(!(await names()).includes("Nobody"));
          await saveSettings(server.home, {
            hostDialog: "console",
            approvalTimeoutSeconds: 60,
          });
        },
      );

      await t.step(
        "Activity and History show names, live and searchable",
        async () => {
          await page.goto(`${base}activity`);
          const activity = await page.$eval(
            "#live",
            (node) => node.textContent ?? "",
          );
          assertMatch(activity, /Claude Code/);
          assertMatch(activity, /Shop/);
          assertMatch(activity, /denied/);
          await screenshot(page, "console-activity");
          // Live: a new call shows up without a reload.
          const before = await page.$$eval(
            "[data-activity]",
            (rows) => rows.length,
          );
          await client.callTool({
            name: "list_connections",
            arguments: {},
          });
          await page.waitForFunction(
            (n: number) =>
              (globalThis as unknown as {
                document: { querySelectorAll(s: string): { length: number } };
              }).document.querySelectorAll("[data-activity]").length > n,
            { timeout: 15_000 },
            before,
          );
          await page.goto(`${base}history?q=approved+ann`);
          const history = await page.$eval(
            "#live",
            (node) => node.textContent ?? "",
          );
          assertMatch(history, /Approved Ann/);
          assert(!history.includes("Denied Dan"));
          await screenshot(page, "console-history");
          const csv = await page.evaluate(
            async (at) => await (await fetch(at)).text(),
            `${prefix}/history/export?format=csv&q=approved`,
          );
          assertMatch(csv, /^time,connection,outcome/);
          assertMatch(csv, /Shop,success,write/);
        },
      );

      let created = "";
      await t.step(
        "a token created on the page works at once; revoked, it stops",
        async () => {
          await page.goto(`${base}tokens`);
          await page.type("input[name=name]", "made in the console");
          await page.select("select[name=level]", "readOnly");
          await Promise.all([
            page.waitForNavigation(),
            page.click("button.primary"),
          ]);
          created = await page.$eval(
            "#token-plaintext",
            (node) => node.textContent?.trim() ?? "",
          );
          assertMatch(created, /^dbp_/);
          await screenshot(page, "console-tokens");
          const fresh = await sdkClient(server.url, created, { name: "fresh" });
          try {
            const listed = await fresh.callTool({
              name: "list_connections",
              arguments: {},
            });
            assert(listed.isError !== true, textOf(listed));
            assertMatch(textOf(listed), /Shop/);
          } finally {
            await fresh.close();
          }
          // Shown once: a reload no longer shows it.
          await page.reload();
          assertEquals(await page.$("#token-plaintext"), null);
          const row = await page.$$eval(
            "[data-token]",
            (rows) =>
              rows.map((r) => ({
                id: r.getAttribute("data-token"),
                text: r.textContent,
              })),
          );
          const mine = row.find((r) => r.text?.includes("made in the console"));
          assert(mine !== undefined);
          await Promise.all([
            page.waitForNavigation(),
            page.click(`[data-token="${mine.id}"] button.revoke`),
          ]);
          const refused = await sdkClient(server.url, created, {
            name: "fresh",
          })
            .then(async (c) => {
              await c.close();
              return "connected";
            }, (error: unknown) => String(error));
          assertMatch(refused, /401|[Uu]nauthori[sz]ed|revoked|invalid/);
        },
      );

      await t.step(
        "a policy changed on the page holds from the next call",
        async () => {
          await page.goto(`${base}connections`);
          await screenshot(page, "console-connections");
          await page.select(
            `[data-connection="${saved.id}"] select[name=externalAccess]`,
            "blocked",
          );
          await Promise.all([
            page.waitForNavigation(),
            page.click(
              `[data-connection="${saved.id}"] form.create button[type=submit]`,
            ),
          ]);
          assertMatch(await page.content(), /Saved to connections.json/);
          // A blocked connection is not the client's to name (-33007, 403).
          const refused = await client.callTool({
            name: "execute_query",
            arguments: { connection_id: saved.id, query: "SELECT 1" },
          }).then(() => null, (error: unknown) => error);
          assertEquals(wireCode(refused), -33007);
          const file = JSON.parse(
            await Deno.readTextFile(`${server.home}/connections.json`),
          );
          assertEquals(file.connections[0].externalAccess, "blocked");
        },
      );

      await t.step("refusals: Host, Origin, CSRF, no cookie", async () => {
        const cookies = await chromium.browser.cookies();
        const cookie = cookies.find((c) =>
          c.name === `dbport_console_${port}`
        )!;
        const csrf = await page.$eval(
          "input[name=csrf]",
          (node) => (node as unknown as { value: string }).value,
        );
        const jar = `Cookie: ${cookie.name}=${cookie.value}`;
        const form =
          `csrf=${csrf}&externalAccess=readWrite&aiPolicy=alwaysAllow&safeMode=alert`;
        const post = (headers: string, body = form) =>
          raw(
            port,
            `POST ${prefix}/connections/${saved.id} HTTP/1.1\r\n${headers}\r\nContent-Type: application/x-www-form-urlencoded`,
            body,
          );
        const own = `Host: 127.0.0.1:${port}`;
        // DNS rebinding: another name for 127.0.0.1.
        const rebound = await raw(
          port,
          `GET ${prefix}/ HTTP/1.1\r\nHost: evil.example:${port}\r\n${jar}`,
        );
        assertEquals(rebound.status, 403);
        assert(!rebound.text.includes("Shop"));
        const otherPort = await raw(
          port,
          `GET ${prefix}/ HTTP/1.1\r\nHost: 127.0.0.1:1\r\n${jar}`,
        );
        assertEquals(otherPort.status, 403);
        assertEquals(
          (await raw(port, `GET ${prefix}/connections HTTP/1.1\r\n${own}`))
            .status,
          403,
        );
        assertEquals(
          (await raw(
            port,
            `GET ${prefix}/connections HTTP/1.1\r\n${own}\r\n${jar}`,
          )).status,
          200,
        );
        // The cookie replayed without the prefix (or around it): a bare 404.
        for (
          const path of [
            "/connections",
            `${prefix}x/connections`,
            `${prefix}/../connections`,
            `/c/x/..${prefix.slice(2)}x/`,
          ]
        ) {
          const stray = await raw(
            port,
            `GET ${path} HTTP/1.1\r\n${own}\r\n${jar}`,
          );
          assertEquals(stray.status, 404, path);
          assert(!stray.text.includes("Shop"));
        }
        assertEquals((await post(`${own}\r\n${jar}`)).status, 403, "no Origin");
        assertEquals(
          (await post(`${own}\r\n${jar}\r\nOrigin: http://evil.example`))
            .status,
          403,
          "another Origin",
        );
        const origin = `Origin: http://127.0.0.1:${port}`;
        assertEquals(
          (await post(
            `${own}\r\n${jar}\r\n${origin}`,
            form.replace(csrf, "f".repeat(64)),
          )).status,
          403,
          "a wrong CSRF token",
        );
        assertEquals(
          (await post(
            `${own}\r\n${jar}\r\n${origin}`,
            form.replace(`csrf=${csrf}&`, ""),
          )).status,
          403,
          "no CSRF token",
        );
        assertEquals(
          (await post(`${own}\r\n${origin}`)).status,
          403,
          "no cookie",
        );
        // Still blocked: none of the refused posts changed it.
        assertEquals(
          server.server.connections.byId(saved.id)?.externalAccess,
          "blocked",
        );
        const accepted = await post(`${own}\r\n${jar}\r\n${origin}`);
        assertEquals(accepted.status, 303);
        assertEquals(
          server.server.connections.byId(saved.id)?.externalAccess,
          "readWrite",
        );
        const headers = (await raw(
          port,
          `GET ${prefix}/ HTTP/1.1\r\n${own}\r\n${jar}`,
        )).text.toLowerCase();
        assertMatch(
          headers,
          /content-security-policy: default-src 'none'; script-src 'self'/,
        );
        assertMatch(headers, /cache-control: no-store/);
        assertEquals(
          cspErrors,
          [],
          "the page's own script and style are allowed",
        );
      });
    } finally {
      await client.close();
    }
  },
});

Deno.test({
  name:
    "the console opens itself in the browser when an approval waits and no page is open",
  ignore: needs("postgres").ignore,
  async fn() {
    await using fixture = await openFixture("postgres");
    const saved = savedConnection(fixture, "Shop", {
      externalAccess: "readWrite",
      safeMode: "alert",
    });
    const opened: string[] = [];
    await using server = await serverWith([saved], {
      hostDialog: "console",
      approvalTimeoutSeconds: 1,
    }, {
      openBrowser: (url) => {
        opened.push(url);
        return Promise.resolve(true);
      },
    });
    const writer = await server.mint("readWrite");
    const client = await sdkClient(server.url, writer.plaintext);
    try {
      for (const name of ["One", "Two"]) {
        const result = await client.callTool({
          name: "execute_query",
          arguments: {
            connection_id: saved.id,
            query:
              `INSERT INTO ${fixture.schema}.authors (name) VALUES ('${name}')`,
          },
        });
        assertMatch(textOf(result), /^user_cancelled:/);
        // The console's address (its prefix) never reaches a client, which
        // could send the user's browser to that path on another port.
        assert(
          !textOf(result).includes(server.server.console!.path),
          textOf(result),
        );
      }
      // Opened once, with the key; the second wait only names the address.
      assertEquals(opened, [server.server.console!.keyUrl]);
    } finally {
      await client.close();
    }
  },
});
