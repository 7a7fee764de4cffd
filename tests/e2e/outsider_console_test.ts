/**
 * An outsider's attack on the console's workbench pages (issue 39): a
 * malicious database value or name, client name, token name or connection
 * name must stay text on every page (no element of its own, no script, no
 * CSP violation); the confirmation of a write cannot be swapped for another
 * statement or replayed; the CSV export disarms formulas in cells and column
 * names and names its file itself; cross-site requests without the CSRF
 * token, with a foreign Origin or Host, and GET variants of POST routes are
 * refused. Table-driven: each row is an attack that must be held.
 */

import { assert, assertEquals, assertMatch } from "@std/assert";
import type { ActivityEntry } from "../../lib/app/activity_log.ts";
import { savedConnection, serverWith } from "../_connections.ts";
import { needs, openFixture } from "../_db.ts";
import { needsChromium, startBrowser } from "../_browser.ts";
import { openConsole, rawStatus, send } from "../_console.ts";
import { sdkClient } from "../_sdk.ts";

const ignore = needsChromium().ignore || needs("postgres").ignore;

/** Markup that, if it became HTML, leaves an element marked `data-pwn`. */
const MARK = `<b data-pwn>m</b>`;
const PAYLOAD =
  `${MARK}</textarea></script></title><svg><foreignObject>${MARK}</foreignObject></svg>"'><img data-pwn src=x>`;

