import { assertEquals } from "@std/assert";
import { MAX_JSON_DEPTH, tooDeep } from "../../lib/protocol/json_depth.ts";
import { parseJsonBody } from "../../lib/protocol/jsonrpc.ts";

const encoder = new TextEncoder();

/** A tools/call body whose argument `field` nests `depth` arrays. */
function deepCall(field: string, depth: number): string {
  const deep = "[".repeat(depth) + "]".repeat(depth);
  return `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"execute_query","arguments":{"query":"select 1","${field}":${deep}}}}`;
}

Deno.test("tooDeep: a body within the bound is not too deep", () => {
  assertEquals(tooDeep(deepCall("params", MAX_JSON_DEPTH - 3)), null);
  assertEquals(tooDeep('{"a":"[[[[[[[[[[[[[[[[[[[[[[[[[[[[[["}', 4), null);
  assertEquals(tooDeep('{"a":"\\"[[[[[[[["}', 2), null);
});

Deno.test("tooDeep: names the keys leading to the deep value", () => {
  assertEquals(tooDeep(deepCall("params", 100)), {
    path: ["params", "arguments", "params"],
    object: true,
  });
  assertEquals(tooDeep("[[[[", 3), { path: [], object: false });
  assertEquals(tooDeep('{"a":1,"b":{"c":"x","d":[[', 3), {
    path: ["b", "d"],
    object: true,
  });
});

Deno.test("parseJsonBody: millions of nested arrays are refused without parsing", () => {
  const deep = parseJsonBody(encoder.encode(deepCall("x", 4_900_000)));
  assertEquals(deep.ok, false);
  if (deep.ok) return;
  assertEquals(deep.code, -32602);
  assertEquals(deep.data, { argument: "x" });
  assertEquals(
    deep.reason,
    `Invalid params: "params.arguments.x" nests deeper than ${MAX_JSON_DEPTH} levels`,
  );
  const batch = parseJsonBody(encoder.encode("[".repeat(1_000_000)));
  assertEquals(batch.ok, false);
  if (!batch.ok) assertEquals(batch.code, -32600);
  const fine = parseJsonBody(encoder.encode(deepCall("params", 20)));
  assertEquals(fine.ok, true);
});
