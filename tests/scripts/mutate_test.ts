/**
 * The mutation runner's mutant maker (scripts/mutate.ts): code positions
 * only, every operator family, a seeded sample.
 */
import { assertEquals } from "@std/assert";
import { alternatives, mutants, sample } from "../../scripts/mutate.ts";

const edits = (source: string) => mutants(source).map((m) => m.edit);

Deno.test("mutants() never edits comments, strings or template text: only the code's === and 1", () => {
  assertEquals(
    edits(
      'const a = "x === y && z"; // a < b || c\n/* 1 > 2 */ const t = `p < ${a === "q" ? 1 : 1}`;',
    ),
    ["=== → !==", "1 → 2", "1 → 0", "1 → 2", "1 → 0"],
  );
});

Deno.test("mutants() covers comparisons, logic, boolean returns and functions, lists, regex alternatives, numbers and !", () => {
  assertEquals(
    edits(
      "function f(x: number): boolean {\n  if (!(x < 2 && x >= 0)) return false;\n  return [3, 4].includes(x) || /ab|c/.test(String(x));\n}",
    ),
    [
      "{ if (!(x < 2 && x >= 0)) return false; return [3, 4].includes(… → { return true; }",
      "{ if (!(x < 2 && x >= 0)) return false; return [3, 4].includes(… → { return false; }",
      "! → ∅",
      "&& → ||",
      "< → <=",
      "2 → 3",
      "2 → 1",
      ">= → >",
      "0 → 1",
      "0 → (-1)",
      "false → true",
      "|| → &&",
      "3, → ∅",
      ", 4 → ∅",
      "3 → 4",
      "3 → 2",
      "4 → 5",
      "4 → 3",
      "ab| → ∅",
      "|c → ∅",
    ].map((edit) =>
      edit.startsWith("{") ? `f() body → ${edit.split(" → ")[1]}` : edit
    ),
  );
});

Deno.test("alternatives() respects groups, classes and escapes: /(?:a|b)[|]\\|c/ drops a or b only", () => {
  const literal = "/(?:a|b)[|]\\|c/";
  assertEquals(
    alternatives(literal).map(([from, to]) =>
      literal.slice(0, from) + literal.slice(to)
    ),
    ["/(?:b)[|]\\|c/", "/(?:a)[|]\\|c/"],
  );
});

Deno.test("sample() with the same seed picks the same mutants, in the order they were made, at most cap", () => {
  const all = mutants("const a = [1, 2, 3, 4, 5, 6, 7, 8];");
  const one = sample(all, 5, 34);
  assertEquals(one, sample(all, 5, 34));
  assertEquals(one.length, 5);
  const indexes = one.map((m) => all.indexOf(m));
  assertEquals(indexes, [...indexes].sort((a, b) => a - b));
});
