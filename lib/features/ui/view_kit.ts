/**
 * What every dbport view shares: the style sheet and the view's side of the
 * MCP Apps protocol (spec 2026-01-26, "Communication Protocol"), JSON-RPC
 * 2.0 over `postMessage` with the host:
 *
 * - `ui/initialize` (appInfo, appCapabilities, protocolVersion) → the
 *   host's capabilities and context; then `ui/notifications/initialized`;
 * - the host's `ui/notifications/tool-input`, `…/tool-result`,
 *   `…/tool-cancelled` and `…/host-context-changed`, and its
 *   `ui/resource-teardown` and `ping` requests (answered `{}`);
 * - `ui/notifications/size-changed` whenever the content's size changes;
 * - `tools/call` and `ui/message` requests a view sends on a click.
 *
 * Messages are taken only from the parent window (the host, or its sandbox
 * proxy) and only as JSON-RPC 2.0. The script is plain JavaScript that runs
 * in the browser; it builds the DOM with `textContent` only.
 *
 * @module
 */

/** The MCP Apps protocol version the views speak. */
export const APPS_PROTOCOL_VERSION = "2026-01-26";

/** The style sheet every view starts from; host variables override it. */
export const KIT_CSS = `
:root { color-scheme: light dark;
  --bg: var(--color-background-primary, #fff); --bg2: var(--color-background-secondary, #f4f6f8);
  --fg: var(--color-text-primary, #1d2127); --muted: var(--color-text-secondary, #5f6b7a);
  --line: var(--color-border-primary, #d9dee5); --accent: var(--color-text-info, #2457c5);
  --bad: var(--color-text-danger, #b42318); --warn: var(--color-background-warning, #fff4d6);
  --mono: var(--font-mono, ui-monospace, SFMono-Regular, Menlo, Consolas, monospace);
  --radius: var(--border-radius-md, 6px);
  font: 13px/1.45 var(--font-sans, system-ui, -apple-system, "Segoe UI", sans-serif); }
html[data-theme="dark"] { --bg: var(--color-background-primary, #16191e); --bg2: var(--color-background-secondary, #1f242c);
  --fg: var(--color-text-primary, #e6e9ee); --muted: var(--color-text-secondary, #9aa5b4);
  --line: var(--color-border-primary, #343b48); --accent: var(--color-text-info, #7aa2ff);
  --bad: var(--color-text-danger, #ff8a80); --warn: var(--color-background-warning, #3a3113); }
* { box-sizing: border-box; }
body { margin: 0; background: var(--bg); color: var(--fg); }
main { padding: 10px 12px; }
h1 { font-size: 15px; margin: 0 0 6px; }
h2 { font-size: 13px; margin: 14px 0 6px; color: var(--muted); text-transform: uppercase; letter-spacing: .04em; }
.muted, .wait { color: var(--muted); }
.bar-line { display: flex; gap: 8px; align-items: center; flex-wrap: wrap; margin: 0 0 8px; }
.note { background: var(--warn); border: 1px solid var(--line); border-radius: var(--radius); padding: 6px 8px; margin: 0 0 8px; }
.error { color: var(--bad); white-space: pre-wrap; }
button { font: inherit; padding: 3px 10px; border: 1px solid var(--line); border-radius: var(--radius);
  background: var(--bg2); color: var(--fg); cursor: pointer; }
button[aria-pressed="true"] { background: var(--accent); border-color: var(--accent); color: var(--bg); }
table { border-collapse: collapse; width: 100%; }
th, td { text-align: left; padding: 4px 8px; border-bottom: 1px solid var(--line); vertical-align: top; }
th { background: var(--bg2); font-weight: 600; white-space: nowrap; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; }
code, pre, .mono { font-family: var(--mono); font-size: 12px; }
pre { white-space: pre-wrap; word-break: break-word; background: var(--bg2); border: 1px solid var(--line);
  border-radius: var(--radius); padding: 6px 8px; margin: 0 0 8px; max-height: 24em; overflow: auto; }
.null { color: var(--muted); font-style: italic; font-size: 11px; border: 1px solid var(--line);
  border-radius: 3px; padding: 0 3px; }
.badge { display: inline-block; font-size: 11px; padding: 0 6px; border-radius: 8px; border: 1px solid var(--line);
  color: var(--muted); margin-left: 4px; }
a { color: var(--accent); cursor: pointer; }
`;

/**
 * The view's half of the protocol, and DOM helpers. Defines `el`, `clear`,
 * `payload`, `textOf` and `App`; a view's own script then calls
 * `App.start(name, render)`.
 */