Deno.test({
  name:
    "outsider: malicious names and values, stored and reflected, stay text on every console page; no page can be framed",
  ignore,
  sanitizeOps: false,
  sanitizeResources: false,
  async fn(t) {
    await using fixture = await openFixture("postgres");
    const s = fixture.schema;
    // Identifiers are at most 63 bytes in PostgreSQL: short markup there.
    const evilTable = `${MARK}"'<img data-pwn src=x>`;
    const evilColumn = `</textarea>${MARK}`;
    await fixture.admin(
      `create type ${s}."${MARK}" as enum ('${MARK}<img data-pwn src=x>', 'javascript:alert(1)')`,
    );
    await fixture.admin(
      `create table ${s}."${
        evilTable.replaceAll('"', '""')
      }" (id int primary key, "${evilColumn}" text default '${
        PAYLOAD.replaceAll("'", "''")
      }', mood ${s}."${MARK}", parent int references ${s}.books(id))`,
    );
    await fixture.admin(
      `comment on table ${s}."${evilTable.replaceAll('"', '""')}" is '${
        PAYLOAD.replaceAll("'", "''")
      }'`,
    );
    await fixture.admin(
      `comment on column ${s}."${
        evilTable.replaceAll('"', '""')
      }"."${evilColumn}" is '${PAYLOAD.replaceAll("'", "''")}'`,
    );
    await fixture.admin(
      `insert into ${s}."${evilTable.replaceAll('"', '""')}" values (1, '${
        PAYLOAD.replaceAll("'", "''")
      }', 'javascript:alert(1)', null)`,
    );
    const saved = savedConnection(fixture, `Shop ${PAYLOAD}`);
    await using server = await serverWith([saved], {}, {
      openBrowser: () => Promise.resolve(false),
    });
    const now = Date.now();
    const row: ActivityEntry = {
      time: now - 60_000,
      principalKind: "token",
      tokenId: null,
      tokenName: `token ${PAYLOAD}`,
      clientName: `client ${PAYLOAD}`,
      clientVersion: PAYLOAD,
      method: "tools/call",
      target: `execute_query${MARK}`,
      connectionId: saved.id,
      outcome: "denied",
      errorCode: null,
      durationMs: 12,
      sqlDigest: null,
      traceparent: null,
      tracestate: null,
      baggage: null,
      detail: PAYLOAD,
    };
    server.server.activity.record(row);
    server.server.activity.record({ ...row, outcome: "error" });
    await server.mint("readOnly", { name: `tok ${PAYLOAD}` });

    await using chromium = await startBrowser();
    const c = await openConsole(chromium.browser, server.server.console!);
    const { page } = c;
    let dialogs = 0;
    page.on("dialog", async (dialog) => {
      dialogs++;
      await dialog.dismiss();
    });
    const injected = () =>
      page.evaluate(
        `document.querySelectorAll('[data-pwn]').length`,
      ) as Promise<
        number
      >;
    const held = async (what: string) => {
      assertEquals(await injected(), 0, `${what}: markup became HTML`);
      assertEquals(dialogs, 0, `${what}: a dialog opened`);
      assertEquals(c.problems, [], `${what}: console problems`);
      const bad = await page.evaluate(`[...document.querySelectorAll('a[href]')]
        .map((a) => a.getAttribute('href')).filter((h) => !/^(\\/|#|\\?)/.test(h))`);
      assertEquals(bad, [], `${what}: a link outside the console`);
    };

    await t.step("stored XSS: every page shows the names as text", async () => {
      const table = encodeURIComponent(evilTable);
      for (
        const path of [
          "",
          "activity",
          "history",
          "connections",
          "tokens",
          `query?connection=${saved.id}`,
          `schema?connection=${saved.id}`,
          `schema?connection=${saved.id}&schema=${s}`,
          `schema/table?connection=${saved.id}&schema=${s}&table=${table}`,
          `connections/${saved.id}/edit`,
        ]
      ) {
        await page.goto(`${c.base}${path}`);
        await held(path || "overview");
      }
      // The Overview (by client, by connection) and Activity drew the
      // names: as text.
      for (const path of ["", "activity"]) {
        await page.goto(`${c.base}${path}`);
        const shown = await page.evaluate(`document.body.innerText`) as string;
        assert(shown.includes(`client ${MARK}`), `${path}: the client name`);
        assert(shown.includes(`Shop ${MARK}`), `${path}: the connection name`);
      }
      // The table page shows the column name as text.
      await page.goto(
        `${c.base}schema/table?connection=${saved.id}&schema=${s}&table=${table}`,
      );
      const text = await page.evaluate(`document.body.innerText`) as string;
      assert(text.includes(evilColumn), "the column name shown as text");
    });

    await t.step(
      "the Query grid shows values and column names as text",
      async () => {
        await page.goto(`${c.base}query?connection=${saved.id}`);
        await page.type(
          "#query-sql",
          `select *, '${
            PAYLOAD.replaceAll("'", "''")
          }' as "${evilColumn}x" from ${s}."${
            evilTable.replaceAll('"', '""')
          }"`,
        );
        await Promise.all([page.waitForNavigation(), page.click("#query-run")]);
        await held("query grid");
        const text = await page.evaluate(`document.body.innerText`) as string;
        assert(text.includes("<img data-pwn src=x>"), text.slice(0, 500));
        // The owner's statement, markup and all, is text in History too.
        await page.goto(`${c.base}history`);
        await held("history with the owner's statement");
        assert(
          (await page.evaluate(`document.body.innerText`) as string).includes(
            evilColumn,
          ),
        );
      },
    );

    await t.step(
      "reflected: query parameters never become markup",
      async () => {
        const p = encodeURIComponent(PAYLOAD);
        for (
          const path of [
            `?notice=${p}`,
            `activity?client=${p}&connection=${p}&outcome=${p}&before=${p}`,
            `history?q=${p}&connection=${p}&before=${p}`,
            `query?connection=${p}`,
            `schema?connection=${saved.id}&schema=${p}&q=${p}&after=${p}&after_schema=${p}`,
            `schema/table?connection=${saved.id}&schema=${s}&table=${p}`,
          ]
        ) {
          const answer = await page.goto(`${c.base}${path}`);
          // Clickjacking: no page may be framed.
          const headers = answer!.headers();
          assertMatch(
            headers["content-security-policy"]!,
            /frame-ancestors 'none'/,
          );
          assertEquals(headers["x-frame-options"], "DENY");
          await held(path);
        }
        c.problems.length = 0;
      },
    );
  },
});

/** The `plan` a write's preview keeps, read from the page. */
function planOf(html: string): string {
  const plan = html.match(/name="plan" value="([^"]+)"/)?.[1];
  assert(plan !== undefined, `no plan in: ${html.slice(-1500)}`);
  return plan;
}

