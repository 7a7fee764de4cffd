import { assertEquals } from "@std/assert";
import {
  Budget,
  CutCell,
  cutText,
  cutUtf8,
  decodeHead,
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
