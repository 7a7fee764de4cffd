/**
 * The console's Harden button in a real headless Chromium, on a PostgreSQL
 * database of the test's own: the first click shows the plan (the same one
 * `connections harden` prints, least privilege, no pg_read_all_data), the
 * second runs it; after it an AI read works as the new login and the
 * engine itself refuses it pg_authid. The button's forms are refused
 * without the session's CSRF token or from another Origin, and a plan
 * runs once.
 */

import type { Page } from "puppeteer-core";
import postgres from "postgres";
import { assert, assertEquals, assertMatch } from "@std/assert";
import { loadConnections } from "../../lib/app/connections.ts";
import { savedConnection, serverWith } from "../_connections.ts";
import { needs, openPostgresDatabase, POSTGRES_URL } from "../_db.ts";
import { needsChromium, screenshot, startBrowser } from "../_browser.ts";
import { sdkClient } from "../_sdk.ts";

function textOf(result: unknown): string {
  const content = (result as { content: { text: string }[] }).content;
  return content[0]?.text ?? "";
}

/** A form post with exactly these headers, over fetch (no browser). */
function post(
  url: string,
  headers: Record<string, string>,
  form: Record<string, string>,
) {
  return fetch(url, {
    method: "POST",
    redirect: "manual",
    headers: {
      "content-type": "application/x-www-form-urlencoded",
      ...headers,
    },
    body: new URLSearchParams(form).toString(),
  });
}

Deno.test({
  name:
    "the console's Harden button: shown, then applied; AI reads work as the new login and pg_authid is the engine's to refuse",
  ignore: needsChromium().ignore || needs("postgres").ignore,
  sanitizeOps: false,
  sanitizeResources: false,
  async fn() {
    const fixture = await openPostgresDatabase();
    const saved = savedConnection(fixture, "Warehouse");
    let user = "";
    try {
      await using server = await serverWith([saved], {}, {
        openBrowser: () => Promise.resolve(false),
      });
      const browserConsole = server.server.console!;
      const base = browserConsole.url;
      await using chromium = await startBrowser();
      const page: Page = await chromium.browser.newPage();
      assertEquals((await page.goto(browserConsole.keyUrl))?.status(), 200);
      await page.goto(`${base}connections`);
      const row = `[data-connection="${saved.id}"]`;
      await Promise.all([
        page.waitForNavigation(),
        page.click(`${row} button.harden`),
      ]);
      const shown = await page.$eval(
        "#harden-statements",
        (node) => node.textContent ?? "",
      );
      await screenshot(page, "console-harden");
      assert(!shown.includes("pg_read_all_data"), shown);
      assertMatch(shown, /GRANT USAGE ON SCHEMA "shop" TO "dbport_ai_/);
      assertMatch(shown, /GRANT SELECT ON ALL TABLES IN SCHEMA "shop"/);
      assertMatch(shown, /ALTER DEFAULT PRIVILEGES FOR ROLE "postgres"/);
      assertMatch(shown, /LOGIN PASSWORD '\*\*\*\*\*\*\*\*'/);
      // Nothing ran yet: the file has no AI login.
      const before = await loadConnections(`${server.home}/connections.json`);
      assert(before.ok && before.connections[0]!.aiLogin === undefined);

      // The second click, forged: no CSRF token, another Origin, GET.
      const cookie = (await chromium.browser.cookies()).find((c) =>
        c.name === `dbport_console_${browserConsole.port}`
      )!;
      const plan = await page.$eval(
        "input[name=plan]",
        (node) => (node as unknown as { value: string }).value,
      );
      const csrf = await page.$eval(
        "#harden-apply",
        (node) =>
          (node.closest("form")!.querySelector(
            "input[name=csrf]",
          ) as unknown as {
            value: string;
          }).value,
      );
      const applyUrl = `${base}connections/${saved.id}/harden/apply`;
      const own = {
        cookie: `${cookie.name}=${cookie.value}`,
        origin: `http://127.0.0.1:${browserConsole.port}`,
      };
      for (
        const [headers, form, why] of [
          [own, { plan }, "no CSRF token"],
          [own, { plan, csrf: "0".repeat(64) }, "a wrong CSRF token"],
          [{ ...own, origin: "http://127.0.0.1:1" }, { plan, csrf }, "Origin"],
          [{ origin: own.origin }, { plan, csrf }, "no cookie"],
        ] as const
      ) {
        const answer = await post(applyUrl, headers, form);
        assertEquals(answer.status, 403, why);
        await answer.body?.cancel();
      }
      const unprefixed = await post(
        `http://127.0.0.1:${browserConsole.port}/connections/${saved.id}/harden/apply`,
        own,
        { plan, csrf },
      );
      assertEquals(unprefixed.status, 404);
      await unprefixed.body?.cancel();
      // Another browser session (its own key exchange, cookie and CSRF
      // token) cannot run the plan this one was shown.
      const exchange = await fetch(browserConsole.keyUrl, {
        redirect: "manual",
      });
      await exchange.body?.cancel();
      const other = exchange.headers.get("set-cookie")!.split(";")[0]!;
      const otherPage = await (await fetch(`${base}connections`, {
        headers: { cookie: other },
      })).text();
      const otherCsrf = /name="csrf" value="([0-9a-f]{64})"/.exec(
        otherPage,
      )![1]!;
      assert(otherCsrf !== csrf);
      const stolen = await post(applyUrl, { ...own, cookie: other }, {
        plan,
        csrf: otherCsrf,
      });
      assertEquals(stolen.status, 409, "another session's plan");
      await stolen.body?.cancel();
      const still = await loadConnections(`${server.home}/connections.json`);
      assert(still.ok && still.connections[0]!.aiLogin === undefined);

      await Promise.all([
        page.waitForNavigation(),
        page.click("#harden-apply"),
      ]);
      assertMatch(await page.content(), /Hardened: every AI read/);
      assertMatch(
        await page.$eval(row, (node) => node.textContent ?? ""),
        /AI reads use a least-privilege login/,
      );
      const after = await loadConnections(`${server.home}/connections.json`);
      assert(after.ok);
      user = after.connections[0]!.aiLogin?.user ?? "";
      assertMatch(user, /^dbport_ai_/);
      // A plan runs once.
      const replay = await post(applyUrl, own, { plan, csrf });
      assertEquals(replay.status, 409);
      await replay.body?.cancel();

      const reader = await server.mint("readOnly");
      const client = await sdkClient(server.url, reader.plaintext);
      try {
        const run = async (query: string) =>
          textOf(
            await client.callTool({
              name: "execute_query",
              arguments: { connection_id: saved.id, query },
            }),
          );
        assertMatch(
          await run(
            "select current_user as u, count(*)::int as n from shop.authors",
          ),
          new RegExp(`"rows":\\[\\["${user}",2\\]\\]`),
        );
        assertMatch(
          await run("select rolname, rolpassword from pg_authid"),
          // dbport denies a credential catalog before the engine sees it;
          // ai_login_test shows the engine refuses the AI login too.
          /never lets an AI client read a credential catalog|permission denied for (table|relation) pg_authid/,
        );
      } finally {
        await client.close();
      }
    } finally {
      await fixture[Symbol.asyncDispose]();
      if (user !== "") {
        const sql = postgres(POSTGRES_URL, { max: 1, onnotice: () => {} });
        await sql.unsafe(`drop role if exists "${user}"`).finally(() =>
          sql.end()
        );
      }
    }
  },
});
