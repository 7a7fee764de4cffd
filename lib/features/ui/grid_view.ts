/**
 * `ui://dbport/result-grid`, the view of `execute_query`: the result set as
 * a grid — columns sortable (ascending, descending, as returned), SQL NULL
 * drawn apart from any text, long cells cut with a button to expand them,
 * and what was left out said in the answer's own words — and, for a result
 * of one label column and one or more numeric columns, a chart view (bars
 * or lines, drawn as SVG).
 *
 * @module
 */

import { KIT_CSS, KIT_JS } from "./view_kit.ts";
import type { ViewParts } from "./page.ts";

const CSS = `${KIT_CSS}
.grid-wrap { overflow: auto; max-height: 560px; border: 1px solid var(--line); border-radius: var(--radius); }
.grid th { position: sticky; top: 0; cursor: pointer; user-select: none; }
.grid th .arrow { color: var(--accent); margin-left: 4px; }
.grid td { max-width: 28em; }
.grid td .full { white-space: pre-wrap; word-break: break-word; }
.grid td button.more { padding: 0 6px; margin-left: 4px; font-size: 11px; }
.grid tr:nth-child(even) td { background: var(--bg2); }
.chart svg { width: 100%; height: auto; max-width: 760px; display: block; }
.chart .axis { stroke: var(--muted); }
.chart .gridline { stroke: var(--line); }
.chart text { fill: var(--muted); font-size: 10px; }
.chart .legend text { fill: var(--fg); font-size: 11px; }
.chart .line { fill: none; stroke-width: 2; }
`;

