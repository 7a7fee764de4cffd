/**
 * The one table of the console's pages (pages/table.tsx): a header per
 * column, a row per item with its own attributes, a stacked table's cells
 * labelled for narrow screens, every value escaped, and the empty text in
 * its place when there is no row.
 */

import { assert, assertEquals } from "@std/assert";
import { Older, Table } from "../../lib/console/pages/table.tsx";

const ROWS = [
  { id: 7, name: "<b>orders</b>", ms: 12 },
  { id: 8, name: "users", ms: 3 },
];

Deno.test("<Table stack> labels each cell with its column and escapes values", async () => {
  const html = await (
    <Table
      stack
      id="t"
      rows={ROWS}
      row={(row) => ({ "data-row": String(row.id) })}
      columns={[
        { label: "Name", cell: (row) => row.name },
        {
          label: "ms",
          class: (row) => row.ms > 10 ? "num slow" : "num",
          attrs: { "data-ms": true },
          cell: (row) => row.ms,
        },
        { label: "", cell: () => "x" },
      ]}
    />
  ).toString();
  assertEquals(
    html,
    '<table class="stack" id="t"><thead><tr><th>Name</th><th>ms</th><th></th></tr></thead><tbody>' +
      '<tr data-row="7"><td data-label="Name">&lt;b&gt;orders&lt;/b&gt;</td><td data-label="ms" class="num slow" data-ms="true">12</td><td>x</td></tr>' +
      '<tr data-row="8"><td data-label="Name">users</td><td data-label="ms" class="num" data-ms="true">3</td><td>x</td></tr>' +
      "</tbody></table>",
  );
});

Deno.test("<Table> without stack has no labels; its header may be more than its label", async () => {
  const html = await (
    <Table
      class="grid"
      rows={ROWS}
      columns={[{
        label: "name",
        head: (
          <>
            name<span class="type">text</span>
          </>
        ),
        headClass: "num",
        cell: (row) => row.name,
      }]}
    />
  ).toString();
  assert(html.startsWith('<table class="grid"><thead>'), html);
  assert(
    html.includes('<th class="num">name<span class="type">text</span></th>'),
    html,
  );
  assert(!html.includes("data-label"), html);
});

Deno.test("<Table> shows its empty text instead of a table with no rows; Older links only when there is more", async () => {
  const empty = await (
    <Table
      rows={[]}
      columns={[{ label: "Name", cell: () => "" }]}
      empty={<p class="empty">Nothing.</p>}
    />
  ).toString();
  assertEquals(empty, '<p class="empty">Nothing.</p>');
  const bare = await (
    <Table rows={[]} columns={[{ label: "Name", cell: () => "" }]} />
  ).toString();
  assert(bare.startsWith("<table><thead><tr><th>Name</th>"), bare);
  assertEquals(String(<Older href={null} />), "");
  assertEquals(
    String(<Older href="/c/x/activity?before=3" />),
    '<p class="pager"><a href="/c/x/activity?before=3" id="older">Older</a></p>',
  );
});
