/**
 * The answer budget's exact accounting and its state after a refusal
 * (issue 34): bytes per cell kind, the row and byte edges, batch sizing and
 * the cutting of cells at surrogate pairs.
 */
import { assertEquals } from "@std/assert";
import { Budget, cutText, cutUtf8 } from "../../lib/db/budget.ts";
import type { Cell } from "../../lib/db/types.ts";

const encode = (text: string) => new TextEncoder().encode(text);
const budget = (maxRows: number, maxBytes: number, maxCellChars = 100) =>
  new Budget({ maxRows, maxBytes, maxCellChars });

/** How many copies of `row` a budget of `maxBytes` keeps. */
function kept(row: Cell[], maxBytes: number): number {
  const b = budget(100, maxBytes);
  while (b.add([...row]));
  return b.rows.length;
}

// The rows' JSON text starts at 2 bytes ("[]"); a row costs 3 plus each
// cell's size plus 1: a string its length + 2, a number 12, a boolean 5,
// null 4, anything else its JSON text.
for (
  const [row, size] of [
    [["abc"], 9],
    [[7], 16],
    [[true], 9],
    [[null], 8],
    [[[1, 2]], 9],
    [["abc", null], 14],
  ] as [Cell[], number][]
) {
  Deno.test(`Budget.add(${JSON.stringify(row)}) costs ${size} bytes: two rows fit in ${2 + 2 * size}, not in ${1 + 2 * size}`, () => {
    assertEquals(kept(row, 2 + 2 * size), 2);
    assertEquals(kept(row, 1 + 2 * size), 1);
  });
}

Deno.test("Budget after a byte refusal: closed, keeps its rows, refuses even a tiny row, truncation.bytes only", () => {
  const b = budget(10, 20);
  assertEquals(b.open, true);
  assertEquals(b.add(["a".repeat(30)]), true);
  assertEquals(b.add(["b".repeat(30)]), false);
  assertEquals(b.open, false);
  assertEquals(b.add([]), false);
  assertEquals(b.rows, [["a".repeat(30)]]);
  assertEquals(b.truncation, { rows: false, bytes: true, cells: 0 });
});

Deno.test("Budget after a row refusal: closed, keeps exactly maxRows rows, truncation.rows only, no cell counted for the refused row", () => {
  const b = budget(1, 1_000, 2);
  assertEquals(b.add(["ab"]), true);
  assertEquals(b.add(["abcdef"]), false);
  assertEquals(b.open, false);
  assertEquals(b.add(["x"]), false);
  assertEquals(b.rows, [["ab"]]);
  assertEquals(b.truncation, { rows: true, bytes: false, cells: 0 });
});

Deno.test("Budget with maxRows 0 refuses the first row and says rows were left out", () => {
  const b = budget(0, 1_000);
  assertEquals(b.add([1]), false);
  assertEquals(b.rows, []);
  assertEquals(b.truncation.rows, true);
});

Deno.test("Budget.cut() keeps a string or object of exactly maxCellChars, cuts one more and counts it", () => {
  const b = budget(10, 1_000, 5);
  assertEquals(b.cut("abcde"), "abcde");
  assertEquals(b.cut([1, 2]), [1, 2]); // "[1,2]" is 5 characters
  assertEquals(b.truncation.cells, 0);
  assertEquals(b.cut("abcdef"), "abcde…[cut: 1 more characters]");
  assertEquals(b.cut([1, 2, 3]), "[1,2,…[cut: 2 more characters]");
  assertEquals(b.truncation.cells, 2);
  assertEquals(b.cut(null), null);
  assertEquals(b.cut(123456789), 123456789);
  assertEquals(b.truncation.cells, 2);
});

Deno.test("Budget.nextBatch() on a fresh budget: maxRows + 1, capped by most, at least 1", () => {
  assertEquals(budget(10, 1_000).nextBatch(100), 11);
  assertEquals(budget(10, 1_000).nextBatch(5), 5);
  assertEquals(budget(10, 1_000).nextBatch(0), 1);
  assertEquals(budget(10_000_000, 1_000).nextBatch(10_000_000), 8_388_608);
});

Deno.test("Budget.nextBatch() sizes batches to about 8 MiB of the raw rows seen: 1 MiB rows → 8, 932 500-byte rows → 8, 20 MiB rows → 1", () => {
  const mib = budget(100, 1_000);
  mib.sawRaw(1_048_576);
  assertEquals(mib.nextBatch(100), 8);
  const under = budget(100, 1_000);
  under.sawRaw(932_500);
  assertEquals(under.nextBatch(100), 8);
  const huge = budget(100, 1_000);
  huge.sawRaw(20 * 1_048_576);
  assertEquals(huge.nextBatch(100), 1);
  const tiny = budget(10_000_000, 1_000);
  tiny.sawRaw(0);
  tiny.sawRaw(1);
  assertEquals(tiny.nextBatch(10_000_000), 8_388_608);
});

Deno.test("Budget.nextBatch() counts the rows already kept: maxRows 3 with 2 kept wants 2", () => {
  const b = budget(3, 1_000);
  b.add([1]);
  b.add([2]);
  assertEquals(b.nextBatch(100), 2);
});

Deno.test("cutText() keeps a surrogate pair out whole at 0xD800 and 0xDBFF, not at 0xD7FF or 0xDC00", () => {
  assertEquals(cutText("a\ud800\udc00b", 2), "a…[cut: 3 more characters]");
  assertEquals(cutText("a\udbff\udfffb", 2), "a…[cut: 3 more characters]");
  assertEquals(cutText("a\ud7ffbc", 2), "a\ud7ff…[cut: 2 more characters]");
  assertEquals(cutText("a\udc00bc", 2), "a\udc00…[cut: 2 more characters]");
  assertEquals(
    cutText("x".repeat(1_236), 2),
    "xx…[cut: 1,234 more characters]",
  );
});

Deno.test("cutUtf8() counts a 4-byte character as 2 units: 😀😀 (4 units) over 3 is cut to 😀", () => {
  assertEquals(cutUtf8(encode("😀😀"), 3)?.text, "😀…[cut: 2 more characters]");
  assertEquals(cutUtf8(encode("😀😀"), 4), null);
});

Deno.test("cutUtf8() leaves 3 two-byte characters under a cap of 3, cuts 4 of them", () => {
  assertEquals(cutUtf8(encode("ééé"), 3), null);
  assertEquals(
    cutUtf8(encode("éééé"), 3)?.text,
    "ééé…[cut: 1 more characters]",
  );
  assertEquals(
    cutUtf8(encode("abcd"), 3)?.text,
    "abc…[cut: 1 more characters]",
  );
});
