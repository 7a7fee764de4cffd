/**
 * MCP Apps (docs/apps.md) end to end: a client that declares the
 * `io.modelcontextprotocol/ui` extension sees `_meta.ui.resourceUri` on
 * execute_query, describe_table and explain_query (in tools/list and on
 * their results), a client without it sees the tools exactly as before; the
 * `ui://dbport/…` views are listed and readable by any client, small and
 * self-contained. Then a minimal MCP Apps host (tests/_apps_host.ts) renders
 * each view in headless Chromium from `resources/read`, hands it the real
 * tool result through the spec's messages, and the test reads what the view
 * drew: the grid's cells (NULL apart from the text "NULL", a long cell
 * expanded, sorting, the truncation message), a chart's bars and lines,
 * the table card with a foreign key followed through the host's
 * `tools/call`, and the plan tree. Every message between host and view is
 * checked against the JSON Schema of @modelcontextprotocol/ext-apps.
 * Screenshots land in test-artifacts/apps-*.png.
 */

import Ajv2020 from "ajv/dist/2020";
import { assert, assertEquals, assertMatch } from "@std/assert";
import type { Frame } from "puppeteer-core";
import type { JsonObject } from "../../lib/protocol/jsonrpc.ts";
import { savedConnection, serverWith } from "../_connections.ts";
import { needs, openFixture } from "../_db.ts";
import { needsChromium, screenshot, startBrowser } from "../_browser.ts";
import {
  hostLog,
  hostSend,
  hostView,
  type LoggedMessage,
} from "../_apps_host.ts";
import {
  initializeSession,
  modernRequest,
  postLegacy,
  postModern,
} from "../_server.ts";

const ignore = needsChromium().ignore || needs("postgres").ignore;

const MIME = "text/html;profile=mcp-app";
const UI_CAPABILITIES = {
  extensions: { "io.modelcontextprotocol/ui": { mimeTypes: [MIME] } },
};
const VIEWS = {
  execute_query: "ui://dbport/result-grid",
  describe_table: "ui://dbport/table-card",
  explain_query: "ui://dbport/plan-tree",
} as const;

// deno-lint-ignore no-explicit-any
const ajv = new (Ajv2020 as any)({
  strict: false,
  allErrors: true,
  validateFormats: false,
});
// The package's JSON Schema of every MCP Apps message (its types name the
// TypeScript declarations, not the JSON, hence the cast). Each definition
// is compiled on its own: some carry their own `$defs`, which their
// `#/$defs/…` references mean.
const appsSchema = (await import(
  "@modelcontextprotocol/ext-apps/schema.json",
  { with: { type: "json" } }
) as unknown as { default: { $defs: Record<string, JsonObject> } }).default;
// deno-lint-ignore no-explicit-any
const compiled = new Map<string, any>();

/** Assert `value` is a valid `definition` of the MCP Apps schema. */
function assertApps(definition: string, value: unknown): void {
  let validate = compiled.get(definition);
  if (validate === undefined) {
    const schema = appsSchema.$defs[definition];
    assert(schema !== undefined, `the ext-apps schema has no ${definition}`);
    validate = ajv.compile(schema);
    compiled.set(definition, validate);
  }
  assert(
    validate(value),
    `${definition} is invalid: ${JSON.stringify(validate.errors)}\n${
      JSON.stringify(value)
    }`,
  );
}

/** The schema definition of each message the host and view exchange. */
const DEFINITIONS: Record<string, string> = {
  "ui/initialize": "McpUiInitializeRequest",
  "ui/notifications/initialized": "McpUiInitializedNotification",
  "ui/notifications/tool-input": "McpUiToolInputNotification",
  "ui/notifications/tool-result": "McpUiToolResultNotification",
  "ui/notifications/size-changed": "McpUiSizeChangedNotification",
  "ui/message": "McpUiMessageRequest",
};

/** Check every logged message; returns the methods seen, in order. */
function checkLog(log: LoggedMessage[]): string[] {
  const methods: string[] = [];
  const initializeIds = new Set<unknown>();
  for (const { dir, msg } of log) {
    assertEquals(msg.jsonrpc, "2.0", JSON.stringify(msg));
    const { jsonrpc: _j, id, ...body } = msg;
    if (typeof msg.method === "string") {
      methods.push(`${dir} ${msg.method}`);
      if (msg.method === "ui/initialize") initializeIds.add(id);
      const definition = DEFINITIONS[msg.method];
      if (definition !== undefined) assertApps(definition, body);
    } else if (initializeIds.has(id)) {
      assertApps("McpUiInitializeResult", msg.result);
    }
  }
  return methods;
}

