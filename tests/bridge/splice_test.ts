import { assertEquals } from "@std/assert";
import { spliceMeta } from "../../lib/bridge/splice.ts";

const META = { "io.modelcontextprotocol/protocolVersion": "2026-07-28" };

Deno.test("spliceMeta() adds params and _meta to a request without params", () => {
  assertEquals(
    spliceMeta('{"jsonrpc":"2.0","id":1,"method":"tools/list"}', META),
    '{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}',
  );
});

Deno.test("spliceMeta() adds _meta to params and keeps the rest byte for byte", () => {
  const raw =
    '{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"t","arguments":{"n":1.0,"big":12345678901234567890,"s":"a\\"}"}}}';
  const out = spliceMeta(raw, META);
  assertEquals(
    out,
    '{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"},"name":"t","arguments":{"n":1.0,"big":12345678901234567890,"s":"a\\"}"}}}',
  );
});

Deno.test("spliceMeta() merges into an existing _meta, the client's keys first", () => {
  const raw =
    '{ "id": 2, "params": { "_meta" : { "progressToken": 5 }, "x": {} }, "method": "m" }';
  const out = spliceMeta(raw, { ...META, progressToken: 9 });
  assertEquals(JSON.parse(out).params._meta, {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    progressToken: 5,
  });
  assertEquals(JSON.parse(out).params.x, {});
});

Deno.test("spliceMeta() handles empty params and empty _meta", () => {
  assertEquals(
    JSON.parse(spliceMeta('{"id":1,"method":"m","params":{}}', META)).params,
    { _meta: META },
  );
  assertEquals(
    JSON.parse(spliceMeta('{"id":1,"method":"m","params":{"_meta":{}}}', META))
      .params,
    { _meta: META },
  );
});
