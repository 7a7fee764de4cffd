import { assert, assertEquals, assertThrows } from "@std/assert";
import { checkArguments } from "../../lib/features/tools/arguments.ts";
import { PARAMS } from "../../lib/features/tools/bind.ts";
import { WireError } from "../../lib/protocol/errors.ts";

const SPEC = {
  properties: {
    query: { type: "string" as const, description: "sql" },
    params: PARAMS,
  },
  required: ["query"],
};

Deno.test("checkArguments() answers deeply nested params with -32602 naming the argument", () => {
  let deep: unknown = [];
  for (let i = 0; i < 1_000_000; i++) deep = [deep];
  const error = assertThrows(
    () =>
      checkArguments("execute_query", SPEC, {
        query: "select 1",
        params: [deep],
      }),
    WireError,
  );
  assertEquals(error.code, -32602);
  assertEquals(error.data, { argument: "params" });
  assert(error.message.length < 500, `${error.message.length} characters`);
});
