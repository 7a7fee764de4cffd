import { assertEquals } from "@std/assert";
import { rank } from "../../lib/features/completions.ts";

Deno.test("rank() puts prefix matches first, then substrings, each naturally sorted", () => {
  assertEquals(
    rank(
      ["orders", "Order_items", "reorders", "users", "order10", "order9"],
      "ORD",
    )
      .completion,
    {
      values: ["Order_items", "order9", "order10", "orders", "reorders"],
      total: 5,
      hasMore: false,
    },
  );
});

Deno.test("rank() keeps fixed choices in their declared order", () => {
  assertEquals(
    rank(["newcomer", "analyst", "engineer"], "", true).completion.values,
    ["newcomer", "analyst", "engineer"],
  );
  assertEquals(
    rank(["newcomer", "analyst", "engineer"], "e", true).completion.values,
    ["engineer", "newcomer"],
  );
});

Deno.test("rank() caps at 100 values with the total and hasMore", () => {
  const many = Array.from({ length: 250 }, (_, i) => `t${i}`);
  const { completion } = rank(many, "t");
  assertEquals(completion.values.length, 100);
  assertEquals(completion.values.slice(0, 3), ["t0", "t1", "t2"]);
  assertEquals(completion.total, 250);
  assertEquals(completion.hasMore, true);
  assertEquals(rank(["a", "a", "b"], "").completion, {
    values: ["a", "b"],
    total: 2,
    hasMore: false,
  });
});
