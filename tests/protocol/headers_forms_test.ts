/**
 * Mirrored headers, edge by edge (issue 34): base64 padding forms, a
 * non-string name target, param values by type, nested fields.
 */
import { assertEquals } from "@std/assert";
import {
  checkMirroredHeaders,
  checkParamHeaders,
  decodeHeaderValue,
  encodeHeaderValue,
  isJsonContentType,
} from "../../lib/protocol/headers.ts";
import type { JsonObject } from "../../lib/protocol/jsonrpc.ts";

const VERSION = "2026-07-28";

function check(
  extra: Record<string, string>,
  method: string,
  params: JsonObject,
) {
  return checkMirroredHeaders(
    new Headers({
      "content-type": "application/json",
      "mcp-protocol-version": VERSION,
      "mcp-method": method,
      ...extra,
    }),
    { method, params },
    VERSION,
  );
}

const problem = (error: ReturnType<typeof check>) =>
  error === null ? null : error.message;

Deno.test('decodeHeaderValue("=?base64?YWI=?=") decodes one-pad base64 to "ab"; "=?base64?YQ==?=" two-pad to "a"', () => {
  assertEquals(decodeHeaderValue("=?base64?YWI=?="), { ok: true, value: "ab" });
  assertEquals(decodeHeaderValue("=?base64?YQ==?="), { ok: true, value: "a" });
  assertEquals(decodeHeaderValue("=?base64?YWJj?="), {
    ok: true,
    value: "abc",
  });
  assertEquals(decodeHeaderValue("=?base64??="), { ok: true, value: "" });
});

Deno.test('decodeHeaderValue("=?base64?YWI?=") (missing padding) and "=?base64?=" (overlapping wrapper) are malformed', () => {
  assertEquals(decodeHeaderValue("=?base64?YWI?=").ok, false);
  assertEquals(decodeHeaderValue("=?base64?=").ok, false);
});

Deno.test('decodeHeaderValue("  x  ") trims; DEL and a tab inside are refused', () => {
  assertEquals(decodeHeaderValue("  x  "), { ok: true, value: "x" });
  assertEquals(decodeHeaderValue("a\x7fb").ok, false);
  assertEquals(decodeHeaderValue("a\tb").ok, false);
});

Deno.test('encodeHeaderValue(): " x" (edge space), "" and a literal wrapper are wrapped; "a b" is not', () => {
  assertEquals(encodeHeaderValue("a b"), "a b");
  assertEquals(encodeHeaderValue(" x"), "=?base64?IHg=?=");
  assertEquals(encodeHeaderValue(""), "=?base64??=");
  assertEquals(
    encodeHeaderValue("=?base64?x?="),
    "=?base64?PT9iYXNlNjQ/eD89?=",
  );
  assertEquals(encodeHeaderValue("=?base64?x"), "=?base64?x");
});

Deno.test('isJsonContentType(): null and "text/plain" are not JSON; "Application/JSON; charset=utf-8" and "application/vnd.x+json" are', () => {
  assertEquals(isJsonContentType(null), false);
  assertEquals(isJsonContentType("text/plain"), false);
  assertEquals(isJsonContentType("Application/JSON; charset=utf-8"), true);
  assertEquals(isJsonContentType("application/vnd.x+json"), true);
  assertEquals(isJsonContentType("application/jsonx"), false);
});

Deno.test("checkMirroredHeaders(tools/call with a non-string name): Mcp-Name sent is refused, not sent is accepted", () => {
  const refused = problem(
    check({ "mcp-name": "7" }, "tools/call", { name: 7, arguments: {} }),
  );
  assertEquals(
    refused?.includes("is sent but params.name is not a string"),
    true,
    String(refused),
  );
  assertEquals(check({}, "tools/call", { name: 7, arguments: {} }), null);
  assertEquals(check({}, "prompts/get", { name: null }), null);
});

Deno.test("checkMirroredHeaders(prompts/get) compares Mcp-Name with params.name", () => {
  assertEquals(check({ "mcp-name": "p" }, "prompts/get", { name: "p" }), null);
  assertEquals(
    check({ "mcp-name": "q" }, "prompts/get", { name: "p" }) !== null,
    true,
  );
  assertEquals(check({}, "prompts/get", { name: "p" }) !== null, true);
});

Deno.test("checkMirroredHeaders(): a protocol version with surrounding spaces matches; another version does not", () => {
  const headers = (version: string) =>
    new Headers({
      "content-type": "application/json",
      "mcp-protocol-version": version,
      "mcp-method": "tools/list",
    });
  const message = { method: "tools/list", params: {} };
  assertEquals(
    checkMirroredHeaders(headers(` ${VERSION} `), message, VERSION),
    null,
  );
  assertEquals(
    checkMirroredHeaders(headers("2025-06-18"), message, VERSION) !== null,
    true,
  );
});

Deno.test("checkParamHeaders(): no Mcp-Param header → null; one that disagrees → refused", () => {
  const message = { method: "tools/call", params: { arguments: { n: 1 } } };
  assertEquals(checkParamHeaders(new Headers({}), message), null);
  assertEquals(
    checkParamHeaders(new Headers({ "mcp-param-n": "2" }), message) !== null,
    true,
  );
  assertEquals(
    checkParamHeaders(new Headers({ "mcp-param-n": "1" }), message),
    null,
  );
});

for (
  const [body, header, matches] of [
    [1, "1", true],
    [1.5, "1.5", true],
    [100, "1e2", true],
    [1, "01", false],
    [1, "1.0x", false],
    [-2, "-2", true],
    [true, "true", true],
    [false, "true", false],
    [true, "TRUE", false],
    ["a", "a", true],
    ["a", "A", false],
    [null, "null", false],
  ] as const
) {
  Deno.test(`checkParamHeaders(): body ${JSON.stringify(body)} and header "${header}" ${matches ? "match" : "do not match"}`, () => {
    const verdict = checkParamHeaders(new Headers({ "mcp-param-v": header }), {
      method: "tools/call",
      params: { arguments: { v: body } },
    });
    assertEquals(verdict === null, matches);
  });
}

Deno.test("checkParamHeaders(): a nested field is found breadth-first, case-insensitively; an own key wins over a nested one", () => {
  const message = (args: JsonObject) => ({
    method: "tools/call",
    params: { arguments: args },
  });
  assertEquals(
    checkParamHeaders(
      new Headers({ "mcp-param-Deep": "x" }),
      message({ a: { b: { deep: "x" } } }),
    ),
    null,
  );
  assertEquals(
    checkParamHeaders(
      new Headers({ "mcp-param-k": "own" }),
      message({ n: { k: "nested" }, k: "own" }),
    ),
    null,
  );
  assertEquals(
    checkParamHeaders(
      new Headers({ "mcp-param-k": "x" }),
      message({ n: [{ k: "x" }] }),
    ) !== null,
    true,
  );
});

Deno.test("checkParamHeaders(): other methods match against params itself; a field name that is no token is refused", () => {
  assertEquals(
    checkParamHeaders(new Headers({ "mcp-param-uri": "u" }), {
      method: "resources/read",
      params: { uri: "u" },
    }),
    null,
  );
  const headers = {
    forEach: (cb: (value: string, name: string) => void) =>
      cb("x", "mcp-param-a b"),
    get: () => null,
  };
  assertEquals(
    checkParamHeaders(headers, {
      method: "resources/read",
      params: { "a b": "x" },
    }) !== null,
    true,
  );
});
