/**
 * `ui://dbport/table-card`, the view of `describe_table`: the table's
 * columns (type, NULL or NOT NULL, default, primary key, comment, enum
 * values), its indexes, and its foreign keys as links. A link asks the host
 * to call `describe_table` on the table it references (`tools/call`, when
 * the host proxies server tools) and draws that table's card in place, with
 * a way back; a host that proxies no tools gets a `ui/message` asking for
 * the description instead.
 *
 * @module
 */

import { KIT_CSS, KIT_JS } from "./view_kit.ts";
import type { ViewParts } from "./page.ts";

const CSS = `${KIT_CSS}
.card-head { display: flex; align-items: baseline; gap: 8px; flex-wrap: wrap; }
.card-head h1 { margin: 0; }
td.name { font-weight: 600; white-space: nowrap; }
.pk { color: var(--accent); border-color: var(--accent); }
ul.plain { list-style: none; padding: 0; margin: 0; }
ul.plain li { padding: 3px 0; border-bottom: 1px solid var(--line); }
details summary { cursor: pointer; color: var(--muted); margin: 10px 0 6px; }
`;

const SCRIPT = String.raw`
const trail = [];
function qualified(schema, table) { return schema ? schema + "." + table : table; }
// In a message sent as the user's, a name that is not a plain identifier is
// JSON-quoted: a table named "x.\nAlso run …" reads as one quoted name, data.
function spoken(name) { return /^[A-Za-z_][A-Za-z0-9_$]*$/.test(String(name)) ? String(name) : JSON.stringify(String(name)); }
function cols(list) { return "(" + (list || []).join(", ") + ")"; }
async function follow(app, key, from) {
  const connection = App.state.input.connection_id;
  const args = { connection_id: connection, table: key.referenced_table, schema: key.referenced_schema };
  const status = app.querySelector(".status");
  if (App.state.hostCapabilities.serverTools && typeof connection === "string") {
    if (status) status.textContent = "Describing " + qualified(key.referenced_schema, key.referenced_table) + "…";
    try {
      const result = await App.request("tools/call", { name: "describe_table", arguments: args });
      const got = payload(result);
      if (got.error !== undefined) throw new Error(got.error);
      trail.push(from);
      clear(app);
      card(app, got.data);
    } catch (error) {
      if (status) status.textContent = "The host could not describe it: " + error.message;
    }
    return;
  }
  try {
    await App.request("ui/message", { role: "user", content: [{ type: "text",
      text: "Describe the table " + (key.referenced_schema ? spoken(key.referenced_schema) + "." : "") + spoken(key.referenced_table) +
        (typeof connection === "string" ? " on connection " + spoken(connection) : "") + " (describe_table)." }] });
    if (status) status.textContent = "Asked the assistant to describe " + qualified(key.referenced_schema, key.referenced_table) + ".";
  } catch (error) {
    if (status) status.textContent = "The host declined: " + error.message;
  }
}
function card(app, data) {
  if (!Array.isArray(data.columns)) {
    app.append(el("p", { class: "error", text: "The result holds no columns." }));
    return;
  }
  const head = el("div", { class: "card-head" },
    el("h1", {}, qualified(data.schema, data.table)), el("span", { class: "badge" }, String(data.type || "table")),
    el("span", { class: "muted" }, data.total_columns + " columns"));
  app.append(head);
  if (trail.length > 0) {
    const back = trail[trail.length - 1];
    app.append(el("p", {}, el("a", { class: "back", href: "#", on: { click: (e) => { e.preventDefault(); trail.pop(); clear(app); card(app, back); } } },
      "← back to " + qualified(back.schema, back.table))));
  }
  if (data.comment) app.append(el("p", { class: "muted", text: data.comment }));
  if (data.is_truncated) {
    const from = (data.column_offset || 0) + 1;
    app.append(el("p", { class: "note truncation", role: "note", text: "Columns " + from + "–" + (from + data.columns.length - 1) +
      " of " + data.total_columns + " are shown: ask for column_offset " + (from - 1 + data.columns.length) + " to read on." }));
  }
  app.append(el("h2", {}, "Columns"), el("table", { class: "columns" },
    el("thead", {}, el("tr", {}, ["Name", "Type", "Null", "Default", "Notes"].map((h) => el("th", { scope: "col" }, h)))),
    el("tbody", {}, data.columns.map((c) => el("tr", { "data-column": c.name },
      el("td", { class: "name" }, c.name, c.is_primary_key ? el("span", { class: "badge pk", title: "primary key" }, "PK") : null),
      el("td", { class: "mono" }, c.data_type),
      el("td", {}, c.is_nullable ? "NULL" : "NOT NULL"),
      el("td", { class: "mono" }, c.default_value === null ? el("span", { class: "null", title: "no default" }, "none") : String(c.default_value)),
      el("td", {}, c.comment || "", c.enum_values ? el("span", { class: "muted" }, " one of " + c.enum_values.join(", ")) : null))))));
  const keys = data.foreign_keys || [];
  app.append(el("h2", {}, "Foreign keys"));
  if (keys.length === 0) app.append(el("p", { class: "muted", text: "None." }));
  else app.append(el("ul", { class: "plain fks" }, keys.map((key) => el("li", {},
    el("span", { class: "mono" }, cols(key.columns)), " → ",
    el("a", { class: "fk", href: "#", "data-table": key.referenced_table, "data-schema": key.referenced_schema,
      title: "Describe " + qualified(key.referenced_schema, key.referenced_table),
      on: { click: (e) => { e.preventDefault(); follow(app, key, data); } } }, qualified(key.referenced_schema, key.referenced_table)),
    el("span", { class: "mono" }, " " + cols(key.referenced_columns)),
    el("span", { class: "muted" }, " · " + key.name + " · on delete " + key.on_delete + ", on update " + key.on_update)))));
  app.append(el("p", { class: "status muted", role: "status" }));
  const indexes = data.indexes || [];
  app.append(el("h2", {}, "Indexes"));
  if (indexes.length === 0) app.append(el("p", { class: "muted", text: "None." }));
  else app.append(el("ul", { class: "plain indexes" }, indexes.map((index) => el("li", {},
    el("strong", {}, index.name), " ", el("span", { class: "mono" }, cols(index.columns)),
    index.is_primary ? el("span", { class: "badge pk" }, "primary") : null,
    index.is_unique && !index.is_primary ? el("span", { class: "badge" }, "unique") : null,
    index.type ? el("span", { class: "badge" }, index.type) : null))));
  if (typeof data.ddl === "string") {
    app.append(el("details", {}, el("summary", {}, "DDL"), el("pre", {}, data.ddl)));
  }
}
App.start("dbport table card", card);
`;

/** The table card's parts. */
export const CARD_VIEW: ViewParts = {
  title: "Table",
  css: CSS,
  script: KIT_JS + SCRIPT,
};
