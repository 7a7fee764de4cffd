import { assertEquals } from "@std/assert";
import { encodeMessage, knownJson } from "../../lib/protocol/json_text.ts";

Deno.test("encodeMessage() splices a known structuredContent, equal as JSON", () => {
  const structured = { rows: [[1, 'a "quoted" ☃']], is_truncated: false };
  const text = JSON.stringify(structured);
  const message = {
    jsonrpc: "2.0",
    id: 7,
    result: {
      resultType: "complete",
      content: [{ type: "text", text }],
      structuredContent: knownJson(structured, text),
      _meta: { "io.modelcontextprotocol/serverInfo": { name: "dbport" } },
    },
  };
  const encoded = encodeMessage(message);
  assertEquals(JSON.parse(encoded), message);
  // The known text is used as it is, not serialised again.
  assertEquals(encoded.endsWith(`"structuredContent":${text}}}`), true);
});

Deno.test("encodeMessage() uses the known text even if it differs, proving it is not re-serialised", () => {
  const structured = { a: 1 };
  const message = {
    jsonrpc: "2.0",
    id: "x",
    result: { structuredContent: knownJson(structured, '{"a":2}') },
  };
  assertEquals(JSON.parse(encodeMessage(message)).result, {
    structuredContent: { a: 2 },
  });
});

Deno.test("encodeMessage() is JSON.stringify for messages without a known text", () => {
  for (
    const message of [
      { jsonrpc: "2.0", id: 1, result: { structuredContent: { a: 1 } } },
      { jsonrpc: "2.0", id: 1, error: { code: -32600, message: "bad" } },
      { jsonrpc: "2.0", method: "notifications/progress", params: {} },
      { error: "forbidden", message: "no" },
      null,
    ]
  ) {
    assertEquals(encodeMessage(message), JSON.stringify(message));
  }
});
