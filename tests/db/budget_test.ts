import { assertEquals } from "@std/assert";
import {
  Budget,
  cellSize,
  CutCell,
  cutText,
  cutUtf8,
  decodeHead,
  shrinkCell,
} from "../../lib/db/budget.ts";

const encode = (text: string) => new TextEncoder().encode(text);

Deno.test("cutUtf8() cuts as cutText() cuts the decoded text, multibyte included", () => {
  const texts = [
    "x".repeat(50),
    "é".repeat(50),
    "日本".repeat(30),
    // A surrogate pair straddles the cut at 20 units: it is kept out whole.
    "a" + "😀".repeat(40),
    "😀".repeat(40),
    "ab€😀ç".repeat(20),
  ];
  for (const text of texts) {
    const cut = cutUtf8(encode(text), 20);
    assertEquals(cut?.text, cutText(text, 20), text.slice(0, 12));
  }
});

Deno.test("decodeHead() decodes up to the first character past the cap, never a longer head", () => {
  assertEquals(decodeHead(encode("x".repeat(100)), 20), "x".repeat(20));
  assertEquals(decodeHead(encode("é".repeat(100)), 20), "é".repeat(20));
  // A pair that straddles the cap is kept whole (cutText() leaves it out).
  assertEquals(
    decodeHead(encode("a" + "😀".repeat(40)), 20),
    "a" + "😀".repeat(10),
  );
  assertEquals(decodeHead(encode("ab"), 20), "ab");
  // A head whose last character is cut off mid-sequence (a held head).
  assertEquals(decodeHead(encode("日本").subarray(0, 4), 20), "日\uFFFD");
});

Deno.test("cutUtf8() leaves a value within the cap to be decoded as usual", () => {
  assertEquals(cutUtf8(encode("x".repeat(20)), 20), null);
  // 20 characters in 40 bytes: over the cap in bytes, not in characters.
  assertEquals(cutUtf8(encode("é".repeat(20)), 20), null);
  assertEquals(cutUtf8(encode("😀".repeat(10)), 20), null);
});

Deno.test("Budget.add() counts a CutCell as a cut cell and keeps its text", () => {
  const budget = new Budget({ maxRows: 10, maxBytes: 10_000, maxCellChars: 5 });
  const cut = cutUtf8(encode("abcdefgh"), 5)!;
  assertEquals(budget.add([cut, "abcdefgh", 7]), true);
  assertEquals(budget.rows, [[
    "abcde…[cut: 3 more characters]",
    "abcde…[cut: 3 more characters]",
    7,
  ]]);
  assertEquals(budget.truncation.cells, 2);
  assertEquals(cut instanceof CutCell, true);
});

Deno.test("Budget.add() keeps the first row whatever its size, then stops at the byte budget", () => {
  const budget = new Budget({ maxRows: 10, maxBytes: 40, maxCellChars: 100 });
  assertEquals(budget.add(["y".repeat(60)]), true);
  assertEquals(budget.add(["z"]), false);
  assertEquals(budget.rows.length, 1);
  assertEquals(budget.truncation, { rows: false, bytes: true, cells: 0 });
});

Deno.test("Budget.add() stops at the row past maxRows and says so", () => {
  const budget = new Budget({ maxRows: 2, maxBytes: 1_000, maxCellChars: 10 });
  assertEquals(budget.add([1]), true);
  assertEquals(budget.add([2]), true);
  assertEquals(budget.add([3]), false);
  assertEquals(budget.rows, [[1], [2]]);
  assertEquals(budget.truncation.rows, true);
});

// Exact edges of the first-row accounting (issue 34 mutation survivors).
const limits = (maxRows: number, maxBytes: number, maxCellChars = 1_000) =>
  new Budget({ maxRows, maxBytes, maxCellChars });

