import { assertEquals } from "@std/assert";
import {
  parseSseEvents,
  SSE_KEEPALIVE_FRAME,
  sseFrame,
} from "../../lib/protocol/sse.ts";

Deno.test("sseFrame() writes one unnamed data frame", () => {
  const text = new TextDecoder().decode(sseFrame({ a: "line\nbreak" }));
  assertEquals(text, 'data: {"a":"line\\nbreak"}\n\n');
});

Deno.test("SSE_KEEPALIVE_FRAME is a comment", () => {
  assertEquals(
    new TextDecoder().decode(SSE_KEEPALIVE_FRAME),
    ": keepalive\n\n",
  );
});

Deno.test("parseSseEvents() returns complete events and keeps the rest", () => {
  const { events, rest } = parseSseEvents(
    ': keepalive\n\ndata: {"a":1}\n\ndata: {"b"',
  );
  assertEquals(events, ['{"a":1}']);
  assertEquals(rest, 'data: {"b"');
});
