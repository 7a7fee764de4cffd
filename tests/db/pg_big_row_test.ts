/**
 * A DataRow too large to hold, read as it streams (lib/db/postgres/pg_big_row.ts):
 * the same cells whatever the chunks it arrives in, long texts cut to their
 * head, a row the answer has no room for read past, a value larger than
 * what is left of the answer abandoned with its head.
 */

import { assert, assertEquals } from "@std/assert";
import { Buffer } from "node:buffer";
import {
  BigRow,
  type RowBudget,
  type RowColumn,
} from "../../lib/db/postgres/pg_big_row.ts";
import { Budget, capCell, CutCell } from "../../lib/db/budget.ts";
import { cellAt } from "../../lib/db/postgres/pg_values.ts";

const TEXT: RowColumn = { name: "t", type: 25, array: false, verbatim: true };
const INT: RowColumn = { name: "i", type: 23, array: false, verbatim: false };
const BYTEA: RowColumn = {
  name: "b",
  type: 17,
  array: false,
  verbatim: false,
};
const INTS: RowColumn = { name: "a", type: 1007, array: true, verbatim: false };

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
  options: {
    keep?: boolean;
    max?: number;
    left?: number;
    refuses?: (size: number) => boolean;
    budget?: RowBudget;
  } = {},
): BigRow {
  return new BigRow({
    keep: options.keep ?? true,
    columns,
    maxCellChars: options.max ?? 10,
    budget: options.budget ?? {
      left: options.left ?? 1e12,
      refuses: (size) => options.refuses?.(size) ?? false,
      shrinks: () => false,
      share: () => 100,
    },
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

/** What the whole value's cell is once the answer cuts it (`Budget.cut`). */
function wholeCell(value: string, column: RowColumn, max: number) {
  const bytes = Buffer.from(value);
  return show([
    capCell(cellAt(bytes, 0, bytes.length, column.type, column.array), max),
  ])[0];
}

Deno.test("BigRow: a bytea's cell is its whole value's, cut, in any chunking, from its hex head alone", () => {
  for (const size of [0, 1, 2, 3, 7, 8, 9, 10, 76, 200, 5000]) {
    const data = Buffer.alloc(size);
    for (let i = 0; i < size; i++) data[i] = (i * 37 + 11) % 256;
    const hex = "\\x" + data.toString("hex");
    for (const max of [10, 11, 12, 13, 101, 10_000]) {
      const body = dataRow([hex, "7"]);
      for (const chunk of [1, 3, 64, body.length]) {
        const row = bigRow([BYTEA, INT], { max });
        assertEquals(feed(row, body, chunk), null);
        assertEquals(
          show(row.cells),
          [wholeCell(hex, BYTEA, max), 7],
          `${size} bytes, max ${max}, chunks of ${chunk}`,
        );
      }
    }
  }
});

Deno.test("BigRow: a bytea in the escape format (old settings) is held whole, as before", () => {
  const escaped = "ab\\\\c\\001".repeat(20);
  const body = dataRow([escaped]);
  for (const chunk of [1, 2, 5, body.length]) {
    const row = bigRow([BYTEA], { max: 10 });
    assertEquals(feed(row, body, chunk), null);
    assertEquals(show(row.cells), [wholeCell(escaped, BYTEA, 10)]);
  }
});

Deno.test("BigRow: each value is cut to the cap as it ends, arrays and texts as the answer cuts them", () => {
  const array = `{${Array.from({ length: 40 }, (_, i) => i).join(",")}}`;
  const text = "é".repeat(30);
  const body = dataRow([array, text, "{1,NULL}"]);
  const row = bigRow([INTS, TEXT, INTS], { max: 12 });
  assertEquals(feed(row, body, 5), null);
  assertEquals(show(row.cells), [
    wholeCell(array, INTS, 12),
    wholeCell(text, TEXT, 12),
    [1, null],
  ]);
});

Deno.test("BigRow: once the answer refuses the row, later values are only counted: cut or not", () => {
  const sizes: number[] = [];
  const long = "x".repeat(500);
  const hex = "\\x" + "ab".repeat(400);
  const body = dataRow([
    long,
    "short",
    long,
    hex,
    "\\x00",
    "{1,2,3,4,5,6,7,8}",
  ]);
  for (const chunk of [1, 9, body.length]) {
    sizes.length = 0;
    const row = bigRow([TEXT, TEXT, TEXT, BYTEA, BYTEA, INTS], {
      max: 12,
      // Refused once its cells so far pass 50 bytes.
      refuses: (size) => (sizes.push(size), size > 50),
    });
    assertEquals(feed(row, body, chunk), null);
    assertEquals(row.refused, true);
    assertEquals(show(row.cells), [
      wholeCell(long, TEXT, 12),
      "short",
      "cut:",
      "cut:",
      null,
      "cut:",
    ]);
    // 3, then the cut text's JSON (12 + 27 + 2) + 1, then "short"'s 7 + 1.
    assertEquals(sizes, [3, 45, 53]);
  }
});

Deno.test("BigRow: a first row too large for the answer is cut to its shares as it streams, as the answer cuts it whole", () => {
  const long = "é".repeat(3000) + "…[cut: " + "x".repeat(500);
  const hex = "\\x" + "0a1b2c".repeat(3000);
  // A text that shows a cut marker of its own, under the cap: counted.
  const marked = "ab…[cut: zz" + "y".repeat(300);
  const values = [long, "short", hex, "{1,2,3,4,5,6,7,8}", null, marked];
  const columns = [TEXT, TEXT, BYTEA, INTS, TEXT, TEXT];
  const limits = { maxRows: 10, maxBytes: 1_000, maxCellChars: 2_000 };
  // The answer of the row read whole (pg_read.ts `#dataRow`).
  const whole = new Budget(limits);
  const body = dataRow(values);
  whole.add(values.map((value, i) => {
    if (value === null) return null;
    const bytes = Buffer.from(value);
    const cell = cellAt(bytes, 0, bytes.length, columns[i]!.type, false);
    return capCell(cell, limits.maxCellChars);
  }));
  for (const chunk of [1, 13, body.length]) {
    const budget = new Budget(limits);
    const row = bigRow(columns, { max: limits.maxCellChars, budget });
    assertEquals(feed(row, body, chunk), null);
    assertEquals(row.state !== undefined && "shrunk" in row.state, true);
    budget.add(row.cells, row.state);
    assertEquals(
      { rows: budget.rows, truncation: budget.truncation, left: budget.left },
      { rows: whole.rows, truncation: whole.truncation, left: whole.left },
      `chunks of ${chunk}`,
    );
  }
});