Deno.test("Budget.shrinks(): only the first row, and only when it is past the budget (2 + size > maxBytes)", () => {
  const b = limits(10, 100);
  assertEquals(b.shrinks(98), false); // 2 + 98 = 100 fits exactly
  assertEquals(b.shrinks(99), true);
  assertEquals(b.shrinks(1), false);
  assertEquals(b.add([1]), true);
  // A second row is refused, never shrunk, however large.
  assertEquals(b.shrinks(1), false);
  assertEquals(b.shrinks(1_000), false);
});

Deno.test("Budget.share(): (maxBytes - 2) / cells - 48, never below 100", () => {
  assertEquals(limits(10, 1_002).share(1), 952);
  assertEquals(limits(10, 1_002).share(2), 452);
  assertEquals(limits(10, 1_002).share(3), 285); // floor(1000 / 3) - 48
  // (200 - 2) - 48 = 150 would do; 100 - 2 - 48 = 50 is lifted to 100.
  assertEquals(limits(10, 200).share(1), 150);
  assertEquals(limits(10, 100).share(1), 100);
  assertEquals(limits(10, 100).share(50), 100);
});

Deno.test("Budget.refuses(): the row at maxRows is refused (maxRows 1 with one kept refuses a 0-byte row)", () => {
  const b = limits(1, 1_000);
  assertEquals(b.refuses(0), false);
  assertEquals(b.add([1]), true);
  assertEquals(b.refuses(0), true);
  const two = limits(2, 30);
  assertEquals(two.add([1]), true); // 2 + 16 = 18 bytes
  assertEquals(two.refuses(12), false); // 18 + 12 = 30 fits
  assertEquals(two.refuses(13), true);
});

Deno.test("Budget.add() of a first row too large counts its shrunk size: 3 + each cell's JSON + 1", () => {
  // share(1) = 200 - 2 - 48 = 150: the cell is cut to 150 characters.
  const b = limits(10, 200);
  assertEquals(b.add(["x".repeat(500)]), true);
  const cell = cutText("x".repeat(500), 150);
  assertEquals(b.rows, [[cell]]);
  assertEquals(b.truncation.cells, 1);
  assertEquals(b.left, 200 - 2 - (3 + cell.length + 2 + 1));
  assertEquals(b.left, 15);
  // Two cells: share(2) = floor(198 / 2) - 48 = 51, lifted to 100.
  const two = limits(10, 200);
  assertEquals(two.add(["y".repeat(300), "z".repeat(300)]), true);
  const y = cutText("y".repeat(300), 100);
  const z = cutText("z".repeat(300), 100);
  assertEquals(two.rows, [[y, z]]);
  assertEquals(two.left, 200 - 2 - (3 + y.length + 3 + z.length + 3));
});

Deno.test("shrinkCell() of escaped text shrinks its keep to floor(keep * share / size) - 1 until it fits", () => {
  // 150 quotes are 300 bytes of JSON: 150 * 150 / 329 = 68.4, so 67 kept.
  const quotes = '"'.repeat(1_000);
  assertEquals(shrinkCell(quotes, 150), {
    cell: cutText(quotes, 67),
    cut: true,
  });
  // \u0001 takes 6 bytes: 10 * 10 / 89 = 1.1, minus 1 is 0, lifted to 1.
  const controls = "\u0001".repeat(1_000);
  assertEquals(shrinkCell(controls, 10), {
    cell: cutText(controls, 1),
    cut: true,
  });
  // A text within its share is kept; one cut already is not counted again.
  assertEquals(shrinkCell("abc", 5), { cell: "abc", cut: false });
  const already = cutText("q".repeat(500), 300);
  assertEquals(shrinkCell(already, 150), {
    cell: cutText(already, 150),
    cut: false,
  });
});

Deno.test("cutUtf8() counts a 3-byte character led by 0xEF (U+FF21) as one unit, like any below 0xF0", () => {
  // "Ａ" is EF BC A1: 15 of them are 45 bytes but 15 units.
  assertEquals(cutUtf8(encode("Ａ".repeat(15)), 20), null);
  assertEquals(
    cutUtf8(encode("Ａ".repeat(30)), 20)?.text,
    "Ａ".repeat(20) + "…[cut: 10 more characters]",
  );
  assertEquals(decodeHead(encode("Ａ".repeat(30)), 20), "Ａ".repeat(20));
});

