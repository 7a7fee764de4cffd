/**
 * A tool's answer is typed by its output schema: `run` must return what the
 * published schema describes. The `@ts-expect-error` lines are checked by
 * `deno task check`: if an answer that drifts from its schema (a field
 * renamed, a number sent as text, a required field left out, a value
 * outside an enum) stopped being an error, the check would fail.
 */

import { assertEquals } from "@std/assert";
import * as s from "../../lib/base/schema.ts";
import { defineTool } from "../../lib/features/tools/define.ts";
import { RESULT_SET_SCHEMA } from "../../lib/features/tools/statement.ts";
import { callContext, principalWith } from "../_fake_driver.ts";

const OUTPUT = s.object({
  total: s.integer({ minimum: 0 }),
  kind: s.enumOf(["table", "view"]),
  note: s.nullable(s.string()),
}, ["total", "kind", "note"]);

const ANNOTATIONS = {
  title: "Typed",
  readOnlyHint: true,
  destructiveHint: false,
  idempotentHint: true,
  openWorldHint: false,
};

/** A tool answering `answer` under `OUTPUT`. */
function toolAnswering(answer: s.Infer<typeof OUTPUT>) {
  return defineTool({
    name: "typed_result",
    description: "A tool whose answer is typed by its output schema.",
    arguments: { properties: {}, required: [] },
    outputSchema: OUTPUT,
    annotations: ANNOTATIONS,
    run: () => Promise.resolve(answer),
  });
}

/** A result set without its `is_truncated`. */
const NO_FLAG = {
  columns: [],
  rows: [],
  row_count: 0,
  rows_affected: 0,
  execution_time_ms: 0,
};

// Drifted answers, each refused by the compiler where `run` is declared.
const drifts = [
  defineTool({
    name: "drifted_text",
    description: "A number sent as text.",
    arguments: { properties: {}, required: [] },
    outputSchema: OUTPUT,
    annotations: ANNOTATIONS,
    // @ts-expect-error total is an integer, not text
    run: () => Promise.resolve({ total: "3", kind: "table", note: null }),
  }),
  defineTool({
    name: "drifted_enum",
    description: "A value outside the enum.",
    arguments: { properties: {}, required: [] },
    outputSchema: OUTPUT,
    annotations: ANNOTATIONS,
    // @ts-expect-error kind is "table" or "view"
    run: () => Promise.resolve({ total: 3, kind: "index", note: null }),
  }),
  defineTool({
    name: "drifted_name",
    description: "A field renamed.",
    arguments: { properties: {}, required: [] },
    outputSchema: OUTPUT,
    annotations: ANNOTATIONS,
    // @ts-expect-error total is required (here renamed count)
    run: () => Promise.resolve({ count: 3, kind: "table", note: null }),
  }),
  defineTool({
    name: "drifted_rows",
    description: "A result set without is_truncated.",
    arguments: { properties: {}, required: [] },
    outputSchema: RESULT_SET_SCHEMA,
    annotations: ANNOTATIONS,
    // @ts-expect-error is_truncated is required by the result set's schema
    run: () => Promise.resolve(NO_FLAG),
  }),
];

Deno.test("defineTool() answers the typed object as structuredContent and as its text", async () => {
  const answer = { total: 3, kind: "view" as const, note: null };
  const result = await toolAnswering(answer).call(
    {},
    callContext(principalWith(["tools:read"])),
  );
  assertEquals(result.structuredContent, answer);
  assertEquals(result.content, [{
    type: "text",
    text: JSON.stringify(answer),
  }]);
  // The drifted tools exist for the compiler; they publish as any other.
  assertEquals(drifts.map((tool) => tool.definition.outputSchema), [
    { type: "object", required: ["total", "kind", "note"] },
    { type: "object", required: ["total", "kind", "note"] },
    { type: "object", required: ["total", "kind", "note"] },
    {
      type: "object",
      required: [
        "columns",
        "rows",
        "row_count",
        "rows_affected",
        "execution_time_ms",
        "is_truncated",
      ],
    },
  ]);
});
