/**
 * The console's Connections page in a real headless Chromium: add a
 * connection (the engine read from its URL, the password never shown back),
 * see a failing one refused with its error and fix, then saved anyway and
 * shown in red with its error and time; Test (the version), edit, Harden
 * (the statements, then applied) and remove it, dropping its AI login on
 * the server; usable at 390 px; no CSP violation; each new route keeps the
 * key/cookie/CSRF/Host rules.
 */

import postgres from "postgres";
import { assert, assertEquals, assertMatch } from "@std/assert";
import {
  loadConnections as load,
  type SavedConnection,
} from "../../lib/app/connections.ts";

/** The saved connections (an unreadable file fails the test). */
async function loadConnections(
  path: string,
): Promise<{ ok: true; connections: SavedConnection[] }> {
  const loaded = await load(path);
  if (!loaded.ok) throw new Error(loaded.message);
  return loaded;
}
import { serverWith } from "../_connections.ts";
import { needs, openPostgresDatabase, POSTGRES_URL } from "../_db.ts";
import { needsChromium, startBrowser } from "../_browser.ts";
import {
  assertGuarded,
  openConsole,
  overflowsAt390,
  screenshots,
} from "../_console.ts";

const ignore = needsChromium().ignore || needs("postgres").ignore;
const SECRET = "s3cret-pw-never-shown";

