/**
 * `ui://dbport/plan-tree`, the view of `explain_query`: the summary (top
 * node, estimated rows and cost, measured rows and time, full scans) and the
 * plan as a tree of collapsible nodes, whatever the engine's shape:
 * PostgreSQL's JSON (`Plan` / `Plans`), MySQL's and MariaDB's JSON
 * (`query_block` and its nested objects), or lines of text indented by depth
 * (SQLite's plan, MySQL's EXPLAIN ANALYZE). Full scans are marked.
 *
 * @module
 */

import { KIT_CSS, KIT_JS } from "./view_kit.ts";
import type { ViewParts } from "./page.ts";

const CSS = `${KIT_CSS}
dl.summary { display: grid; grid-template-columns: max-content 1fr; gap: 2px 14px; margin: 0 0 8px; }
dl.summary dt { color: var(--muted); }
dl.summary dd { margin: 0; }
ul.tree, ul.tree ul { list-style: none; margin: 0; padding-left: 16px; border-left: 1px dotted var(--line); }
ul.tree { padding-left: 0; border-left: 0; }
ul.tree li { margin: 3px 0; }
.node summary { cursor: pointer; }
.node .label { font-weight: 600; }
.node .facts { color: var(--muted); font-family: var(--mono); font-size: 11px; margin-left: 6px; }
.node .props { margin: 2px 0 2px 16px; color: var(--muted); font-family: var(--mono); font-size: 11px; }
.full-scan > details > summary .label, .full-scan > .leaf .label { color: var(--bad); }
.full-scan > details > summary .label::after, .full-scan > .leaf .label::after { content: " full scan"; font-size: 10px;
  font-weight: 400; border: 1px solid var(--bad); border-radius: 3px; padding: 0 3px; margin-left: 4px; }
`;

