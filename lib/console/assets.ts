/**
 * The console's style sheet and its one script, served from the console's
 * own origin (the CSP allows nothing else): no build step, no framework, no
 * download. The script follows `/events` and fetches the page's live part
 * again when its topic changes; every page works without it.
 *
 * @module
 */

/** `/static/console.css`. */
export const CONSOLE_CSS = `
:root { color-scheme: light dark; --fg: #1d2127; --muted: #5f6b7a; --bg: #f6f7f9;
  --card: #fff; --line: #d9dee5; --accent: #2457c5; --ok: #137a3a; --bad: #b42318;
  --warn: #9a6700; font: 14px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; }
@media (prefers-color-scheme: dark) { :root { --fg: #e6e9ee; --muted: #9aa5b4;
  --bg: #14171c; --card: #1c2028; --line: #323846; --accent: #7aa2ff; --ok: #4cc27a;
  --bad: #ff7a6e; --warn: #e0b341; } }
* { box-sizing: border-box; }
body { margin: 0; background: var(--bg); color: var(--fg); }
header { display: flex; align-items: center; gap: 24px; padding: 10px 24px;
  background: var(--card); border-bottom: 1px solid var(--line); }
header .brand { font-weight: 700; letter-spacing: .02em; }
header nav { display: flex; gap: 4px; flex-wrap: wrap; }
header nav a { padding: 6px 12px; border-radius: 6px; color: var(--fg); text-decoration: none; }
header nav a[aria-current="page"] { background: var(--accent); color: #fff; }
header .live { margin-left: auto; color: var(--muted); font-size: 12px; }
html[data-live="on"] header .live::before { content: "● "; color: var(--ok); }
html[data-live="off"] header .live::before { content: "● "; color: var(--bad); }
main { padding: 20px 24px; max-width: 1280px; }
h1 { font-size: 20px; margin: 0 0 12px; }
h2 { font-size: 16px; margin: 0 0 8px; }
p.hint, .muted { color: var(--muted); }
.badge { display: inline-block; min-width: 18px; padding: 0 6px; border-radius: 9px;
  background: var(--bad); color: #fff; font-size: 12px; text-align: center; }
.badge[hidden] { display: none; }
td.time { white-space: nowrap; }
.card { background: var(--card); border: 1px solid var(--line); border-radius: 8px;
  padding: 16px; margin: 0 0 16px; }
.card.approval { border-left: 4px solid var(--warn); }
.card.approval.destructive { border-left-color: var(--bad); }
dl.facts { display: grid; grid-template-columns: max-content 1fr; gap: 4px 16px; margin: 8px 0; }
dl.facts dt { color: var(--muted); }
dl.facts dd { margin: 0; }
pre.sql { background: var(--bg); border: 1px solid var(--line); border-radius: 6px;
  padding: 10px 12px; white-space: pre-wrap; word-break: break-word; max-height: 24em;
  overflow: auto; font: 13px/1.4 ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; }
.preview { font-weight: 600; }
table { border-collapse: collapse; width: 100%; background: var(--card); }
th, td { text-align: left; padding: 6px 8px; border-bottom: 1px solid var(--line); vertical-align: top; }
th { color: var(--muted); font-weight: 600; font-size: 12px; text-transform: uppercase; letter-spacing: .03em; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
td code, td pre { font: 12px/1.4 ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; }
td pre { margin: 0; white-space: pre-wrap; word-break: break-word; max-height: 8em; overflow: auto; }
.outcome-success, .status-active, .status-connected { color: var(--ok); }
.outcome-denied, .outcome-error, .outcome-rateLimited, .status-revoked, .status-expired { color: var(--bad); }
form.inline { display: inline; }
form.filters, form.create { display: flex; gap: 8px; flex-wrap: wrap; align-items: end; margin: 0 0 16px; }
label { display: flex; flex-direction: column; gap: 2px; font-size: 12px; color: var(--muted); }
input, select, button { font: inherit; padding: 5px 8px; border: 1px solid var(--line);
  border-radius: 6px; background: var(--card); color: var(--fg); }
button { cursor: pointer; }
button.approve { background: var(--ok); border-color: var(--ok); color: #fff; font-weight: 600; }
.js [data-approval]:not([data-armed]) button.approve { opacity: .55; cursor: wait; }
button.deny, button.revoke { background: var(--card); border-color: var(--bad); color: var(--bad); font-weight: 600; }
button.primary { background: var(--accent); border-color: var(--accent); color: #fff; }
.actions { display: flex; gap: 8px; margin-top: 12px; }
.notice { padding: 10px 12px; border-radius: 6px; border: 1px solid var(--line); background: var(--card); margin: 0 0 16px; }
.secret { font: 15px ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; user-select: all;
  padding: 8px 10px; background: var(--bg); border: 1px dashed var(--accent); border-radius: 6px; display: inline-block; }
fieldset { border: 1px solid var(--line); border-radius: 6px; padding: 4px 8px; }
fieldset.picker { display: flex; flex-direction: column; gap: 6px; min-width: 220px; }
.picklist { max-height: 12em; overflow: auto; border: 1px solid var(--line); border-radius: 6px; padding: 4px 6px; }
.picklist label[hidden] { display: none; }
.card.approval:focus { outline: 2px solid var(--accent); outline-offset: 2px; }
fieldset label { flex-direction: row; gap: 4px; align-items: center; color: var(--fg); }
.empty { padding: 24px; text-align: center; color: var(--muted); }
main a { color: var(--accent); }
a.button { display: inline-block; padding: 5px 8px; border: 1px solid var(--line); border-radius: 6px;
  background: var(--card); color: var(--fg); text-decoration: none; }
.row-actions { display: flex; gap: 6px; flex-wrap: wrap; margin-top: 6px; }
.state { display: block; }
form.stacked .fields { display: grid; grid-template-columns: repeat(auto-fit, minmax(220px, 1fr)); gap: 8px; }
details.card > summary { cursor: pointer; }
details.ssh { margin: 8px 0; } details.ssh summary { cursor: pointer; color: var(--muted); }
label.check { flex-direction: row; align-items: center; gap: 6px; color: var(--fg); }
.card, td, .notice { overflow-wrap: anywhere; }
ol.steps li.step-ok::marker { color: var(--ok); }
@media (max-width: 640px) {
  table.stack, table.stack tbody, table.stack tr, table.stack td { display: block; width: 100%; }
  table.stack thead { display: none; }
  table.stack tr { border-bottom: 2px solid var(--line); padding: 6px 0; }
  table.stack td { border: 0; padding: 3px 4px; }
  table.stack td.num { text-align: left; }
  table.stack td[data-label]::before { content: attr(data-label); display: block; color: var(--muted);
    font-size: 11px; text-transform: uppercase; letter-spacing: .03em; }
  form.create { flex-direction: column; align-items: stretch; }
}
dl.tiles { display: grid; grid-template-columns: repeat(auto-fit, minmax(100px, 1fr)); gap: 8px; margin: 0 0 12px; }
dl.tiles .tile { border: 1px solid var(--line); border-radius: 6px; padding: 6px 10px; }
dl.tiles dt { color: var(--muted); font-size: 12px; }
dl.tiles dd { margin: 0; font-size: 20px; font-weight: 600; font-variant-numeric: tabular-nums; }
dl.tiles .tile-denied dd, dl.tiles .tile-errors dd { color: var(--bad); }
figure.chart { margin: 0 0 12px; }
figure.chart svg { width: 100%; height: 120px; display: block; }
.axis-labels { display: flex; justify-content: space-between; font-size: 11px; margin: 2px 0 4px; }
svg .axis { stroke: var(--line); }
svg .bar-ok { fill: var(--accent); }
svg .bar-denied { fill: var(--warn); }
svg .bar-error { fill: var(--bad); }
svg .line-p95 { fill: none; stroke: var(--ok); stroke-width: 1.5; }
svg .tick { fill: var(--muted); font-size: 11px; }
.key-ok { color: var(--accent); } .key-denied { color: var(--warn); }
.key-error { color: var(--bad); } .key-p95 { color: var(--ok); }
.split { display: grid; grid-template-columns: 1fr 1fr; gap: 16px; }
.split h3 { font-size: 14px; margin: 8px 0; }
.split > div { overflow-x: auto; }
.split th, .split td { overflow-wrap: normal; white-space: nowrap; }
@media (max-width: 640px) { .split { grid-template-columns: 1fr; } }
main h2 { margin-top: 16px; }
.schema-browser { display: grid; grid-template-columns: minmax(180px, 260px) 1fr; gap: 16px; }
.schema-browser ul { list-style: none; padding: 0; margin: 0; }
.schema-browser li { padding: 3px 0; }
.schema-browser a[aria-current] { font-weight: 700; }
.tag { font-size: 10px; border: 1px solid var(--accent); color: var(--accent); border-radius: 4px; padding: 0 3px; margin-left: 4px; }
.pager { display: flex; gap: 12px; }
@media (max-width: 640px) { .schema-browser { grid-template-columns: 1fr; } }
.approved { display: block; color: var(--ok); font-size: 12px; }
code, textarea, .mono { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; }
form.query { display: flex; flex-direction: column; gap: 8px; margin: 0 0 16px; }
form.query textarea { font-size: 13px; line-height: 1.4; padding: 8px 10px; width: 100%;
  min-height: 9em; resize: vertical; border: 1px solid var(--line); border-radius: 6px;
  background: var(--card); color: var(--fg); }
form.query .actions { align-items: center; flex-wrap: wrap; }
.result-facts { color: var(--muted); margin: 0 0 8px; }
.grid-scroll { overflow: auto; max-height: 70vh; border: 1px solid var(--line); border-radius: 6px; }
table.grid th { position: sticky; top: 0; background: var(--card); text-transform: none;
  font-size: 12px; color: var(--fg); white-space: nowrap; }
table.grid th .type { display: block; color: var(--muted); font-weight: 400; font-size: 11px; }
table.grid td { white-space: nowrap; max-width: 40em; }
table.grid td details { white-space: pre-wrap; word-break: break-word; }
table.grid td details summary { cursor: pointer; white-space: nowrap; }
.null { color: var(--muted); font-style: italic; font-size: 11px; letter-spacing: .04em;
  border: 1px solid var(--line); border-radius: 4px; padding: 0 4px; }
@media (max-width: 640px) { header { padding: 8px 12px; gap: 8px; flex-wrap: wrap; }
  main { padding: 12px; } header nav a { padding: 4px 8px; } th, td { padding: 4px 6px; }
  .wide { overflow-x: auto; display: block; } }
`;