/** A modern request that declares (or not) the extension. */
async function rpc(
  url: string,
  method: string,
  params: JsonObject,
  ui: boolean,
): Promise<JsonObject> {
  const answer = await postModern(
    url,
    modernRequest(method, params, 1, {
      "io.modelcontextprotocol/clientCapabilities": ui ? UI_CAPABILITIES : {},
    }),
  );
  assertEquals(answer.status, 200, answer.text);
  return answer.json.result;
}

/** Texts of the nodes a selector finds in the view. */
function texts(frame: Frame, selector: string): Promise<string[]> {
  return frame.$$eval(
    selector,
    (nodes) => nodes.map((node) => node.textContent ?? ""),
  );
}

Deno.test({
  name:
    "MCP Apps: the views are declared to clients with the extension only, and render in a host in Chromium",
  ignore,
  // puppeteer keeps its own sockets and timers between steps.
  sanitizeOps: false,
  sanitizeResources: false,
  async fn(t) {
    await using fixture = await openFixture("postgres");
    const s = fixture.schema;
    await fixture.admin(
      `create table ${s}.sales (region text primary key, q1 integer, q2 numeric(10,2), note text)`,
    );
    await fixture.admin(
      `insert into ${s}.sales values
        ('North', 120, 98.50, 'steady'), ('South', 80, 130.25, null),
        ('East', 200, 150.00, '${"long note ".repeat(30)}end'),
        ('West', null, 75.75, 'NULL'), ('Central', 45, 60.00, 'new'),
        ('Islands', 10, 12.00, 'small')`,
    );
    const saved = savedConnection(fixture, "Shop");
    await using server = await serverWith([saved]);
    const url = server.url;

    const tools = new Map<string, JsonObject>();
    const views = new Map<string, string>();
    await t.step(
      "tools/list names a view only to a client that declared the extension",
      async () => {
        const plain = (await rpc(url, "tools/list", {}, false))
          .tools as JsonObject[];
        for (const tool of plain) {
          assertEquals(tool._meta, undefined, `${tool.name} without the ext`);
        }
        const withUi = (await rpc(url, "tools/list", {}, true))
          .tools as JsonObject[];
        assertEquals(withUi.length, plain.length);
        // The views add exactly their three `_meta` entries to the list.
        assertEquals(
          JSON.stringify(withUi).length - JSON.stringify(plain).length,
          168,
        );
        const byName = new Map(
          withUi.map((tool) => [tool.name as string, tool]),
        );
        for (const tool of plain) {
          const name = tool.name as keyof typeof VIEWS;
          const shown = byName.get(name)!;
          const { _meta, ...rest } = shown;
          assertEquals(rest, tool, "nothing else of the tool changes");
          if (name in VIEWS) {
            assertEquals(_meta, { ui: { resourceUri: VIEWS[name] } });
            assertApps("McpUiToolMeta", (_meta as JsonObject).ui);
          } else {
            assertEquals(_meta, undefined, `${name} has no view`);
          }
        }
        // A legacy client declares it in initialize.
        const session = await initializeSession(url, "2025-11-25");
        const legacyInit = await postLegacy(url, {
          jsonrpc: "2.0",
          id: "init",
          method: "initialize",
          params: {
            protocolVersion: "2025-11-25",
            capabilities: UI_CAPABILITIES,
            clientInfo: { name: "legacy-apps-host", version: "1.0.0" },
          },
        });
        const legacySession = legacyInit.headers.get("mcp-session-id")!;
        for (
          const [id, expectUi] of [[session, false], [
            legacySession,
            true,
          ]] as const
        ) {
          const listed = await postLegacy(url, {
            jsonrpc: "2.0",
            id: 2,
            method: "tools/list",
            params: {},
          }, { "mcp-session-id": id, "mcp-protocol-version": "2025-11-25" });
          const grid = (listed.json.result.tools as JsonObject[]).find((tool) =>
            tool.name === "execute_query"
          )!;
          assertEquals(
            grid._meta,
            expectUi ? { ui: { resourceUri: VIEWS.execute_query } } : undefined,
          );
        }
        for (const [name, tool] of byName) tools.set(name, tool);
      },
    );

    await t.step(
      "every client lists and reads the views: self-contained, strict CSP, ≤ 50 KB",
      async () => {
        const listed = (await rpc(url, "resources/list", {}, false))
          .resources as JsonObject[];
        for (const uri of Object.values(VIEWS)) {
          const item = listed.find((r) => r.uri === uri);
          assert(item !== undefined, `${uri} is listed`);
          assertEquals(item.mimeType, MIME);
          const read = await rpc(url, "resources/read", { uri }, false);
          const [content] = read.contents as JsonObject[];
          assertEquals(content!.uri, uri);
          assertEquals(content!.mimeType, MIME);
          assertApps("McpUiResourceMeta", (content!._meta as JsonObject).ui);
          const text = content!.text as string;
          const bytes = new TextEncoder().encode(text).length;
          assert(bytes <= 50 * 1024, `${uri} is ${bytes} bytes, over 50 KB`);
          assertEquals(item.size, bytes);
          assertMatch(text, /^<!DOCTYPE html>/);
          const csp = /http-equiv="Content-Security-Policy" content="([^"]+)"/
            .exec(text)?.[1] ?? "";
          assertMatch(csp, /default-src 'none'/);
          assertMatch(csp, /connect-src 'none'/);
          assert(!csp.includes("unsafe"), `no unsafe-* in ${csp}`);
          // Nothing is fetched: no URL of any network scheme anywhere.
          // (The SVG namespace is a name, never fetched.)
          const named = text.replaceAll("http://www.w3.org/2000/svg", "");
          assert(!/(https?|wss?|ftp):\/\//i.test(named), `${uri} names a URL`);
          assert(!/<(script|link|img|iframe)[^>]+(src|href)=/i.test(text));
          views.set(uri, text);
        }
      },
    );

    await using browser = await startBrowser();

    /** Call a tool with the extension declared, and host its view. */
    async function hosted(
      name: keyof typeof VIEWS,
      args: JsonObject,
      capabilities?: JsonObject,
    ) {
      const result = await rpc(
        url,
        "tools/call",
        { name, arguments: args },
        true,
      );
      assertEquals(
        (result._meta as JsonObject).ui,
        { resourceUri: VIEWS[name] },
      );
      const { resultType: _r, ...toolResult } = result;
      const hostedView = await hostView(browser.browser, {
        html: views.get(VIEWS[name])!,
        tool: tools.get(name)!,
        arguments: args,
        result: toolResult,
        call: (params) => rpc(url, "tools/call", params, true),
        ...(capabilities === undefined ? {} : { capabilities }),
      });
      return { ...hostedView, result };
    }

    await t.step(
      "a result carries the link only for the extension; its data is the same",
      async () => {
        const args = {
          connection_id: "Shop",
          query: `select region, q1 from ${s}.sales order by region`,
        };
        const plain = await rpc(
          url,
          "tools/call",
          { name: "execute_query", arguments: args },
          false,
        );
        assertEquals(Object.keys(plain._meta as JsonObject), [
          "io.modelcontextprotocol/serverInfo",
        ]);
        const withUi = await rpc(
          url,
          "tools/call",
          { name: "execute_query", arguments: args },
          true,
        );
        assertEquals(plain.isError, undefined, JSON.stringify(plain.content));
        assertEquals(withUi.isError, undefined, JSON.stringify(withUi.content));
        const data = (r: JsonObject) => {
          const sc = r.structuredContent as JsonObject;
          return { ...sc, execution_time_ms: 0 };
        };
        assertEquals(data(withUi), data(plain));
        assertEquals(
          JSON.parse((plain.content as { text: string }[])[0]!.text).columns,
          ["region", "q1"],
        );
      },
    );

    await t.step(
      "the result grid: cells, NULL apart, a long cell expanded, sorting, truncation said",
      async () => {
        const { page, frame, errors } = await hosted("execute_query", {
          connection_id: "Shop",
          query: `select region, q1, note from ${s}.sales order by region`,
          max_rows: 5,
        });
        assertEquals(await texts(frame, "th"), ["region", "q1", "note"]);
        const rows = await frame.$$eval(
          "tbody tr",
          (trs) =>
            trs.map((tr) =>
              [...tr.querySelectorAll("td")].map((td) => ({
                text: td.textContent ?? "",
                isNull: td.querySelector(".null") !== null,
              }))
            ),
        );
        assertEquals(rows.map((r) => r[0]!.text), [
          "Central",
          "East",
          "Islands",
          "North",
          "South",
        ]);
        assertEquals(rows[0]![1], { text: "45", isNull: false });
        // SQL NULL is marked; the text "NULL" is not (West is cut by max_rows).
        assertEquals(rows[4]![2], { text: "NULL", isNull: true });
        assertEquals(rows[3]![2], { text: "steady", isNull: false });
        // The long cell is cut with a button, and opens whole.
        const long = "long note ".repeat(30) + "end";
        assertMatch(rows[1]![2]!.text, /^long note .*…more$/);
        await frame.click("tbody tr:nth-child(2) button.more");
        assertEquals(
          (await texts(frame, "tbody tr:nth-child(2) td:nth-child(3)"))[0],
          `${long}less`,
        );
        // The truncation is said in the answer's own words.
        const note = (await texts(frame, ".truncation"))[0] ?? "";
        assertMatch(note, /Returned 5 of 6 rows/);
        assertMatch(note, /max_rows/);
        await screenshot(page, "apps-result-grid");
        // Sorting: ascending, descending (NULL last both ways), as returned.
        await frame.click("th[data-column='1']");
        assertEquals(
          await frame.$eval(
            "th[data-column='1']",
            (th) => th.getAttribute("aria-sort"),
          ),
          "ascending",
        );
        assertEquals(
          await texts(frame, "tbody tr td:nth-child(2)"),
          ["10", "45", "80", "120", "200"],
        );
        await frame.click("th[data-column='1']");
        assertEquals(
          await texts(frame, "tbody tr td:nth-child(2)"),
          ["200", "120", "80", "45", "10"],
        );
        await frame.click("th[data-column='1']");
        assertEquals(
          await texts(frame, "tbody tr td:nth-child(1)"),
          ["Central", "East", "Islands", "North", "South"],
        );
        // Text beside the numbers: no chart is offered.
        assertEquals(await frame.$("button[data-action='chart']"), null);
        const methods = checkLog(await hostLog(page));
        assertEquals(methods.slice(0, 4), [
          "view->host ui/initialize",
          "view->host ui/notifications/initialized",
          "host->view ui/notifications/tool-input",
          "host->view ui/notifications/tool-result",
        ]);
        assert(methods.includes("view->host ui/notifications/size-changed"));
        assertEquals(errors, [], "no script error or CSP refusal");
        await page.close();
      },
    );

    await t.step(
      "markup in a cell or a column name is text, never markup",
      async () => {
        const markup = `<img src=x onerror="document.title='run'"><b>bold</b>`;
        const { page, frame, errors } = await hosted("execute_query", {
          connection_id: "Shop",
          query: `select '${
            markup.replaceAll("'", "''")
          }' as "<i>name</i>", 1 as n`,
        });
        assertEquals(
          await texts(frame, "th"),
          ["<i>name</i>", "n"],
          String(await texts(frame, "main")),
        );
        assertEquals((await texts(frame, "tbody td"))[0], markup);
        assertEquals(await frame.$$("img, b, i"), []);
        assertEquals(await frame.evaluate("document.title"), "Query result");
        assertEquals(errors, []);
        await page.close();
      },
    );

    await t.step(
      "a tool error is drawn as its text, in the grid and the card",
      async () => {
        const failed = await hosted("execute_query", {
          connection_id: "Shop",
          query: `select nope from ${s}.sales`,
        });
        assertEquals(failed.result.isError, true);
        const [alert] = await texts(failed.frame, "[role='alert']");
        assertMatch(alert ?? "", /^query_failed: .*nope/);
        assertEquals(failed.errors, []);
        await failed.page.close();
        const card = await hosted("describe_table", {
          connection_id: "Shop",
          table: "no_such_table",
          schema: s,
        });
        assertMatch(
          (await texts(card.frame, "[role='alert']"))[0] ?? "",
          /^not_found: /,
        );
        await card.page.close();
      },
    );

    await t.step(
      "the chart: one bar per value, heights in proportion; lines",
      async () => {
        const { page, frame, errors } = await hosted("execute_query", {
          connection_id: "Shop",
          query: `select region, q1, q2 from ${s}.sales order by region`,
        });
        await frame.click("button[data-action='chart']");
        const bars = await frame.$$eval(
          "rect.bar",
          (rects) =>
            rects.map((r) => ({
              series: r.getAttribute("data-series"),
              label: r.getAttribute("data-label"),
              value: Number(r.getAttribute("data-value")),
              height: Number(r.getAttribute("height")),
            })),
        );
        // Six regions × two series, less West's NULL q1.
        assertEquals(bars.length, 11);
        const q1 = bars.filter((b) => b.series === "q1");
        assertEquals(
          q1.map((b) => [b.label, b.value]),
          [["Central", 45], ["East", 200], ["Islands", 10], ["North", 120], [
            "South",
            80,
          ]],
        );
        const east = q1.find((b) => b.label === "East")!;
        for (const bar of bars) {
          const expected = east.height * bar.value / east.value;
          assert(
            Math.abs(bar.height - expected) < 0.05,
            `${bar.label} ${bar.series} is ${bar.height} high, ${expected} expected`,
          );
        }
        const q2 = bars.filter((b) => b.series === "q2").map((b) => b.value);
        assertEquals(q2, [60, 150, 12, 98.5, 130.25, 75.75]);
        await screenshot(page, "apps-chart-bar");
        await frame.click("button[data-action='line']");
        assertEquals(
          await frame.$$eval(
            "polyline.line",
            (lines) => lines.map((l) => l.getAttribute("data-series")),
          ),
          ["q1", "q2"],
        );
        assertEquals((await frame.$$("circle.point")).length, 11);
        await screenshot(page, "apps-chart-line");
        assertEquals(errors, []);
        checkLog(await hostLog(page));
        await page.close();
      },
    );

    await t.step(
      "the table card: columns and keys; a foreign key asks the host to describe the other table",
      async () => {
        const { page, frame, errors } = await hosted("describe_table", {
          connection_id: "Shop",
          table: "books",
          schema: s,
        });
        assertEquals((await texts(frame, "h1"))[0], `${s}.books`);
        assertEquals(
          await texts(frame, "table.columns tbody td.name"),
          ["idPK", "author_id", "title", "price", "in_print"],
        );
        assertEquals(
          await frame.$eval(
            "tr[data-column='title'] td:nth-child(3)",
            (td) => td.textContent,
          ),
          "NOT NULL",
        );
        assertEquals(await texts(frame, "a.fk"), [`${s}.authors`]);
        await screenshot(page, "apps-table-card");
        await frame.click("a.fk");
        await frame.waitForFunction(
          (want: string) =>
            (globalThis as unknown as {
              document: { querySelector(s: string): { textContent: string } };
            }).document.querySelector("h1")?.textContent === want,
          { timeout: 15_000 },
          `${s}.authors`,
        );
        assertEquals(
          await texts(frame, "table.columns tbody td.name"),
          ["idPK", "name", "born"],
        );
        const log = await hostLog(page);
        const call = log.find((m) => m.msg.method === "tools/call")!;
        assertEquals(call.dir, "view->host");
        assertEquals(call.msg.params, {
          name: "describe_table",
          arguments: { connection_id: "Shop", table: "authors", schema: s },
        });
        await screenshot(page, "apps-table-card-followed");
        await frame.click("a.back");
        assertEquals((await texts(frame, "h1"))[0], `${s}.books`);
        assertEquals(errors, []);
        checkLog(log);
        await page.close();
      },
    );

    await t.step(
      "a host without server tools: the foreign key becomes a ui/message",
      async () => {
        const { page, frame, errors } = await hosted("describe_table", {
          connection_id: "Shop",
          table: "books",
          schema: s,
        }, { message: {} });
        await frame.click("a.fk");
        await frame.waitForFunction(
          () =>
            ((globalThis as unknown as {
              document: { querySelector(s: string): { textContent: string } };
            }).document.querySelector(".status")?.textContent ?? "")
              .startsWith("Asked"),
          { timeout: 15_000 },
        );
        const log = await hostLog(page);
        assertEquals(log.filter((m) => m.msg.method === "tools/call"), []);
        const message = log.find((m) => m.msg.method === "ui/message")!;
        assertEquals(message.msg.params, {
          role: "user",
          content: [{
            type: "text",
            text:
              `Describe the table ${s}.authors on connection Shop (describe_table).`,
          }],
        });
        checkLog(log);
        assertEquals(errors, []);
        await page.close();
      },
    );

    await t.step(
      "the host's context: a dark theme and its colours apply; teardown is answered",
      async () => {
        const { page, frame, errors } = await hosted("execute_query", {
          connection_id: "Shop",
          query: `select region, q1 from ${s}.sales order by region`,
        });
        await hostSend(page, {
          jsonrpc: "2.0",
          method: "ui/notifications/host-context-changed",
          params: {
            theme: "dark",
            styles: {
              variables: { "--color-background-primary": "rgb(16, 20, 24)" },
            },
          },
        });
        await frame.waitForSelector("html[data-theme='dark']");
        assertEquals(
          await frame.evaluate(
            "getComputedStyle(document.body).backgroundColor",
          ),
          "rgb(16, 20, 24)",
        );
        await screenshot(page, "apps-result-grid-dark");
        await hostSend(page, {
          jsonrpc: "2.0",
          id: "bye",
          method: "ui/resource-teardown",
          params: { reason: "test over" },
        });
        await page.waitForFunction(
          () =>
            (globalThis as unknown as { __log: { msg: { id?: unknown } }[] })
              .__log.some((m) => m.msg.id === "bye" && "result" in m.msg),
          { timeout: 15_000 },
        );
        const log = await hostLog(page);
        const answer = log.find((m) =>
          m.dir === "view->host" && m.msg.id === "bye"
        )!;
        assertEquals(answer.msg.result, {});
        checkLog(log);
        assertEquals(errors, []);
        await page.close();
      },
    );

    await t.step(
      "the plan tree: the summary, the nodes, a full scan marked",
      async () => {
        const { page, frame, errors } = await hosted("explain_query", {
          connection_id: "Shop",
          query:
            `select b.title, a.name from ${s}.books b join ${s}.authors a on a.id = b.author_id where b.price > 10`,
        });
        const labels = await frame.$$eval(
          "li.node",
          (nodes) => nodes.map((n) => n.getAttribute("data-label") ?? ""),
        );
        assert(labels.length >= 3, `nodes: ${labels}`);
        assertMatch(labels[0]!, /Join|Nested Loop/);
        const scans = await frame.$$eval(
          "li.node.full-scan",
          (nodes) => nodes.map((n) => n.getAttribute("data-label") ?? ""),
        );
        assert(
          scans.some((label) => label.startsWith("Seq Scan on")),
          `full scans: ${scans}`,
        );
        assertMatch((await texts(frame, "dl.summary"))[0] ?? "", /Top node/);
        await screenshot(page, "apps-plan-tree");
        assertEquals(errors, []);
        checkLog(await hostLog(page));
        await page.close();
      },
    );
  },
});

