import { assertEquals } from "@std/assert";
import { classifyMessage, parseJsonBody } from "../../lib/protocol/jsonrpc.ts";

const utf8 = (text: string) => new TextEncoder().encode(text);

Deno.test("parseJsonBody() parses a JSON object once", () => {
  assertEquals(parseJsonBody(utf8('{"a":1}')), { ok: true, value: { a: 1 } });
});

Deno.test("parseJsonBody() refuses text that is not JSON", () => {
  const result = parseJsonBody(utf8("{nope"));
  assertEquals(result.ok, false);
});

Deno.test("parseJsonBody() refuses bytes that are not UTF-8", () => {
  const result = parseJsonBody(new Uint8Array([0x7b, 0xff, 0x7d]));
  assertEquals(result, {
    ok: false,
    reason: "Cannot parse body: it is not UTF-8",
  });
});

Deno.test("classifyMessage() tells a request by its method and id", () => {
  assertEquals(
    classifyMessage({ jsonrpc: "2.0", id: "a", method: "m", params: { x: 1 } }),
    {
      kind: "request",
      id: "a",
      method: "m",
      params: { x: 1 },
    },
  );
});

Deno.test("classifyMessage() keeps 0 as a real id", () => {
  const message = classifyMessage({ jsonrpc: "2.0", id: 0, method: "m" });
  assertEquals(message, { kind: "request", id: 0, method: "m", params: {} });
});

Deno.test("classifyMessage() tells a notification by its missing id", () => {
  assertEquals(classifyMessage({ jsonrpc: "2.0", method: "notifications/x" }), {
    kind: "notification",
    method: "notifications/x",
    params: {},
  });
});

Deno.test("classifyMessage() tells a response sent to the server", () => {
  assertEquals(classifyMessage({ jsonrpc: "2.0", id: 4, result: {} }), {
    kind: "response",
    id: 4,
  });
  assertEquals(
    classifyMessage({
      jsonrpc: "2.0",
      id: 5,
      error: { code: 1, message: "x" },
    }),
    {
      kind: "response",
      id: 5,
    },
  );
});

Deno.test("classifyMessage() refuses a batch", () => {
  assertEquals(
    classifyMessage([{ jsonrpc: "2.0", id: 1, method: "m" }]).kind,
    "invalid",
  );
});

Deno.test("classifyMessage() refuses non-objects and a wrong jsonrpc", () => {
  for (const value of [null, 1, "x", true]) {
    assertEquals(classifyMessage(value).kind, "invalid");
  }
  assertEquals(classifyMessage({ jsonrpc: "1.0", id: 3, method: "m" }), {
    kind: "invalid",
    id: 3,
    reason: 'Invalid request: "jsonrpc" must be "2.0"',
  });
});

Deno.test("classifyMessage() refuses ids that are not strings or integers", () => {
  for (const id of [null, 1.5, true, {}, [], 9007199254740993]) {
    const message = classifyMessage({ jsonrpc: "2.0", id, method: "m" });
    assertEquals(message.kind, "invalid", JSON.stringify(id));
  }
});

Deno.test("classifyMessage() refuses params that are not an object", () => {
  const message = classifyMessage({
    jsonrpc: "2.0",
    id: 1,
    method: "m",
    params: [1],
  });
  assertEquals(message, {
    kind: "invalid",
    id: 1,
    reason: 'Invalid request: "params" must be an object',
  });
});

Deno.test("classifyMessage() refuses an empty or non-string method", () => {
  assertEquals(
    classifyMessage({ jsonrpc: "2.0", id: 1, method: "" }).kind,
    "invalid",
  );
  assertEquals(
    classifyMessage({ jsonrpc: "2.0", id: 1, method: 7 }).kind,
    "invalid",
  );
});