/** `/static/icon.svg`: the tab's icon (else the browser asks for /favicon.ico). */
export const CONSOLE_ICON =
  `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 16 16"><rect width="16" height="16" rx="3" fill="#2457c5"/><path d="M4 4h4a4 4 0 0 1 0 8H4z" fill="#fff"/></svg>`;

/** `/static/console.js`. */
export const CONSOLE_JS = `"use strict";
(() => {
  // Ctrl+Enter (Cmd+Enter) in the Query page's box runs it.
  const sql = document.getElementById("query-sql");
  if (sql) {
    sql.addEventListener("keydown", (event) => {
      if (event.key === "Enter" && (event.ctrlKey || event.metaKey)) {
        event.preventDefault();
        const run = document.getElementById("query-run");
        if (run) sql.form.requestSubmit(run);
      }
    });
  }
})();
(() => {
  // Times: UTC in the markup; shown in the browser's local time, UTC kept
  // in the title (a tooltip on hover).
  const pad = (n) => String(n).padStart(2, "0");
  function localTimes(scope) {
    for (const node of scope.querySelectorAll("time[datetime]")) {
      if (node.dataset.local) continue;
      const d = new Date(node.getAttribute("datetime"));
      if (isNaN(d.getTime())) continue;
      const zone = (d.toLocaleTimeString(undefined, { timeZoneName: "short" }).split(" ").pop()) || "";
      node.textContent = d.getFullYear() + "-" + pad(d.getMonth() + 1) + "-" + pad(d.getDate()) +
        " " + pad(d.getHours()) + ":" + pad(d.getMinutes()) + ":" + pad(d.getSeconds()) + " " + zone;
      node.dataset.local = "1";
    }
  }
  localTimes(document);
  new MutationObserver(() => localTimes(document)).observe(document.body, { childList: true, subtree: true });

  // Live filters: a form marked data-live follows the typing, no button.
  const live = document.getElementById("live");
  for (const form of document.querySelectorAll("form[data-live]")) {
    let timer = 0;
    let seq = 0;
    const apply = async () => {
      const url = new URL(form.action, location.href);
      for (const [name, value] of new FormData(form)) {
        if (typeof value === "string" && value !== "") url.searchParams.set(name, value);
      }
      history.replaceState(null, "", url);
      if (!live) return;
      const mine = ++seq;
      url.searchParams.set("fragment", "1");
      try {
        const response = await fetch(url, { cache: "no-store", credentials: "same-origin" });
        if (response.ok && mine === seq) live.innerHTML = await response.text();
      } catch (_) { /* the next keystroke tries again */ }
    };
    form.addEventListener("input", () => { clearTimeout(timer); timer = setTimeout(apply, 250); });
    form.addEventListener("change", () => { clearTimeout(timer); apply(); });
    form.addEventListener("submit", (event) => { event.preventDefault(); clearTimeout(timer); apply(); });
  }

  // A searchable pick list (the token form's connections).
  for (const search of document.querySelectorAll("input[data-filter-list]")) {
    const list = document.getElementById(search.dataset.filterList);
    if (!list) continue;
    search.addEventListener("keydown", (event) => { if (event.key === "Enter") event.preventDefault(); });
    search.addEventListener("input", () => {
      const words = search.value.toLowerCase().trim();
      for (const item of list.querySelectorAll("[data-name]")) {
        const ticked = item.querySelector("input:checked");
        item.hidden = words !== "" && !ticked && !item.dataset.name.includes(words);
      }
    });
  }

  // Keys: "/" focuses the page's search; "a"/"d" approve or deny the
  // focused approval card (or the only one waiting).
  document.addEventListener("keydown", (event) => {
    const target = event.target;
    const typing = target instanceof HTMLElement &&
      (target.isContentEditable || /^(INPUT|TEXTAREA|SELECT)$/.test(target.tagName));
    if (typing || event.ctrlKey || event.metaKey || event.altKey) return;
    if (event.key === "/") {
      const search = document.querySelector("input[type=search], #query-sql");
      if (search) { event.preventDefault(); search.focus(); }
      return;
    }
    if (event.key !== "a" && event.key !== "d") return;
    const cards = [...document.querySelectorAll("[data-approval]")];
    const card = (document.activeElement && document.activeElement.closest &&
      document.activeElement.closest("[data-approval]")) || (cards.length === 1 ? cards[0] : null);
    if (!card) return;
    const button = card.querySelector(event.key === "a" ? "button.approve" : "button.deny");
    if (button) { event.preventDefault(); button.click(); }
  });

  // Approve arms itself only after the card has been on screen ARM_MS: a
  // client that withdraws the write you were reading and sends another at
  // once cannot have the new one approved by the click or "a" you meant for
  // the old one. Deny is never held back.
  const ARM_MS = 1000;
  const firstSeen = new Map();
  function arm() {
    const now = performance.now();
    for (const card of document.querySelectorAll("[data-approval]")) {
      const id = card.getAttribute("data-approval");
      if (!firstSeen.has(id)) firstSeen.set(id, now);
      const left = ARM_MS - (now - firstSeen.get(id));
      if (left <= 0) card.setAttribute("data-armed", "");
      else setTimeout(arm, left + 5);
    }
  }
  document.documentElement.classList.add("js");
  arm();
  new MutationObserver(arm).observe(document.body, { childList: true, subtree: true });
  document.addEventListener("submit", (event) => {
    const card = event.target.closest && event.target.closest("[data-approval]");
    const by = event.submitter;
    if (card && by && by.value === "approve" && !card.hasAttribute("data-armed")) {
      event.preventDefault();
      by.title = "Just arrived: read it first (Approve works a second after a card appears)";
    }
  }, true);
})();
(() => {
  const root = document.documentElement;
  const topic = document.body.dataset.topic;
  const live = document.getElementById("live");
  if (!topic || !live) return;
  let busy = false;
  let again = false;
  // Fetch the page's live part again (the same address with fragment=1):
  // the server renders and escapes it, as it did the whole page.
  async function refresh() {
    if (busy) { again = true; return; }
    busy = true;
    try {
      const url = new URL(location.href);
      url.searchParams.set("fragment", "1");
      const response = await fetch(url, { cache: "no-store", credentials: "same-origin" });
      if (response.ok) {
        live.innerHTML = await response.text();
        const count = live.querySelector("[data-pending]");
        const badge = document.getElementById("pending-badge");
        if (count && badge) {
          badge.textContent = count.dataset.pending;
          badge.hidden = count.dataset.pending === "0";
        }
      }
    } catch (_) {
      // The next event tries again.
    } finally {
      busy = false;
      if (again) { again = false; refresh(); }
    }
  }
  const events = new EventSource(document.body.dataset.base + "/events");
  events.addEventListener(topic, refresh);
  events.addEventListener("open", () => { root.dataset.live = "on"; });
  events.addEventListener("error", () => { root.dataset.live = "off"; });
  // Seconds left on each waiting approval.
  setInterval(() => {
    for (const node of document.querySelectorAll("[data-ends-at]")) {
      const left = Math.max(0, Math.round((Number(node.dataset.endsAt) - Date.now()) / 1000));
      node.textContent = left + " s";
    }
  }, 1000);
})();
`;