Deno.test({
  name:
    "outsider: raw HTTP against the Query, export and connection routes (swap, replay, another session, TOCTOU, volatile functions, CSV, GET variants, forged Origin/Host, URL passwords)",
  ignore,
  sanitizeOps: false,
  sanitizeResources: false,
  async fn(t) {
    await using fixture = await openFixture("postgres");
    const s = fixture.schema;
    await fixture.admin(`create table ${s}.trail (x text)`);
    await fixture.admin(`create sequence ${s}.seq`);
    await fixture.admin(
      `create function ${s}.sneak() returns int volatile language sql as $$ insert into ${s}.trail values ('sneak') returning 1 $$`,
    );
    // PostgreSQL here trusts every password: the URL's is a marker only.
    const secretUrl = new URL(fixture.url);
    secretUrl.password = "HUNTER2secret";
    const saved = savedConnection(fixture, "Shop");
    const keyed = savedConnection(
      { engine: "postgres", url: secretUrl.toString() },
      "Keyed",
    );
    await using server = await serverWith([saved, keyed], {}, {
      openBrowser: () => Promise.resolve(false),
    });
    await using chromium = await startBrowser();
    const c = await openConsole(chromium.browser, server.server.console!);
    const own = { cookie: c.cookie, origin: c.origin };
    const post = (path: string, form: Record<string, string>) =>
      send(`${c.base}${path}`, "POST", own, { ...form, csrf: c.csrf });
    const trail = async () =>
      (await fixture.admin(`select x from ${s}.trail order by x`)).map((r) =>
        (r as { x: string }).x
      );
    const errorOf = (html: string) =>
      html.match(/id="query-error"[^>]*>([^<]*)/)?.[1] ?? null;

    await t.step(
      "Confirm runs the statement previewed, once, in this session, as previewed",
      async () => {
        const shown = await post("query", {
          connection: saved.id,
          sql: `insert into ${s}.trail values ('shown')`,
        });
        const plan = planOf(shown.text);
        // Another statement posted with the plan is not what runs.
        const swapped = await post("query/confirm", {
          plan,
          connection: saved.id,
          sql: `insert into ${s}.trail values ('swapped')`,
        });
        assertEquals(swapped.status, 200);
        assertEquals(await trail(), ["shown"]);
        assertEquals((await post("query/confirm", { plan })).status, 409);
        assertEquals(await trail(), ["shown"]);
        // A plan of this session is not another session's (a second tab
        // keeps the cookie, so this is another browser).
        const second = await openConsole(
          chromium.browser,
          server.server.console!,
        );
        const next = planOf(
          (await post("query", {
            connection: saved.id,
            sql: `delete from ${s}.trail where x like 's%'`,
          })).text,
        );
        const other = await send(`${c.base}query/confirm`, "POST", {
          cookie: second.cookie,
          origin: c.origin,
        }, { plan: next, csrf: second.csrf });
        assertEquals(other.status, 409);
        // Between preview and Confirm the rows change: nothing is written.
        await fixture.admin(`insert into ${s}.trail values ('s-late')`);
        const late = await post("query/confirm", { plan: next });
        assertMatch(errorOf(late.text) ?? "", /nothing was written/);
        assertEquals(await trail(), ["s-late", "shown"]);
        // Safe Mode turned to readOnly after the preview: Confirm runs nothing.
        const locked = planOf(
          (await post("query", {
            connection: saved.id,
            sql: `insert into ${s}.trail values ('after-lock')`,
          })).text,
        );
        const lock = await post(`connections/${saved.id}`, {
          externalAccess: saved.externalAccess,
          aiPolicy: saved.aiPolicy,
          safeMode: "readOnly",
        });
        assertEquals(lock.status, 303);
        const refused = await post("query/confirm", { plan: locked });
        assertMatch(errorOf(refused.text) ?? "", /readOnly/);
        assertEquals(await trail(), ["s-late", "shown"]);
        await post(`connections/${saved.id}`, {
          externalAccess: saved.externalAccess,
          aiPolicy: saved.aiPolicy,
          safeMode: saved.safeMode,
        });
        // A write never runs without the preview step.
        await post("query/confirm", {
          connection: saved.id,
          sql: `insert into ${s}.trail values ('bare')`,
        });
        assertEquals(await trail(), ["s-late", "shown"]);
      },
    );

    await t.step(
      "reads that write (volatile functions, sequences, locks) ask first; export refuses them",
      async () => {
        for (
          const sql of [
            `select ${s}.sneak()`,
            `select nextval('${s}.seq')`,
            `select setval('${s}.seq', 100)`,
            `select set_config('search_path', 'x', false)`,
            `select pg_advisory_lock(4242)`,
            `with x as (insert into ${s}.trail values ('cte') returning 1) select * from x`,
            `select * from ${s}.trail for update`,
          ]
        ) {
          const answer = await post("query", { connection: saved.id, sql });
          assertMatch(answer.text, /name="plan"/, `${sql} asks for Confirm`);
          const exported = await post("query/export", {
            connection: saved.id,
            sql,
          });
          assertMatch(
            errorOf(exported.text) ?? "",
            /runs reads only/,
            `${sql} is no export`,
          );
        }
        // What runs at once runs in a read-only transaction.
        const ro = await post("query", {
          connection: saved.id,
          sql: "select current_setting('transaction_read_only') as ro",
        });
        assertMatch(ro.text, /<code>on<\/code>|>on</);
        assertEquals(await trail(), ["s-late", "shown"]);
        assertEquals(
          await fixture.admin(`select last_value, is_called from ${s}.seq`),
          [{ last_value: "1", is_called: false }],
        );
      },
    );

    await t.step(
      "CSV export: formulas disarmed in cells and column names, the file named by the server",
      async () => {
        const answer = await fetch(`${c.base}query/export`, {
          method: "POST",
          headers: {
            ...own,
            "content-type": "application/x-www-form-urlencoded",
          },
          body: new URLSearchParams({
            csrf: c.csrf,
            connection: saved.id,
            sql:
              `select '=cmd|'' /C calc''!A0' as "=HYPERLINK(""http://x"")", '@SUM(1)' as "../../b", E'\\t=1' as "+c", '-2+3' as d, '-12.5' as e`,
          }),
        });
        assertMatch(
          answer.headers.get("content-disposition")!,
          /^attachment; filename="dbport-query-\d{8}T\d{6}Z\.csv"$/,
        );
        assertEquals(
          await answer.text(),
          `"'=HYPERLINK(""http://x"")",../../b,'+c,d,e\r\n'=cmd|' /C calc'!A0,'@SUM(1),'\t=1,'-2+3,-12.5\r\n`,
        );
      },
    );

    await t.step("GET variants of POST routes change nothing", async () => {
      for (
        const path of [
          "query/confirm",
          "query/export",
          "query/open",
          "query/cancel",
          "connections/add",
          `connections/${saved.id}/test`,
          `connections/${saved.id}/remove`,
          `connections/${saved.id}/remove/apply`,
          `connections/${saved.id}/harden`,
          `connections/${saved.id}/harden/apply`,
          `tokens/x/revoke`,
          `tokens/x/budget`,
          `tokens/x/pause`,
          `tokens/x/resume`,
          `approvals/x`,
        ]
      ) {
        const answer = await send(`${c.base}${path}`, "GET", own);
        assertEquals(answer.status, 404, `GET ${path}`);
      }
      // SQL in a URL is never read.
      const page = await send(
        `${c.base}query?connection=${saved.id}&sql=drop%20table%20x`,
        "GET",
        own,
      );
      assert(!page.text.includes("drop table"));
    });

    await t.step("cross-site and rebinding requests are refused", async () => {
      const form = {
        connection: saved.id,
        sql: `insert into ${s}.trail values ('csrf')`,
      };
      const cases: [
        string,
        Record<string, string>,
        Record<string, string> | string,
        number,
      ][] = [
        ["no CSRF token", own, form, 403],
        [
          "another session's token",
          own,
          { ...form, csrf: "f".repeat(64) },
          403,
        ],
        ["foreign Origin", { ...own, origin: "http://evil.example" }, {
          ...form,
          csrf: c.csrf,
        }, 403],
        ["Origin null (sandboxed frame)", { ...own, origin: "null" }, {
          ...form,
          csrf: c.csrf,
        }, 403],
        ["same host, other port", { ...own, origin: "http://127.0.0.1:1" }, {
          ...form,
          csrf: c.csrf,
        }, 403],
        ["no Origin", { cookie: c.cookie }, { ...form, csrf: c.csrf }, 403],
        ["no cookie", { origin: c.origin }, { ...form, csrf: c.csrf }, 403],
      ];
      for (const [what, headers, body] of cases) {
        for (
          const path of [
            "query",
            "query/confirm",
            "query/export",
            "query/open",
            "connections/add",
            `connections/${saved.id}/remove/apply`,
            "tokens/x/budget",
          ]
        ) {
          const answer = await send(
            `${c.base}${path}`,
            "POST",
            headers,
            body as Record<string, string>,
          );
          assertEquals(answer.status, 403, `${what}: POST ${path}`);
        }
      }
      // A cross-site form can only be text/plain or multipart without CORS.
      const plain = await fetch(`${c.base}query`, {
        method: "POST",
        headers: { ...own, "content-type": "text/plain" },
        body: `csrf=${c.csrf}&connection=${saved.id}&sql=select 1`,
      });
      assertEquals(plain.status, 415);
      await plain.body?.cancel();
      const path = new URL(c.base).pathname;
      for (
        const host of [
          `evil.example:${c.port}`,
          `127.0.0.1.nip.io:${c.port}`,
          `localhost.:${c.port}`,
          `127.0.0.1`,
          `[::1]:${c.port}`,
          `0.0.0.0:${c.port}`,
          `127.0.0.1:${c.port}@evil.example`,
        ]
      ) {
        const status = await rawStatus(
          c.port,
          `GET ${path}connections HTTP/1.1\r\nHost: ${host}\r\nCookie: ${c.cookie}`,
        );
        // 400: the HTTP server itself refuses a Host that is no host.
        assert(status === 403 || status === 400, `Host ${host}: ${status}`);
      }
      assertEquals(await trail(), ["s-late", "shown"]);
    });

    await t.step(
      'an AI client calling itself "dbport console" is not "you" in History',
      async () => {
        const token = await server.mint("readOnly", { name: "ai" });
        const client = await sdkClient(server.url, token.plaintext, {
          name: "dbport console",
        });
        try {
          await client.callTool({
            name: "execute_query",
            arguments: {
              connection_id: saved.id,
              query: "select 'impostor' as who",
            },
          });
        } finally {
          await client.close();
        }
        await server.server.history.flush();
        await post("query", {
          connection: saved.id,
          sql: "select 'mine' as who",
        });
        const history = await send(`${c.base}history`, "GET", own);
        const rowOf = (marker: string) =>
          history.text.split("<tr data-history=").find((row) =>
            row.includes(marker)
          ) ?? "";
        assertMatch(rowOf("mine"), /you \(console\)/);
        // A direction override in a statement is shown, as approvals show it.
        await post("query", {
          connection: saved.id,
          sql: "select 'bidi\u202Ecba' as w",
        });
        const audited = await send(`${c.base}history`, "GET", own);
        const bidi = audited.text.split("<tr data-history=").find((row) =>
          row.includes("bidi")
        ) ?? "";
        assert(bidi.includes("\\u202e"), bidi);
        assert(!bidi.includes("\u202E"));
        assert(
          !rowOf("impostor").includes("you (console)"),
          "an AI client's statement is shown as the owner's",
        );
      },
    );

    await t.step(
      "no password of a URL in the Edit page; kept when saved back",
      async () => {
        const edit = await send(
          `${c.base}connections/${keyed.id}/edit`,
          "GET",
          own,
        );
        assertEquals(edit.status, 200);
        assert(
          !edit.text.includes("HUNTER2secret"),
          `the Edit page shows the URL's password: ${
            edit.text.match(/name="url"[^>]*/)?.[0]
          }`,
        );
        const shownUrl = edit.text.match(/name="url" value="([^"]*)"/)![1]!
          .replaceAll("&amp;", "&");
        const saving = await post(`connections/${keyed.id}/edit`, {
          name: "Keyed again",
          url: shownUrl,
        });
        assertEquals(saving.status, 303);
        const after = await send(`${c.base}connections`, "GET", own);
        assert(after.text.includes("Keyed again"));
        const stored = server.server.connections.byId(keyed.id)!;
        assertEquals(stored.url, secretUrl.toString());
        // A refused edit shows the URL masked too.
        const refused = await post(`connections/${keyed.id}/edit`, {
          name: "Shop",
          url: shownUrl,
        });
        assert(!refused.text.includes("HUNTER2secret"));
        assertMatch(refused.text, /already exists/);
        // The saved password does not follow the connection to another
        // host: the edit is refused until it is typed again.
        const elsewhere = shownUrl.replace("127.0.0.1", "localhost");
        assert(elsewhere !== shownUrl, shownUrl);
        const moved = await post(`connections/${keyed.id}/edit`, {
          name: "Keyed again",
          url: elsewhere,
        });
        assertEquals(moved.status, 200);
        assertMatch(moved.text, /stays with/);
        assert(!moved.text.includes("HUNTER2secret"));
        assertEquals(
          server.server.connections.byId(keyed.id)!.url,
          secretUrl.toString(),
        );
        // The Add form never echoes its password field.
        const add = await post("connections/add", {
          name: "Leaky",
          url: "postgres://postgres@127.0.0.1:1/test",
          password: "FIELDsecret",
        });
        assert(!add.text.includes("FIELDsecret"));
      },
    );
  },
});

