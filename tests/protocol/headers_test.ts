import { assertEquals } from "@std/assert";
import {
  checkMirroredHeaders,
  decodeHeaderValue,
  encodeHeaderValue,
  isJsonContentType,
} from "../../lib/protocol/headers.ts";
import type { JsonObject } from "../../lib/protocol/jsonrpc.ts";

function headers(values: Record<string, string>): Headers {
  return new Headers(values);
}

const base = {
  "content-type": "application/json",
  "mcp-protocol-version": "2026-07-28",
};

function check(
  extra: Record<string, string>,
  method: string,
  params: JsonObject,
) {
  return checkMirroredHeaders(headers({ ...base, ...extra }), {
    method,
    params,
  }, "2026-07-28");
}

Deno.test("decodeHeaderValue() passes printable ASCII through", () => {
  assertEquals(decodeHeaderValue("tools/call"), {
    ok: true,
    value: "tools/call",
  });
});

Deno.test("decodeHeaderValue() decodes the base64 wrapper as UTF-8", () => {
  assertEquals(decodeHeaderValue("=?base64?ZWNobw==?="), {
    ok: true,
    value: "echo",
  });
  assertEquals(decodeHeaderValue(encodeHeaderValue("héllo wörld")), {
    ok: true,
    value: "héllo wörld",
  });
  assertEquals(decodeHeaderValue("=?base64??="), { ok: true, value: "" });
});

Deno.test("decodeHeaderValue() refuses a malformed wrapper and control characters", () => {
  for (
    const raw of [
      "=?base64?not base64!?=",
      "=?base64?ZWNobw?=",
      "=?base64?/w==?=",
      "a\u0001b",
      "caf\u00e9",
    ]
  ) {
    assertEquals(decodeHeaderValue(raw).ok, false, raw);
  }
});

Deno.test("decodeHeaderValue() treats an uppercase or partial wrapper as literal", () => {
  assertEquals(decodeHeaderValue("=?BASE64?ZWNobw==?="), {
    ok: true,
    value: "=?BASE64?ZWNobw==?=",
  });
  assertEquals(decodeHeaderValue("=?base64?ZWNobw=="), {
    ok: true,
    value: "=?base64?ZWNobw==",
  });
});

Deno.test("encodeHeaderValue() wraps only values that need it", () => {
  assertEquals(encodeHeaderValue("plain"), "plain");
  assertEquals(encodeHeaderValue(" padded"), "=?base64?IHBhZGRlZA==?=");
  assertEquals(encodeHeaderValue(""), "=?base64??=");
});

Deno.test("isJsonContentType() accepts application/json and +json types", () => {
  assertEquals(isJsonContentType("application/json"), true);
  assertEquals(isJsonContentType("application/json; charset=utf-8"), true);
  assertEquals(isJsonContentType("application/vnd.api+json"), true);
  assertEquals(isJsonContentType("text/plain"), false);
  assertEquals(isJsonContentType(null), false);
});

Deno.test("checkMirroredHeaders() accepts agreeing headers", () => {
  assertEquals(check({ "mcp-method": "tools/list" }, "tools/list", {}), null);
  assertEquals(
    check({ "mcp-method": "tools/call", "mcp-name": "echo" }, "tools/call", {
      name: "echo",
      arguments: {},
    }),
    null,
  );
  assertEquals(
    check(
      { "mcp-method": "resources/read", "mcp-name": "dbport://connections" },
      "resources/read",
      {
        uri: "dbport://connections",
      },
    ),
    null,
  );
});

Deno.test("checkMirroredHeaders() refuses missing or disagreeing required headers with -32020", () => {
  const cases: [Record<string, string>, string, JsonObject][] = [
    [{}, "tools/list", {}],
    [{ "mcp-method": "TOOLS/LIST" }, "tools/list", {}],
    [{ "mcp-method": "tools/call" }, "tools/call", { name: "echo" }],
    [{ "mcp-method": "tools/call", "mcp-name": "other" }, "tools/call", {
      name: "echo",
    }],
    [{ "mcp-method": "prompts/get", "mcp-name": "x" }, "prompts/get", {
      name: "y",
    }],
    [
      { "mcp-method": "resources/read", "mcp-name": "a://b" },
      "resources/read",
      { uri: "a://c" },
    ],
  ];
  for (const [extra, method, params] of cases) {
    assertEquals(
      check(extra, method, params)?.code,
      -32020,
      JSON.stringify(extra),
    );
  }
  const noType = checkMirroredHeaders(
    headers({
      "mcp-protocol-version": "2026-07-28",
      "mcp-method": "tools/list",
    }),
    { method: "tools/list", params: {} },
    "2026-07-28",
  );
  assertEquals(noType?.code, -32020);
  const otherVersion = checkMirroredHeaders(
    headers({
      ...base,
      "mcp-protocol-version": "2025-11-25",
      "mcp-method": "tools/list",
    }),
    { method: "tools/list", params: {} },
    "2026-07-28",
  );
  assertEquals(otherVersion?.code, -32020);
});

Deno.test("checkMirroredHeaders() matches Mcp-Param against arguments for tools/call", () => {
  const params = {
    name: "q",
    arguments: {
      Connection_Id: "abc",
      limit: 42,
      dry: false,
      nested: { schema: "public" },
      list: [1],
    },
  };
  const ok = (extra: Record<string, string>) =>
    check(
      { "mcp-method": "tools/call", "mcp-name": "q", ...extra },
      "tools/call",
      params,
    );
  assertEquals(ok({ "mcp-param-connection_id": "abc" }), null);
  assertEquals(ok({ "Mcp-Param-Limit": "42" }), null);
  assertEquals(ok({ "mcp-param-limit": "42.0" }), null);
  assertEquals(ok({ "mcp-param-dry": "false" }), null);
  assertEquals(ok({ "mcp-param-schema": "public" }), null);
  assertEquals(ok({ "mcp-param-connection_id": "=?base64?YWJj?=" }), null);
  for (
    const bad of [
      { "mcp-param-connection_id": "abd" },
      { "mcp-param-limit": "43" },
      { "mcp-param-limit": "0x2a" },
      { "mcp-param-dry": "False" },
      { "mcp-param-list": "1" },
      { "mcp-param-nested": "x" },
      { "mcp-param-missing": "x" },
      { "mcp-param-connection_id": "=?base64?!!?=" },
    ]
  ) {
    assertEquals(ok(bad)?.code, -32020, JSON.stringify(bad));
  }
});

Deno.test("checkMirroredHeaders() matches Mcp-Param against params for other methods", () => {
  assertEquals(
    check(
      { "mcp-method": "tools/list", "mcp-param-cursor": "abc" },
      "tools/list",
      { cursor: "abc" },
    ),
    null,
  );
  assertEquals(
    check(
      { "mcp-method": "tools/list", "mcp-param-cursor": "abd" },
      "tools/list",
      { cursor: "abc" },
    )?.code,
    -32020,
  );
});