Deno.test({
  name:
    "the Connections page: add (engine inferred, password never echoed), a failing one in red, test, edit, harden, remove dropping the AI login",
  ignore,
  sanitizeOps: false,
  sanitizeResources: false,
  async fn() {
    const fixture = await openPostgresDatabase();
    let user = "";
    try {
      await using server = await serverWith([], {}, {
        openBrowser: () => Promise.resolve(false),
      });
      const file = `${server.home}/connections.json`;
      await using chromium = await startBrowser();
      const t = await openConsole(chromium.browser, server.server.console!);
      const { page } = t;
      await page.goto(`${t.base}connections`);

      // A connection that does not connect: refused, its fix said, the
      // password not shown back.
      await page.click("#add summary");
      await page.type("#add input[name=name]", "Broken");
      await page.type(
        "#add input[name=url]",
        "postgres://postgres@127.0.0.1:1/nowhere",
      );
      await page.type("#add input[name=password]", SECRET);
      await Promise.all([page.waitForNavigation(), page.click("#add-save")]);
      assertMatch(
        await page.$eval("#add-error", (n) => n.textContent!),
        /Not saved: it does not connect\. Fix: is the PostgreSQL server running at 127\.0\.0\.1:1/,
      );
      assertMatch(
        await page.$eval("#test-report", (n) => n.textContent!),
        /cannot connect to postgres@127\.0\.0\.1:1\/nowhere: .*ECONNREFUSED/,
      );
      assert(!(await page.content()).includes(SECRET), "the password echoed");
      assertEquals(
        await page.$eval(
          "#add input[name=name]",
          (n) => (n as unknown as { value: string }).value,
        ),
        "Broken",
      );
      assertEquals(
        (await loadConnections(file)).connections.length,
        0,
      );
      // Saved anyway: it is listed with its error, in red, with the time.
      await page.type("#add input[name=password]", SECRET);
      await page.click("#add input[name=save-anyway]");
      await Promise.all([page.waitForNavigation(), page.click("#add-save")]);
      const broken = (await loadConnections(file)).connections[0]!;
      assertEquals(broken.engine, "postgres");
      assertEquals(broken.password, SECRET);
      const brokenRow = `[data-connection="${broken.id}"]`;
      const state = await page.$eval(
        `${brokenRow} .state`,
        (n) => [n.className, n.textContent!],
      );
      assertMatch(state[0]!, /outcome-error/);
      assertMatch(
        state[1]!,
        /^error: .*ECONNREFUSED.* \(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d/,
      );
      assert(!(await page.content()).includes(SECRET), "the password echoed");

      // A working one: the engine read from its URL, tested before saving.
      await page.click("#add summary");
      await page.type("#add input[name=name]", "Warehouse");
      await page.type("#add input[name=url]", fixture.url);
      await Promise.all([page.waitForNavigation(), page.click("#add-save")]);
      assertEquals(
        await page.$eval("#notice", (n) => n.textContent),
        'Saved "Warehouse".',
      );
      assertMatch(
        await page.$eval("#test-version", (n) => n.textContent!),
        /Server version: PostgreSQL \d+/,
      );
      const saved = (await loadConnections(file)).connections.find((c) =>
        c.name === "Warehouse"
      )!;
      assertEquals(saved.engine, "postgres");
      const row = `[data-connection="${saved.id}"]`;
      await screenshots(page, "console-connections");
      assert(
        await overflowsAt390(page) <= 1,
        "the Connections page scrolls sideways at 390 px",
      );

      // Test: each step and the version.
      await Promise.all([
        page.waitForNavigation(),
        page.click(`${row} button.test`),
      ]);
      assertEquals(
        await page.$eval("#test-outcome", (n) => n.textContent),
        "connected",
      );
      assertMatch(
        await page.$eval("#test-report ol", (n) => n.textContent!),
        /"Warehouse": connected to postgres@127\.0\.0\.1:5432\/dbp_db_/,
      );

      // Edit: a new name, kept in the file.
      await Promise.all([
        page.waitForNavigation(),
        page.click(`${row} a.edit`),
      ]);
      await page.$eval(
        "input[name=name]",
        (n) => (n as unknown as { value: string }).value = "Stock",
      );
      await Promise.all([page.waitForNavigation(), page.click("#edit-save")]);
      const edited = await loadConnections(file);
      assert(edited.ok);
      assertEquals(
        edited.connections.find((c) => c.id === saved.id)?.name,
        "Stock",
      );

      // Harden: the statements first, then applied.
      await Promise.all([
        page.waitForNavigation(),
        page.click(`${row} button.harden`),
      ]);
      assertMatch(
        await page.$eval("#harden-statements", (n) => n.textContent!),
        /CREATE ROLE "dbport_ai_/,
      );
      await screenshots(page, "console-connections-harden");
      await Promise.all([
        page.waitForNavigation(),
        page.click("#harden-apply"),
      ]);
      const hardened = await loadConnections(file);
      assert(hardened.ok);
      user = hardened.connections.find((c) => c.id === saved.id)?.aiLogin
        ?.user ?? "";
      assertMatch(user, /^dbport_ai_/);

      // The Query page reads as the saved login, not the AI login; the
      // row's Query link opens it on this connection.
      await page.goto(`${t.base}connections`);
      await Promise.all([
        page.waitForNavigation(),
        page.click(`${row} a.query`),
      ]);
      assertEquals(
        await page.$eval(
          "#query-connection",
          (n) => (n as unknown as { value: string }).value,
        ),
        saved.id,
      );
      await page.type("#query-sql", "select current_user as who");
      await Promise.all([page.waitForNavigation(), page.click("#query-run")]);
      assertEquals(
        await page.$eval("#query-grid tbody td", (n) => n.textContent),
        "postgres",
      );
      await page.goto(`${t.base}connections`);

      // Remove, dropping the AI login on the server.
      await Promise.all([
        page.waitForNavigation(),
        page.click(`${row} button.remove`),
      ]);
      assertEquals(
        await page.$eval(
          "#drop-ai-login",
          (n) => (n as unknown as { checked: boolean }).checked,
        ),
        true,
      );
      await screenshots(page, "console-connections-remove");
      await Promise.all([
        page.waitForNavigation(),
        page.click("#remove-apply"),
      ]);
      assertMatch(
        await page.$eval("#notice", (n) => n.textContent!),
        /Removed, and its AI login dropped/,
      );
      const after = await loadConnections(file);
      assert(after.ok);
      assertEquals(after.connections.map((c) => c.name), ["Broken"]);
      const sql = postgres(POSTGRES_URL, { max: 1, onnotice: () => {} });
      try {
        const roles = await sql`select 1 from pg_roles where rolname = ${user}`;
        assertEquals(roles.length, 0, "the AI login is still on the server");
        user = "";
      } finally {
        await sql.end();
      }
      assertEquals(t.problems, []);

      const id = broken.id;
      await assertGuarded(t, "POST", "/connections/add", {
        name: "X",
        url: "/tmp/x.db",
      });
      await assertGuarded(t, "POST", `/connections/${id}/test`);
      await assertGuarded(t, "GET", `/connections/${id}/edit`);
      await assertGuarded(t, "POST", `/connections/${id}/edit`, { name: "Y" });
      await assertGuarded(t, "POST", `/connections/${id}/remove`);
      await assertGuarded(t, "POST", `/connections/${id}/remove/apply`);
      const still = await loadConnections(file);
      assert(still.ok);
      assertEquals(still.connections.map((c) => c.name), ["Broken"]);
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