Deno.test({
  name:
    "outsider: a write swapped in under the user's click or key is not approved until it has been on screen",
  ignore,
  sanitizeOps: false,
  sanitizeResources: false,
  async fn() {
    await using fixture = await openFixture("postgres");
    const s = fixture.schema;
    const saved = savedConnection(fixture, "Shop", {
      externalAccess: "readWrite",
      safeMode: "alert",
    });
    await using server = await serverWith([saved], {
      hostDialog: "console",
      approvalTimeoutSeconds: 60,
    }, { openBrowser: () => Promise.resolve(false) });
    await using chromium = await startBrowser();
    const c = await openConsole(chromium.browser, server.server.console!);
    const { page } = c;
    await page.goto(c.base);
    // The user's click and "a" land the moment a card appears: in the
    // page, from the observer that sees it inserted.
    await page.evaluate(`(() => {
      window.__tries = 0;
      new MutationObserver(() => {
        const card = document.querySelector("[data-approval]");
        if (!card || window.__tries) return;
        window.__tries = 1;
        card.querySelector("button.approve").click();
        document.body.dispatchEvent(new KeyboardEvent("keydown", { key: "a", bubbles: true }));
      }).observe(document.body, { childList: true, subtree: true });
    })()`);
    const writer = await server.mint("readWrite", { name: "editor" });
    const client = await sdkClient(server.url, writer.plaintext, {
      name: "Swapper",
    });
    try {
      const call = client.callTool({
        name: "execute_query",
        arguments: {
          connection_id: saved.id,
          query: `insert into ${s}.authors (name) values ('Swapped')`,
        },
      });
      call.catch(() => {}); // awaited below; a failed assertion leaves it
      await page.waitForSelector("[data-approval]", { timeout: 20_000 });
      await page.waitForFunction("window.__tries === 1");
      await new Promise((resolve) => setTimeout(resolve, 300));
      // Nothing was approved: the card still waits, the page did not move.
      assert(await page.$("[data-approval]") !== null);
      assertEquals(
        await fixture.admin(
          `select count(*)::int as n from ${s}.authors where name = 'Swapped'`,
        ),
        [{ n: 0 }],
      );
      // Once it has been on screen, Approve works.
      await page.waitForSelector("[data-approval][data-armed]");
      await Promise.all([
        page.waitForNavigation(),
        page.click("button.approve"),
      ]);
      const result = await call as { isError?: boolean };
      assertEquals(result.isError ?? false, false);
      assertEquals(c.problems, []);
    } finally {
      await client.close();
    }
  },
});
