import { assert, assertEquals } from "@std/assert";
import { checkParamHeaders } from "../../lib/protocol/headers.ts";
import { previewJson } from "../../lib/base/json_preview.ts";

Deno.test("previewJson: a small value is its JSON text", () => {
  assertEquals(
    previewJson({ a: [1, "x", null, true] }),
    '{"a":[1,"x",null,true]}',
  );
  assertEquals(previewJson([Infinity]), '["Infinity"]');
  assertEquals(previewJson("x"), '"x"');
});

Deno.test("previewJson: a deep or huge value is cut to the bound", () => {
  let deep: unknown = [];
  for (let i = 0; i < 1_000_000; i++) deep = [deep];
  assertEquals(previewJson(deep, 10), "[[[[[[[[[[…");
  const huge = previewJson({ k: "y".repeat(5_000_000) }, 20);
  assertEquals(huge, `{"k":"${"y".repeat(14)}…`);
});

Deno.test("checkParamHeaders: a mismatch over a deep value quotes a bounded preview", () => {
  let deep: unknown = [];
  for (let i = 0; i < 1_000_000; i++) deep = [deep];
  const error = checkParamHeaders(new Headers({ "mcp-param-x": "1" }), {
    method: "tools/call",
    params: { name: "q", arguments: { x: deep } },
  });
  assertEquals(error?.code, -32020);
  assert(error!.message.length < 400, `${error!.message.length} characters`);
  assert(error!.message.includes(`but the body has [[[[`), error!.message);
});
