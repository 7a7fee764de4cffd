import { assert, assertEquals } from "@std/assert";
import { activityEntry } from "../../lib/server/activity.ts";
import { MAX_LOGGED_CHARS } from "../../lib/server/activity_fields.ts";

Deno.test("activityEntry() keeps at most 256 characters of each field the client chose", () => {
  const big = "b".repeat(1_000_000);
  const entry = activityEntry({
    time: 0,
    durationMs: 1,
    principal: null,
    clientInfo: { name: big, version: big },
    method: big,
    params: {},
    trace: { traceparent: big, tracestate: big, baggage: big },
    ended: { errorCode: -33009 },
  });
  for (
    const field of [
      "clientName",
      "clientVersion",
      "method",
      "traceparent",
      "tracestate",
      "baggage",
    ] as const
  ) {
    const value = entry[field]!;
    assertEquals(value.length, MAX_LOGGED_CHARS, field);
    assert(value.endsWith("…"), field);
  }
  const small = activityEntry({
    time: 0,
    durationMs: 1,
    principal: null,
    clientInfo: { name: "claude", version: "1.2" },
    method: "tools/list",
    params: {},
    trace: { tracestate: "a=b" },
    ended: { errorCode: -33009 },
  });
  assertEquals(
    [small.clientName, small.clientVersion, small.method, small.tracestate],
    ["claude", "1.2", "tools/list", "a=b"],
  );
});