const SCRIPT = String.raw`
const LONG = 120;
const MAX_POINTS = 60;
const COLORS = ["#2f6fd0", "#e0782f", "#2f9e6b", "#b04fc2", "#c9a227", "#d0455a"];
const NUMERIC = /^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/;
function isNumber(v) { return typeof v === "number" ? Number.isFinite(v) : typeof v === "string" && NUMERIC.test(v.trim()); }
function numericColumn(rows, i) {
  let seen = 0;
  for (const row of rows) {
    const v = row[i];
    if (v === null) continue;
    if (!isNumber(v)) return false;
    seen++;
  }
  return seen > 0;
}
function shown(v) {
  if (typeof v === "string") return v;
  if (typeof v === "object") return JSON.stringify(v);
  return String(v);
}
function cellNode(v) {
  if (v === null) return el("span", { class: "null", title: "SQL NULL" }, "NULL");
  const text = shown(v);
  if (text.length <= LONG) return text;
  const span = el("span", { class: "cut" }, text.slice(0, LONG) + "…");
  const button = el("button", { class: "more", type: "button", "aria-expanded": "false", text: "more" });
  button.addEventListener("click", () => {
    const open = button.getAttribute("aria-expanded") !== "true";
    button.setAttribute("aria-expanded", String(open));
    button.textContent = open ? "less" : "more";
    span.className = open ? "full" : "cut";
    span.textContent = open ? text : text.slice(0, LONG) + "…";
  });
  return el("span", {}, span, button);
}
function compare(a, b, numeric) {
  if (a === null || b === null) return a === b ? 0 : a === null ? 1 : -1;
  if (numeric) {
    const d = Number(a) - Number(b);
    if (d !== 0 && !Number.isNaN(d)) return d;
  }
  return shown(a).localeCompare(shown(b), undefined, { numeric: true });
}
function chartShape(columns, rows) {
  if (columns.length < 2 || rows.length === 0) return null;
  const numeric = columns.map((_, i) => numericColumn(rows, i));
  let label = numeric.indexOf(false);
  if (label === -1) label = 0;
  const series = columns.map((_, i) => i).filter((i) => i !== label);
  if (series.some((i) => !numeric[i])) return null;
  return { label, series };
}
function niceTicks(lo, hi) {
  if (lo === hi) { hi = lo + 1; }
  const raw = (hi - lo) / 5;
  const mag = Math.pow(10, Math.floor(Math.log10(raw)));
  const step = [1, 2, 2.5, 5, 10].map((m) => m * mag).find((s) => raw <= s) || raw;
  const start = Math.floor(lo / step) * step;
  const ticks = [];
  for (let t = start; t <= hi + step * 1e-9; t += step) ticks.push(Number(t.toPrecision(12)));
  if (ticks[ticks.length - 1] < hi) ticks.push(ticks[ticks.length - 1] + step);
  return ticks;
}
function drawChart(data, shape, kind) {
  const rows = data.rows.slice(0, MAX_POINTS);
  const W = 720, H = 320, L = 56, R = 12, T = 12, B = 64;
  const values = rows.flatMap((row) => shape.series.map((i) => row[i] === null ? null : Number(row[i])));
  const finite = values.filter((v) => v !== null);
  const ticks = niceTicks(Math.min(0, ...finite), Math.max(0, ...finite));
  const lo = ticks[0], hi = ticks[ticks.length - 1];
  const y = (v) => T + (H - T - B) * (1 - (v - lo) / (hi - lo));
  const band = (W - L - R) / rows.length;
  const svg = el("svg", { viewBox: "0 0 " + W + " " + (H + 22), role: "img", "aria-label": kind + " chart" });
  for (const t of ticks) {
    svg.append(el("line", { class: "gridline", x1: L, x2: W - R, y1: y(t), y2: y(t) }));
    svg.append(el("text", { x: L - 6, y: y(t) + 3, "text-anchor": "end" }, String(t)));
  }
  svg.append(el("line", { class: "axis", x1: L, x2: W - R, y1: y(0), y2: y(0) }));
  svg.append(el("line", { class: "axis", x1: L, x2: L, y1: T, y2: H - B }));
  const every = Math.ceil(rows.length / 24);
  rows.forEach((row, r) => {
    if (r % every !== 0) return;
    const x = L + band * (r + 0.5);
    svg.append(el("text", { x, y: H - B + 12, "text-anchor": "end", transform: "rotate(-35 " + x + " " + (H - B + 12) + ")", class: "xlabel" },
      row[shape.label] === null ? "NULL" : shown(row[shape.label]).slice(0, 18)));
  });
  const names = shape.series.map((i) => data.columns[i]);
  if (kind === "bar") {
    const inner = band * 0.8 / shape.series.length;
    rows.forEach((row, r) => shape.series.forEach((i, s) => {
      if (row[i] === null) return;
      const v = Number(row[i]);
      const top = Math.min(y(v), y(0));
      const label = row[shape.label] === null ? "NULL" : shown(row[shape.label]);
      svg.append(el("rect", {
        class: "bar", x: (L + band * r + band * 0.1 + inner * s).toFixed(2), y: top.toFixed(2),
        width: Math.max(1, inner - 1).toFixed(2), height: Math.max(0, Math.abs(y(v) - y(0))).toFixed(2),
        fill: COLORS[s % COLORS.length], "data-series": names[s], "data-label": label, "data-value": shown(row[i]),
      }, el("title", {}, label + " · " + names[s] + ": " + shown(row[i]))));
    }));
  } else {
    shape.series.forEach((i, s) => {
      const points = [];
      rows.forEach((row, r) => { if (row[i] !== null) points.push([L + band * (r + 0.5), y(Number(row[i])), row, r]); });
      svg.append(el("polyline", { class: "line", stroke: COLORS[s % COLORS.length], "data-series": names[s],
        points: points.map((p) => p[0].toFixed(2) + "," + p[1].toFixed(2)).join(" ") }));
      for (const p of points) {
        svg.append(el("circle", { class: "point", cx: p[0].toFixed(2), cy: p[1].toFixed(2), r: 3, fill: COLORS[s % COLORS.length],
          "data-series": names[s], "data-value": shown(p[2][i]) }, el("title", {}, shown(p[2][shape.label]) + " · " + names[s] + ": " + shown(p[2][i]))));
      }
    });
  }
  const legend = el("g", { class: "legend" });
  names.forEach((name, s) => {
    const x = L + s * 140;
    legend.append(el("rect", { x, y: H + 6, width: 10, height: 10, fill: COLORS[s % COLORS.length] }));
    legend.append(el("text", { x: x + 14, y: H + 15 }, String(name).slice(0, 20)));
  });
  svg.append(legend);
  const box = el("div", { class: "chart" }, svg);
  if (data.rows.length > MAX_POINTS) {
    box.prepend(el("p", { class: "muted", text: "The chart draws the first " + MAX_POINTS + " of " + data.rows.length + " rows; the table has them all." }));
  }
  return box;
}
function drawGrid(data, sort, onSort) {
  const numeric = data.columns.map((_, i) => numericColumn(data.rows, i));
  const order = data.rows.map((_, r) => r);
  if (sort.column !== null) {
    order.sort((a, b) => {
      const c = compare(data.rows[a][sort.column], data.rows[b][sort.column], numeric[sort.column]);
      const nulls = data.rows[a][sort.column] === null || data.rows[b][sort.column] === null;
      return (nulls ? c : sort.dir * c) || a - b;
    });
  }
  const head = el("tr", {}, data.columns.map((name, i) => el("th", {
    class: numeric[i] ? "num" : null, scope: "col", tabindex: "0", "data-column": i,
    "aria-sort": sort.column === i ? (sort.dir > 0 ? "ascending" : "descending") : "none",
    on: { click: () => onSort(i), keydown: (e) => { if (e.key === "Enter") onSort(i); } },
  }, String(name), sort.column === i ? el("span", { class: "arrow" }, sort.dir > 0 ? "▲" : "▼") : null)));
  const body = el("tbody", {}, order.map((r) => el("tr", { "data-row": r },
    data.rows[r].map((v, i) => el("td", { class: numeric[i] ? "num" : null }, cellNode(v))))));
  return el("div", { class: "grid-wrap" }, el("table", { class: "grid" }, el("thead", {}, head), body));
}
function render(app, data) {
  if (!Array.isArray(data.columns) || !Array.isArray(data.rows)) {
    app.append(el("p", { class: "error", text: "The result holds no rows." }));
    return;
  }
  const view = { mode: "table", kind: "bar", sort: { column: null, dir: 1 } };
  const shape = chartShape(data.columns, data.rows);
  const top = el("div", { class: "bar-line" });
  const summary = data.columns.length === 0
    ? (data.rows_affected ?? 0) + " rows affected"
    : (data.row_count ?? data.rows.length) + " rows" + (data.rows_affected ? " · " + data.rows_affected + " rows affected" : "");
  const note = data.is_truncated
    ? el("p", { class: "note truncation", role: "note", text: "Not every row or value is shown: " +
      (data.truncation && data.truncation.message ? data.truncation.message : "the result was cut.") })
    : null;
  const body = el("div", { class: "body" });
  function button(label, pressed, action) {
    return el("button", { type: "button", "aria-pressed": String(pressed), "data-action": label.toLowerCase(), on: { click: action } }, label);
  }
  function draw() {
    clear(top).append(el("strong", {}, summary), el("span", { class: "muted" },
      typeof data.execution_time_ms === "number" ? data.execution_time_ms + " ms" : ""));
    if (shape) {
      top.append(button("Table", view.mode === "table", () => { view.mode = "table"; draw(); }));
      top.append(button("Chart", view.mode === "chart", () => { view.mode = "chart"; draw(); }));
      if (view.mode === "chart") {
        top.append(button("Bar", view.kind === "bar", () => { view.kind = "bar"; draw(); }));
        top.append(button("Line", view.kind === "line", () => { view.kind = "line"; draw(); }));
      }
    }
    clear(body);
    if (data.columns.length === 0) return;
    if (view.mode === "chart" && shape) body.append(drawChart(data, shape, view.kind));
    else body.append(drawGrid(data, view.sort, (i) => {
      const s = view.sort;
      if (s.column !== i) { s.column = i; s.dir = 1; } else if (s.dir > 0) s.dir = -1; else s.column = null;
      draw();
    }));
  }
  app.append(...[top, note, body].filter(Boolean));
  draw();
}
App.start("dbport result grid", render);
`;

/** The result grid's parts. */
export const GRID_VIEW: ViewParts = {
  title: "Query result",
  css: CSS,
  script: KIT_JS + SCRIPT,
};
