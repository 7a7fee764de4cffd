/**
 * A value as an error message quotes it: its JSON text up to a bound, built
 * piece by piece so that a huge or deeply nested value costs only the
 * characters shown (`JSON.stringify` of 2,000,000 nested arrays held the
 * event loop 45 s and answered 9.8 MB). Numbers JSON cannot write (`1e999`
 * parses to Infinity) are said as themselves (`"Infinity"`) rather than as
 * `null`.
 *
 * @module
 */

/** The longest preview by default. */
export const PREVIEW_CHARS = 200;

/**
 * `value` as JSON text cut to `max` characters; a cut preview ends in
 * `...` (the whole text's length is not computed, so it is not said).
 */
export function previewJson(
  value: unknown,
  max: number = PREVIEW_CHARS,
): string {
  const out: string[] = [];
  const room = { left: max + 1 };
  write(value, out, room);
  const text = out.join("");
  return text.length <= max ? text : `${text.slice(0, max)}\u2026`;
}

/** Append `value`'s JSON text to `out` until `room` runs out. */
function write(value: unknown, out: string[], room: { left: number }): void {
  if (room.left <= 0) return;
  if (Array.isArray(value)) {
    put("[", out, room);
    for (let i = 0; i < value.length && room.left > 0; i++) {
      if (i > 0) put(",", out, room);
      write(value[i], out, room);
    }
    put("]", out, room);
    return;
  }
  if (typeof value === "object" && value !== null) {
    put("{", out, room);
    let first = true;
    for (const key in value) {
      if (room.left <= 0) break;
      if (!Object.hasOwn(value, key)) continue;
      if (!first) put(",", out, room);
      first = false;
      put(`${scalar(key.slice(0, room.left))}:`, out, room);
      write((value as Record<string, unknown>)[key], out, room);
    }
    put("}", out, room);
    return;
  }
  put(scalar(value), out, room);
}

function scalar(value: unknown): string {
  if (typeof value === "number" && !Number.isFinite(value)) {
    return JSON.stringify(String(value));
  }
  if (typeof value === "string") {
    // A long string is cut before it is quoted: the preview shows only its start.
    return JSON.stringify(value.length > 4096 ? value.slice(0, 4096) : value);
  }
  return JSON.stringify(value) ?? String(value);
}

function put(text: string, out: string[], room: { left: number }): void {
  if (room.left <= 0) return;
  const piece = text.length <= room.left ? text : text.slice(0, room.left);
  out.push(piece);
  room.left -= piece.length;
}