Deno.test({
  name:
    "MCP Apps: the plan tree draws SQLite's lines and MariaDB's JSON plans, full scans marked",
  ignore: needsChromium().ignore || needs("mysql").ignore,
  sanitizeOps: false,
  sanitizeResources: false,
  async fn(t) {
    await using browser = await startBrowser();
    for (const engine of ["sqlite", "mysql"] as const) {
      await t.step(engine, async () => {
        await using fixture = await openFixture(engine);
        await using server = await serverWith([
          savedConnection(fixture, "Plans"),
        ]);
        const tool = ((await rpc(server.url, "tools/list", {}, true))
          .tools as JsonObject[]).find((x) => x.name === "explain_query")!;
        const read = await rpc(server.url, "resources/read", {
          uri: VIEWS.explain_query,
        }, false);
        const args = {
          connection_id: "Plans",
          query: "select title from books where price > 10",
        };
        const { resultType: _r, ...result } = await rpc(
          server.url,
          "tools/call",
          { name: "explain_query", arguments: args },
          true,
        );
        const { page, frame, errors } = await hostView(browser.browser, {
          html: (read.contents as JsonObject[])[0]!.text as string,
          tool,
          arguments: args,
          result,
          call: (params) => rpc(server.url, "tools/call", params, true),
        });
        const scans = await frame.$$eval(
          "li.node.full-scan",
          (nodes) => nodes.map((n) => n.getAttribute("data-label") ?? ""),
        );
        // SQLite: "SCAN books"; MariaDB: the query block's table, access ALL.
        assertEquals(scans, [
          engine === "sqlite" ? "SCAN books" : "table books",
        ]);
        await screenshot(page, `apps-plan-tree-${engine}`);
        assertEquals(errors, []);
        checkLog(await hostLog(page));
        await page.close();
      });
    }
  },
});