const SCRIPT = String.raw`
function scalar(v) { return v === null || typeof v !== "object"; }
function fmt(v) { return typeof v === "string" ? v : JSON.stringify(v); }
function node(label, facts, props, children, fullScan) {
  const head = [el("span", { class: "label" }, label), facts ? el("span", { class: "facts" }, facts) : null];
  const extra = props.length ? el("div", { class: "props" }, props.map(([k, v]) => el("div", {}, k + ": " + fmt(v)))) : null;
  const li = el("li", { class: "node" + (fullScan ? " full-scan" : ""), "data-label": label });
  if (children.length === 0 && !extra) li.append(el("div", { class: "leaf" }, head));
  else li.append(el("details", { open: "" }, el("summary", {}, head), extra, children.length ? el("ul", {}, children) : null));
  return li;
}
const PG_SHOWN = new Set(["Node Type", "Plans", "Relation Name", "Alias", "Index Name", "Startup Cost", "Total Cost",
  "Plan Rows", "Plan Width", "Actual Startup Time", "Actual Total Time", "Actual Rows", "Actual Loops", "Parent Relationship",
  "Parallel Aware", "Async Capable", "Schema"]);
function pgNode(p) {
  let label = String(p["Node Type"]);
  if (p["Index Name"]) label += " using " + p["Index Name"];
  if (p["Relation Name"]) label += " on " + (p["Schema"] ? p["Schema"] + "." : "") + p["Relation Name"] +
    (p["Alias"] && p["Alias"] !== p["Relation Name"] ? " " + p["Alias"] : "");
  let facts = "cost=" + p["Startup Cost"] + ".." + p["Total Cost"] + " rows=" + p["Plan Rows"];
  if (p["Actual Rows"] !== undefined) facts += " · actual " + p["Actual Total Time"] + " ms, rows=" + p["Actual Rows"] + " loops=" + p["Actual Loops"];
  const props = Object.entries(p).filter(([k, v]) => !PG_SHOWN.has(k) && v !== null && v !== "");
  const kids = Array.isArray(p.Plans) ? p.Plans.map(pgNode) : [];
  return node(label, facts, props, kids, p["Node Type"] === "Seq Scan");
}
const JSON_SHOWN = new Set(["table_name", "access_type", "rows", "rows_examined_per_scan"]);
function jsonNode(key, value) {
  if (Array.isArray(value)) return node(key, value.length + " items", [], value.map((v, i) => scalar(v) ? node(key + "[" + i + "]", fmt(v), [], [], false) : jsonNode(key + "[" + i + "]", v)), false);
  const props = Object.entries(value).filter(([, v]) => scalar(v));
  const kids = Object.entries(value).filter(([, v]) => !scalar(v)).map(([k, v]) => jsonNode(k, v));
  let label = key;
  if (typeof value.table_name === "string") label = key + " " + value.table_name;
  const facts = [value.access_type && "access " + value.access_type,
    value.rows_examined_per_scan !== undefined && "rows " + value.rows_examined_per_scan,
    value.rows !== undefined && "rows " + value.rows,
    value.cost_info && value.cost_info.query_cost && "cost " + value.cost_info.query_cost].filter(Boolean).join(" · ");
  return node(label, facts, props.filter(([k]) => !JSON_SHOWN.has(k)), kids, value.access_type === "ALL");
}
function linesTree(lines) {
  const root = { children: [], depth: -1 };
  const stack = [root];
  for (const raw of lines) {
    if (raw.trim() === "" || raw.trim() === "QUERY PLAN") continue;
    const depth = raw.length - raw.trimStart().length;
    const text = raw.trim().replace(/^-> /, "");
    while (stack.length > 1 && stack[stack.length - 1].depth >= depth) stack.pop();
    const entry = { text, depth, children: [] };
    stack[stack.length - 1].children.push(entry);
    stack.push(entry);
  }
  const build = (e) => node(e.text, "", [], e.children.map(build),
    /^SCAN\b/.test(e.text) && !/ USING /.test(e.text) || /^Table scan on\b/.test(e.text));
  return root.children.map(build);
}
function treeOf(plan) {
  if (Array.isArray(plan) && plan.every((l) => typeof l === "string")) return linesTree(plan);
  if (typeof plan === "string") return linesTree(plan.split("\n"));
  const doc = Array.isArray(plan) ? plan[0] : plan;
  if (doc && typeof doc === "object" && doc.Plan && typeof doc.Plan === "object") return [pgNode(doc.Plan)];
  if (doc && typeof doc === "object") return Object.entries(doc).filter(([, v]) => !scalar(v)).map(([k, v]) => jsonNode(k, v));
  return [];
}
function render(app, data) {
  const s = data.summary || {};
  app.append(el("div", { class: "bar-line" }, el("h1", {}, "Plan"),
    el("span", { class: "badge" }, data.analyzed ? "analyzed: the statement ran" : "estimated: nothing ran")));
  if (data.is_truncated) app.append(el("p", { class: "note truncation", role: "note", text: "The plan was longer than the answer budget and was cut; the summary reads only what was kept." }));
  const facts = [["Top node", s.top_node], ["Estimated rows", s.estimated_rows], ["Estimated cost", s.estimated_cost],
    ["Actual rows", s.actual_rows], ["Actual time", s.actual_time_ms === null || s.actual_time_ms === undefined ? null : s.actual_time_ms + " ms"]];
  app.append(el("dl", { class: "summary" }, facts.filter(([, v]) => v !== null && v !== undefined).map(([k, v]) => [el("dt", {}, k), el("dd", {}, String(v))])));
  const scans = s.full_scans || [];
  if (scans.length) app.append(el("p", { class: "note scans", text: "Full scans: " + scans.map((f) => f.table +
    (f.estimated_rows === null ? "" : " (~" + f.estimated_rows + " rows)")).join(", ") }));
  app.append(el("ul", { class: "tree" }, treeOf(data.plan)));
  app.append(el("details", {}, el("summary", {}, "Statement"), el("pre", {}, String(data.statement || ""))));
}
App.start("dbport plan tree", render);
`;

/** The plan tree's parts. */
export const PLAN_VIEW: ViewParts = {
  title: "Query plan",
  css: CSS,
  script: KIT_JS + SCRIPT,
};