Deno.test("Budget.refuses() never refuses the first row for its size (it is shrunk instead)", () => {
  const b = limits(10, 100);
  assertEquals(b.refuses(1_000), false);
  assertEquals(b.shrinks(1_000), true);
});

Deno.test("Budget.add() of a row a streamed reader shrank: kept, its cut cells counted, its size 3 + each cell's JSON + 1", () => {
  const b = limits(10, 100);
  assertEquals(b.add(["abc", 7], { shrunk: 2 }), true);
  assertEquals(b.rows, [["abc", 7]]);
  assertEquals(b.truncation, { rows: false, bytes: false, cells: 2 });
  assertEquals(b.left, 100 - 2 - (3 + 6 + 13));
});

Deno.test("Budget.add() keeps a later row that fits whole, even with a cell larger than a first row's share", () => {
  // After [1] (18 bytes) 982 are left; share(1) would be 934, and the
  // 950-character cell (952 bytes of JSON, a 956-byte row) fits as it is.
  const b = limits(10, 1_000);
  assertEquals(b.add([1]), true);
  const cell = "x".repeat(950);
  assertEquals(b.add([cell]), true);
  assertEquals(b.rows, [[1], [cell]]);
  assertEquals(b.truncation.cells, 0);
  assertEquals(b.left, 1_000 - 18 - 956);
});

Deno.test("shrinkCell() keeps a first cut of exactly share + 48 bytes of JSON, cuts again at share + 49", () => {
  // 19 quotes: 150 kept are 2 + 19 * 2 + 131 + 27 (the marker) = 198.
  const at48 = '"'.repeat(19) + "a".repeat(1_000);
  assertEquals(JSON.stringify(cutText(at48, 150)).length, 198);
  assertEquals(shrinkCell(at48, 150), { cell: cutText(at48, 150), cut: true });
  // 20 quotes: 199, so floor(150 * 150 / 199) - 1 = 112 are kept.
  const at49 = '"'.repeat(20) + "a".repeat(1_000);
  assertEquals(JSON.stringify(cutText(at49, 150)).length, 199);
  assertEquals(shrinkCell(at49, 150), { cell: cutText(at49, 112), cut: true });
});

Deno.test("cellSize(): a cell's JSON size plus 1 for its comma; a CutCell's text counted", () => {
  assertEquals(cellSize("abc"), 6);
  assertEquals(cellSize(new CutCell("ab")), 5);
  assertEquals(cellSize(7), 13);
  assertEquals(cellSize(null), 5);
  assertEquals(cellSize('a"b'), 7);
});

Deno.test("Budget.add() refuses a later row too large as it is: no cell of it shrunk or counted", () => {
  const b = limits(10, 200);
  assertEquals(b.add([1]), true);
  const row = ["x".repeat(500)];
  assertEquals(b.add(row), false);
  assertEquals(row, ["x".repeat(500)]);
  assertEquals(b.truncation, { rows: false, bytes: true, cells: 0 });
});

Deno.test("Budget.add() keeps whole a first row that fills the budget exactly (2 + 3 + 994 + 1 = 1,000 bytes)", () => {
  const b = limits(10, 1_000);
  const cell = "x".repeat(992);
  assertEquals(b.add([cell]), true);
  assertEquals(b.rows, [[cell]]);
  assertEquals(b.truncation.cells, 0);
  assertEquals(b.left, 0);
});

Deno.test("Budget.nextBatch() divides 8 MiB by the exact average: one raw row of 4 MiB + 1 byte gives batches of 1", () => {
  const b = limits(100, 1_000);
  b.sawRaw(4_194_305);
  assertEquals(b.nextBatch(100), 1);
  const even = limits(100, 1_000);
  even.sawRaw(4_194_304);
  assertEquals(even.nextBatch(100), 2);
});
