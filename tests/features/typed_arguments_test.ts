/**
 * Tool and prompt arguments are typed from their specs: a handler reads
 * `args.connection_id` as a string and `args.max_rows` as a number or
 * absent, with no coercion and no assertion. The `@ts-expect-error` lines
 * are checked by `deno task check`: if a spec stopped typing its handler's
 * arguments, they would no longer be errors, and the check would fail.
 */

import { assertEquals } from "@std/assert";
import { defineTool } from "../../lib/features/tools/define.ts";
import { CONNECTION_ID } from "../../lib/features/tools/shared.ts";
import { callContext, principalWith } from "../_fake_driver.ts";

const seen: unknown[] = [];

const tool = defineTool({
  name: "typed",
  description: "A tool whose handler reads typed arguments.",
  outputSchema: { type: "object" },
  annotations: {
    title: "Typed",
    readOnlyHint: true,
    destructiveHint: false,
    idempotentHint: true,
    openWorldHint: false,
  },
  arguments: {
    properties: {
      connection_id: CONNECTION_ID,
      max_rows: { type: "integer", description: "Rows.", minimum: 1 },
      verbose: { type: "boolean", description: "More." },
    },
    required: ["connection_id"],
  },
  run(args) {
    const id: string = args.connection_id;
    const rows: number | undefined = args.max_rows;
    const verbose: boolean | undefined = args.verbose;
    // @ts-expect-error an optional argument may be absent
    const must: number = args.max_rows;
    // @ts-expect-error a string argument is no number
    const wrong: number = args.connection_id;
    // @ts-expect-error an undeclared argument does not exist
    void args.other;
    seen.push(id, rows, verbose, must, wrong);
    return Promise.resolve({});
  },
});

Deno.test("defineTool() hands run() the checked values as declared", async () => {
  seen.length = 0;
  await tool.call(
    { connection_id: "c", max_rows: 3 },
    callContext(principalWith(["tools:read"])),
  );
  assertEquals(seen, ["c", 3, undefined, 3, "c"]);
});
