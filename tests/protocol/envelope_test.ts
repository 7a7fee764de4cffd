import { assertEquals } from "@std/assert";
import { isModernRequest, parseEnvelope } from "../../lib/protocol/envelope.ts";
import { SUPPORTED_VERSIONS } from "../../lib/protocol/versions.ts";

const V = "io.modelcontextprotocol/protocolVersion";
const C = "io.modelcontextprotocol/clientCapabilities";

Deno.test("isModernRequest() sees the _meta version, or a modern header", () => {
  assertEquals(isModernRequest({ _meta: { [V]: "2026-07-28" } }, null), true);
  assertEquals(isModernRequest({ _meta: { [V]: "" } }, null), true);
  assertEquals(isModernRequest({}, "2026-07-28"), true);
  assertEquals(isModernRequest({}, "2099-01-01"), true);
  assertEquals(isModernRequest({}, "2025-11-25"), false);
  assertEquals(isModernRequest({}, null), false);
  assertEquals(isModernRequest({ _meta: { progressToken: 1 } }, null), false);
});

Deno.test("parseEnvelope() accepts the minimal envelope", () => {
  const result = parseEnvelope({ _meta: { [V]: "2026-07-28", [C]: {} } });
  assertEquals(result, {
    ok: true,
    envelope: {
      protocolVersion: "2026-07-28",
      clientCapabilities: {},
      trace: {},
    },
  });
});

Deno.test("parseEnvelope() reads clientInfo, progressToken and trace context", () => {
  const result = parseEnvelope({
    _meta: {
      [V]: "2026-07-28",
      [C]: { elicitation: {} },
      "io.modelcontextprotocol/clientInfo": {
        name: "c",
        title: "C",
        version: "1",
      },
      progressToken: 0,
      traceparent: "00-abc-def-01",
      baggage: "k=v",
    },
  });
  assertEquals(result, {
    ok: true,
    envelope: {
      protocolVersion: "2026-07-28",
      clientCapabilities: { elicitation: {} },
      clientInfo: { name: "c", title: "C", version: "1" },
      progressToken: 0,
      trace: { traceparent: "00-abc-def-01", baggage: "k=v" },
    },
  });
});

Deno.test("parseEnvelope() refuses a missing or empty version with -32602", () => {
  for (
    const meta of [{ [C]: {} }, { [V]: "", [C]: {} }, { [V]: null, [C]: {} }]
  ) {
    const result = parseEnvelope({ _meta: meta });
    assertEquals(result.ok ? 0 : result.error.code, -32602);
  }
  const none = parseEnvelope({});
  assertEquals(none.ok ? 0 : none.error.code, -32602);
});

Deno.test("parseEnvelope() refuses an unsupported version with -32022 and the live list", () => {
  for (const version of ["2099-01-01", "2025-03-26", "2025-11-25"]) {
    const result = parseEnvelope({ _meta: { [V]: version, [C]: {} } });
    if (result.ok) throw new Error("accepted");
    assertEquals(result.error.code, -32022);
    assertEquals(result.error.data, {
      supported: [...SUPPORTED_VERSIONS],
      requested: version,
    });
  }
});

Deno.test("parseEnvelope() refuses non-object capabilities with -32602", () => {
  for (const capabilities of [undefined, null, [], "x", 1]) {
    const meta: Record<string, unknown> = { [V]: "2026-07-28" };
    if (capabilities !== undefined) meta[C] = capabilities;
    const result = parseEnvelope({ _meta: meta });
    assertEquals(
      result.ok ? 0 : result.error.code,
      -32602,
      JSON.stringify(capabilities),
    );
  }
});

Deno.test("parseEnvelope() refuses ill-typed progressToken, clientInfo and trace keys", () => {
  const bad = [
    { progressToken: 1.5 },
    { progressToken: true },
    { progressToken: {} },
    { "io.modelcontextprotocol/clientInfo": "me" },
    { "io.modelcontextprotocol/clientInfo": { version: "1" } },
    { traceparent: 1 },
    { tracestate: {} },
    { baggage: [] },
  ];
  for (const extra of bad) {
    const result = parseEnvelope({
      _meta: { [V]: "2026-07-28", [C]: {}, ...extra },
    });
    assertEquals(
      result.ok ? 0 : result.error.code,
      -32602,
      JSON.stringify(extra),
    );
  }
});
