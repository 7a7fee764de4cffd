/**
 * A DataRow too large to hold, read as it streams (lib/db/postgres/pg_big_row.ts):
 * the same cells whatever the chunks it arrives in, long texts cut to their
 * head, a row the answer has no room for read past, a value larger than
 * what is left of the answer abandoned with its head.
 */

import { assert, assertEquals } from "@std/assert";
import { Buffer } from "node:buffer";
import { BigRow, type RowColumn } from "../../lib/db/postgres/pg_big_row.ts";
import { CutCell } from "../../lib/db/budget.ts";
import { cellAt } from "../../lib/db/postgres/pg_values.ts";

const TEXT: RowColumn = { name: "t", type: 25, array: false, verbatim: true };
const INT: RowColumn = { name: "i", type: 23, array: false, verbatim: false };

/** A DataRow's body: the column count, then each value (null: -1). */
function dataRow(values: (string | Uint8Array | null)[]): Buffer {
  const parts: Buffer[] = [Buffer.alloc(2)];
  parts[0]!.writeInt16BE(values.length);
  for (const value of values) {
    const length = Buffer.alloc(4);
    if (value === null) {
      length.writeInt32BE(-1);
      parts.push(length);
      continue;
    }
    const bytes = Buffer.from(value);
    length.writeInt32BE(bytes.length);
    parts.push(length, bytes);
  }
  return Buffer.concat(parts);
}

function bigRow(
  columns: RowColumn[],
  options: { keep?: boolean; max?: number; left?: number } = {},
): BigRow {
  return new BigRow({
    keep: options.keep ?? true,
    columns,
    maxCellChars: options.max ?? 10,
    left: () => options.left ?? 1e12,
    cellAt: (bytes, start, end, column) =>
      cellAt(bytes, start, end, column.type, column.array),
  });
}

/** Feed `body` in chunks of `size` bytes; the chunk index where it stopped. */
function feed(row: BigRow, body: Buffer, size: number): number | null {
  for (let at = 0, i = 0; at < body.length; at += size, i++) {
    if (row.bytes(body, at, Math.min(at + size, body.length))) return i;
  }
  return null;
}

const show = (cells: unknown[]) =>
  cells.map((cell) => cell instanceof CutCell ? `cut:${cell.text}` : cell);

Deno.test("BigRow: the same cells in any chunking — values, NULLs, an empty text, a cut text", () => {
  const long = "é".repeat(50) + "tail";
  const body = dataRow(["42", null, "", "short", long]);
  const columns = [INT, TEXT, TEXT, TEXT, TEXT];
  for (const size of [1, 2, 3, 5, 7, 64, body.length]) {
    const row = bigRow(columns);
    assertEquals(feed(row, body, size), null, `chunks of ${size}`);
    const cells = show(row.cells);
    assertEquals(cells.slice(0, 4), [42, null, "", "short"], `size ${size}`);
    const cut = String(cells[4]);
    assert(cut.startsWith(`cut:${"é".repeat(10)}`), `${size}: ${cut}`);
    assert(!cut.includes("tail"), `${size}: the tail is not kept`);
    assert(
      cut.endsWith("[cut: 44 more characters]"),
      `${size}: the cut counts what was left out: ${cut}`,
    );
    assertEquals(row.size, body.length - 2 - 5 * 4, "the values' bytes");
  }
});

Deno.test("BigRow: a row the answer has no room for is read past, counted, no cell kept", () => {
  const body = dataRow(["x".repeat(1000), null, "y"]);
  const row = bigRow([TEXT, TEXT, TEXT], { keep: false });
  assertEquals(feed(row, body, 7), null);
  assertEquals(row.cells, []);
  assertEquals(row.size, 1001);
});

Deno.test("BigRow: a value past what is left of the answer (and over 8 MiB) is abandoned with its head, the rest not read", () => {
  const huge = 9 * 1024 * 1024;
  const head = Buffer.alloc(4 + 2 + 4 + 2 + 4);
  head.writeInt16BE(3, 0);
  head.writeInt32BE(2, 2);
  head.write("ok", 6);
  head.writeInt32BE(huge, 8);
  const text = Buffer.from("abcdefghijklmnopqrstuvwxyz".repeat(4));
  const row = bigRow([TEXT, TEXT, TEXT], { left: 1000, max: 5 });
  // The head is read; the statement is stopped once the cell's head is held.
  assertEquals(row.bytes(head, 0, 12), false);
  assertEquals(row.bytes(text, 0, text.length), true, "abandoned");
  const cells = show(row.cells);
  assertEquals(cells[0], "ok");
  assert(
    String(cells[1]).startsWith("cut:abcde…[cut: a value of 9,437,184 bytes"),
    String(cells[1]),
  );
  assertEquals(cells[2], "cut:…[not read: the statement was stopped]");
  assertEquals(row.cells.length, 3);
});

Deno.test("BigRow: a huge value of a column that is not text is abandoned at its length", () => {
  const body = Buffer.alloc(2 + 4);
  body.writeInt16BE(2, 0);
  body.writeInt32BE(9 * 1024 * 1024, 2);
  const row = bigRow([INT, INT], { left: 10 });
  assertEquals(row.bytes(body, 0, body.length), true);
  assertEquals(show(row.cells), [
    "cut:…[cut: a value of 9,437,184 bytes, larger than what was left of the answer; the statement was stopped]",
    "cut:…[not read: the statement was stopped]",
  ]);
});

Deno.test("BigRow: a value under 8 MiB is held whole though the answer's budget is spent", () => {
  const value = "z".repeat(300);
  const row = bigRow([TEXT], { left: 0, max: 1000 });
  assertEquals(feed(row, dataRow([value]), 11), null);
  assertEquals(row.cells, [value]);
});