export const KIT_JS = String.raw`
"use strict";
const PROTOCOL_VERSION = "${APPS_PROTOCOL_VERSION}";
function el(tag, attrs, ...children) {
  const node = tag === "svg" || SVG_TAGS.has(tag)
    ? document.createElementNS("http://www.w3.org/2000/svg", tag)
    : document.createElement(tag);
  for (const [key, value] of Object.entries(attrs || {})) {
    if (value === undefined || value === null || value === false) continue;
    if (key === "on") for (const [type, fn] of Object.entries(value)) node.addEventListener(type, fn);
    else if (key === "text") node.textContent = String(value);
    else node.setAttribute(key, String(value));
  }
  for (const child of children.flat(Infinity)) {
    if (child === undefined || child === null || child === false) continue;
    node.append(typeof child === "string" ? document.createTextNode(child) : child);
  }
  return node;
}
const SVG_TAGS = new Set(["g", "rect", "line", "polyline", "circle", "text", "title", "path"]);
function clear(node) { while (node.firstChild) node.firstChild.remove(); return node; }
function textOf(result) {
  const item = (result.content || []).find((c) => c && c.type === "text");
  return item ? String(item.text) : "";
}
function payload(result) {
  if (result.isError) return { error: textOf(result) || "The tool failed." };
  const sc = result.structuredContent;
  if (sc && typeof sc === "object" && !Array.isArray(sc)) return { data: sc };
  try {
    const parsed = JSON.parse(textOf(result));
    if (parsed && typeof parsed === "object") return { data: parsed };
  } catch (_) { /* not JSON */ }
  return { error: "The result holds no data this view can draw." };
}
const App = (() => {
  let nextId = 1;
  const pending = new Map();
  const handlers = new Map();
  const state = { input: {}, hostCapabilities: {}, hostContext: {} };
  function send(message) { window.parent.postMessage(message, "*"); }
  function request(method, params) {
    const id = nextId++;
    send({ jsonrpc: "2.0", id, method, params });
    return new Promise((resolve, reject) => pending.set(id, { resolve, reject }));
  }
  function notify(method, params) { send({ jsonrpc: "2.0", method, params }); }
  window.addEventListener("message", (event) => {
    if (event.source !== window.parent) return;
    const m = event.data;
    if (!m || typeof m !== "object" || m.jsonrpc !== "2.0") return;
    if (typeof m.method !== "string") {
      const waiting = pending.get(m.id);
      if (!waiting) return;
      pending.delete(m.id);
      if (m.error) waiting.reject(new Error(m.error.message || "The host refused."));
      else waiting.resolve(m.result || {});
      return;
    }
    if (m.id !== undefined) {
      if (m.method === "ui/resource-teardown" || m.method === "ping") {
        send({ jsonrpc: "2.0", id: m.id, result: {} });
      } else {
        send({ jsonrpc: "2.0", id: m.id, error: { code: -32601, message: "Method not found: " + m.method } });
      }
      return;
    }
    const handler = handlers.get(m.method);
    if (handler) handler(m.params || {});
  });
  function applyContext(context) {
    Object.assign(state.hostContext, context);
    const root = document.documentElement;
    if (context.theme === "dark" || context.theme === "light") root.dataset.theme = context.theme;
    const variables = context.styles && context.styles.variables;
    if (variables && typeof variables === "object") {
      for (const [name, value] of Object.entries(variables)) {
        if (/^--[a-z0-9-]+$/.test(name) && typeof value === "string") root.style.setProperty(name, value);
      }
    }
  }
  let lastSize = "";
  function reportSize() {
    // The content's own height (the document's is never below the frame's,
    // so a view that shrinks would never say so).
    const box = document.getElementById("app").getBoundingClientRect();
    const size = { width: Math.ceil(document.documentElement.scrollWidth), height: Math.ceil(box.height) };
    const key = size.width + "x" + size.height;
    if (key === lastSize) return;
    lastSize = key;
    notify("ui/notifications/size-changed", size);
  }
  async function start(name, render) {
    const app = document.getElementById("app");
    handlers.set("ui/notifications/tool-input", (p) => { state.input = p.arguments || {}; });
    handlers.set("ui/notifications/tool-input-partial", () => {});
    handlers.set("ui/notifications/tool-result", (result) => {
      const got = payload(result);
      clear(app);
      if (got.error !== undefined) app.append(el("p", { class: "error", role: "alert", text: got.error }));
      else render(app, got.data);
      document.documentElement.dataset.rendered = "true";
    });
    handlers.set("ui/notifications/tool-cancelled", (p) => {
      clear(app).append(el("p", { class: "error", text: "The call was cancelled" + (p.reason ? ": " + p.reason : ".") }));
    });
    handlers.set("ui/notifications/host-context-changed", applyContext);
    const result = await request("ui/initialize", {
      appInfo: { name, version: "1.0.0" },
      appCapabilities: { availableDisplayModes: ["inline"] },
      protocolVersion: PROTOCOL_VERSION,
    });
    state.hostCapabilities = result.hostCapabilities || {};
    applyContext(result.hostContext || {});
    notify("ui/notifications/initialized", {});
    new ResizeObserver(reportSize).observe(app);
    reportSize();
  }
  return { start, request, state };
})();
`;
