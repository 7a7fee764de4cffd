/**
 * JSON-RPC messages as text, each value serialised once. A tool result
 * carries the same JSON twice - as `structuredContent` and as its text item
 * (docs/wire.md "Tool results") - and the text is already built by then:
 * re-serialising the object for the message was a second full walk of every
 * row and a second copy of a large answer in memory (bench W3).
 *
 * @module
 */

/** Objects whose JSON text is already known. */
const KNOWN = new WeakMap<object, string>();

/** Remember `text` as the JSON of `value` (which must not change after). */
export function knownJson<T extends object>(value: T, text: string): T {
  KNOWN.set(value, text);
  return value;
}

/**
 * `JSON.stringify(message)`, with a result's `structuredContent` spliced in
 * from its known text rather than serialised again. Keys keep their meaning;
 * `structuredContent` is then the result's last key.
 */
export function encodeMessage(message: unknown): string {
  // Looked up first: every other message (most of them) is copied nowhere.
  const result = (message as { result?: unknown } | null)?.result;
  const structured = (result as { structuredContent?: unknown } | undefined)
    ?.structuredContent;
  const text = typeof structured === "object" && structured !== null
    ? KNOWN.get(structured)
    : undefined;
  if (text === undefined) return JSON.stringify(message);
  const { result: _, ...envelope } = message as Record<string, unknown>;
  const { structuredContent: __, ...rest } = result as Record<string, unknown>;
  const head = JSON.stringify({ ...envelope, result: rest });
  // head ends with the result's "}" and the message's "}"; an empty result
  // ("{}") takes no comma before the spliced key.
  const comma = Object.keys(rest).length === 0 ? "" : ",";
  return `${head.slice(0, -2)}${comma}"structuredContent":${text}}}`;
}
