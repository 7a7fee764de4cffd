import { assertEquals } from "@std/assert";
import {
  ErrorCode,
  errorResponse,
  HTTP_STATUS,
  TOOL_ERROR_CODES,
  toolError,
  WireError,
} from "../../lib/protocol/errors.ts";

Deno.test("HTTP_STATUS gives every code of the wire reference's Protocol errors table its status", () => {
  // The wire reference's table, row by row.
  const table: [number, number][] = [
    [-32700, 400],
    [-32600, 400],
    [-32601, 404],
    [-32602, 400],
    [-32603, 500],
    [-32020, 400],
    [-32021, 400],
    [-32022, 400],
    [-33000, 503],
    [-33001, 404],
    [-33002, 200],
    [-33003, 200],
    [-33005, 413],
    [-33006, 503],
    [-33007, 403],
    [-33008, 401],
    [-33009, 401],
    [-33010, 429],
  ];
  assertEquals(Object.keys(HTTP_STATUS).length, table.length);
  for (const [code, status] of table) {
    assertEquals(
      HTTP_STATUS[code as keyof typeof HTTP_STATUS],
      status,
      `code ${code}`,
    );
  }
  assertEquals(
    Object.values(ErrorCode).sort(),
    table.map(([code]) => code).sort(),
  );
});

Deno.test("WireError carries its status, and data only when given", () => {
  const plain = new WireError(ErrorCode.InvalidParams, "bad");
  assertEquals(plain.status, 400);
  assertEquals(plain.toJSON(), { code: -32602, message: "bad" });
  const rich = new WireError(ErrorCode.UnsupportedProtocolVersion, "no", {
    supported: ["x"],
  });
  assertEquals(rich.toJSON(), {
    code: -32022,
    message: "no",
    data: { supported: ["x"] },
  });
});

Deno.test("errorResponse() keeps the request id", () => {
  assertEquals(errorResponse(0, new WireError(ErrorCode.MethodNotFound, "m")), {
    jsonrpc: "2.0",
    id: 0,
    error: { code: -32601, message: "m" },
  });
});

Deno.test("toolError() is an in-band result whose text starts with the code", () => {
  assertEquals(toolError("denied", "the user said no"), {
    content: [{ type: "text", text: "denied: the user said no" }],
    isError: true,
  });
  assertEquals(TOOL_ERROR_CODES.length, 9);
});
