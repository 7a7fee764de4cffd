/**
 * Server-sent events framing (docs/wire.md "Progress streaming").
 *
 * Frames are `data: <JSON>` with no event name; a comment frame keeps a quiet
 * stream alive under the transport's 30 s idle timeout.
 *
 * @module
 */

import { encodeMessage } from "./json_text.ts";

const encoder = new TextEncoder();

/** The longest a stream may stay silent before a keep-alive comment: half the idle timeout. */
export const SSE_KEEPALIVE_MS = 15_000;

/** Encode one JSON message as an SSE frame. JSON text never contains a raw newline. */
export function sseFrame(message: unknown): Uint8Array {
  return encoder.encode(`data: ${encodeMessage(message)}\n\n`);
}

/** The keep-alive comment frame. */
export const SSE_KEEPALIVE_FRAME: Uint8Array = encoder.encode(
  ": keepalive\n\n",
);

/**
 * Split an SSE text buffer into the `data` payloads of its complete events.
 * Returns the payloads and the unconsumed rest. Comment lines are skipped.
 */
export function parseSseEvents(
  buffer: string,
): { events: string[]; rest: string } {
  const events: string[] = [];
  const normalized = buffer.replace(/\r\n?/g, "\n");
  let start = 0;
  for (;;) {
    const end = normalized.indexOf("\n\n", start);
    if (end < 0) break;
    const block = normalized.slice(start, end);
    start = end + 2;
    const data = block.split("\n")
      .filter((line) => line.startsWith("data:"))
      .map((line) => line.slice(line.startsWith("data: ") ? 6 : 5));
    if (data.length > 0) events.push(data.join("\n"));
  }
  return { events, rest: normalized.slice(start) };
}
