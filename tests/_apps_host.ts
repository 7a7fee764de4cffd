/**
 * A minimal MCP Apps host (spec 2026-01-26) in a real Chromium page, for the
 * views' end-to-end tests: it renders a `ui://` resource's HTML in a
 * sandboxed iframe (`allow-scripts` only, as a desktop host renders a view)
 * and talks to it in JSON-RPC 2.0 over `postMessage` exactly as the spec's
 * lifecycle says — it answers `ui/initialize` with its info, capabilities
 * and context, and once the view sends `ui/notifications/initialized` it
 * sends `ui/notifications/tool-input` and then `ui/notifications/tool-result`
 * with the tool's real result. A view's `tools/call` is proxied to the MCP
 * server through `call` (the host's own connection, as a host proxies server
 * tools); `ui/notifications/size-changed` resizes the iframe; any other
 * request is refused with -32601 and recorded. Every message in either
 * direction is logged for the test to check against the extension's schema.
 *
 * @module
 */

import type { Browser, Frame, Page } from "puppeteer-core";
import type { JsonObject } from "../lib/protocol/jsonrpc.ts";

/** One message the host saw or sent. */
export interface LoggedMessage {
  dir: "view->host" | "host->view";
  msg: JsonObject;
}

/** What the host shows and how it reaches the server. */
export interface HostedCall {
  /** The view's HTML, as `resources/read` returned it. */
  html: string;
  /** The tool as `tools/list` showed it (the host context's `toolInfo`). */
  tool: JsonObject;
  /** The tool call's arguments and its result. */
  arguments: JsonObject;
  result: JsonObject;
  /**
   * The host's capabilities (default: it proxies server tools and takes
   * logs); `message: {}` makes it accept `ui/message`.
   */
  capabilities?: JsonObject;
  /** Proxies a view's `tools/call` params to the server; returns its result. */
  call(params: JsonObject): Promise<JsonObject>;
}

const HOST_PAGE = `<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>test host</title>
<style>body{margin:0;padding:8px;background:#eef1f5;font:13px system-ui}
iframe{display:block;width:780px;height:200px;border:1px solid #c4ccd6;background:#fff}</style>
</head><body><iframe id="view" sandbox="allow-scripts" title="MCP App view"></iframe></body></html>`;

/**
 * The host's side, run in the page (plain JavaScript: the tests' types have
 * no DOM). `setup` holds the view's HTML, the tool, its arguments and result.
 */
const HOST_JS = `(setup) => {
  window.__log = [];
  const frame = document.getElementById("view");
  const send = (msg) => {
    window.__log.push({ dir: "host->view", msg });
    frame.contentWindow.postMessage(msg, "*");
  };
  let initialized = false;
  window.addEventListener("message", async (event) => {
    if (event.source !== frame.contentWindow) return;
    const m = event.data;
    window.__log.push({ dir: "view->host", msg: m });
    if (!m || m.jsonrpc !== "2.0") return;
    if (m.method === "ui/initialize") {
      send({ jsonrpc: "2.0", id: m.id, result: {
        protocolVersion: "2026-01-26",
        hostInfo: { name: "dbport-test-host", version: "1.0.0" },
        hostCapabilities: setup.capabilities,
        hostContext: {
          toolInfo: { id: 7, tool: setup.tool },
          theme: "light",
          displayMode: "inline",
          availableDisplayModes: ["inline"],
          platform: "desktop",
          locale: "en-US",
        },
      } });
    } else if (m.method === "ui/notifications/initialized") {
      // Nothing reaches the view before it says it is initialized.
      if (initialized) return;
      initialized = true;
      send({ jsonrpc: "2.0", method: "ui/notifications/tool-input", params: { arguments: setup.args } });
      send({ jsonrpc: "2.0", method: "ui/notifications/tool-result", params: setup.result });
    } else if (m.method === "ui/notifications/size-changed") {
      if (m.params && typeof m.params.height === "number") {
        frame.style.height = Math.min(4000, m.params.height + 2) + "px";
      }
    } else if (m.method === "ui/message" && m.id !== undefined && setup.capabilities.message) {
      send({ jsonrpc: "2.0", id: m.id, result: {} });
    } else if (m.method === "tools/call" && m.id !== undefined && setup.capabilities.serverTools) {
      const answer = JSON.parse(await window.__hostCall(JSON.stringify(m.params)));
      send({ jsonrpc: "2.0", id: m.id, result: answer });
    } else if (m.id !== undefined) {
      send({ jsonrpc: "2.0", id: m.id, error: { code: -32601, message: "not offered: " + m.method } });
    }
  });
  window.__send = send;
  frame.srcdoc = setup.html;
}`;

/** A view hosted in a new page: the page and the view's frame, once drawn. */
export async function hostView(
  browser: Browser,
  call: HostedCall,
): Promise<{ page: Page; frame: Frame; errors: string[] }> {
  const page = await browser.newPage();
  // A CSP refusal or a script error in the view shows on the console.
  const errors: string[] = [];
  page.on("console", (message) => {
    if (message.type() === "error") errors.push(message.text());
  });
  page.on("pageerror", (error) => errors.push(String(error)));
  await page.setContent(HOST_PAGE);
  await page.exposeFunction("__hostCall", async (params: string) => {
    return JSON.stringify(await call.call(JSON.parse(params)));
  });
  await page.evaluate(
    `(${HOST_JS})(${
      JSON.stringify({
        html: call.html,
        tool: call.tool,
        args: call.arguments,
        result: call.result,
        capabilities: call.capabilities ?? { serverTools: {}, logging: {} },
      })
    })`,
  );
  const handle = await page.waitForSelector("iframe#view");
  const frame = await handle!.contentFrame();
  await frame.waitForSelector("html[data-rendered='true']", {
    timeout: 15_000,
  }).catch(async (error) => {
    throw new Error(
      `the view did not draw the result: ${error}; errors: ${
        JSON.stringify(errors)
      }; messages: ${JSON.stringify(await hostLog(page))}`,
    );
  });
  return { page, frame, errors };
}

/** Every message the host saw or sent so far. */
export async function hostLog(page: Page): Promise<LoggedMessage[]> {
  return await page.evaluate(() =>
    (window as unknown as { __log: LoggedMessage[] }).__log
  );
}

/** Send the view a message as the host (a notification or a request). */
export async function hostSend(page: Page, msg: JsonObject): Promise<void> {
  await page.evaluate(`window.__send(${JSON.stringify(msg)})`);
}
