import { assertEquals, assertThrows } from "@std/assert";
import { checkArguments } from "../../lib/features/tools/arguments.ts";
import { WireError } from "../../lib/protocol/errors.ts";

const SPEC = {
  properties: {
    connection_id: { type: "string" as const, description: "id" },
    max_rows: { type: "integer" as const, description: "rows" },
  },
  required: ["connection_id"],
};

Deno.test("checkArguments() refuses inherited names (__proto__, toString, constructor) as unknown arguments with -32602", () => {
  for (
    const name of ["__proto__", "toString", "constructor", "hasOwnProperty"]
  ) {
    const args = JSON.parse(`{"connection_id": "x", "${name}": 1}`);
    const error = assertThrows(
      () => checkArguments("execute_query", SPEC, args),
      WireError,
    );
    assertEquals(error.code, -32602, name);
    assertEquals(error.message.includes(`unknown argument "${name}"`), true);
  }
});

Deno.test("checkArguments() takes a required argument only as an own key", () => {
  const args = Object.create({ connection_id: "inherited" });
  const error = assertThrows(
    () => checkArguments("execute_query", SPEC, args),
    WireError,
  );
  assertEquals(error.code, -32602);
  assertEquals(checkArguments("execute_query", SPEC, { connection_id: "a" }), {
    connection_id: "a",
  });
});
