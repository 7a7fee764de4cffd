/**
 * How deep a JSON text nests, found by one linear scan before `JSON.parse`
 * runs: V8 parses millions of nested arrays slowly (a 9.8 MB body of
 * 4,900,000 `[` held the event loop 5.6 s), and a value that deep is never
 * an argument a tool takes. The scan skips strings (escapes included) and
 * stops at the first bracket past the bound, so it costs one pass over the
 * text at most and allocates only the few short keys it reports.
 *
 * @module
 */

/**
 * The deepest nesting a body may have. A request's own envelope takes 3
 * levels (`{` · `params` · `arguments`) and a tool argument is a scalar,
 * a list of scalars or a small object, so 64 leaves a wide margin.
 */
export const MAX_JSON_DEPTH = 64;

/** Where a text first nests past the bound. */
export interface TooDeep {
  /** The keys leading to the deep value, outermost first (at most 4). */
  path: string[];
  /** Whether the outermost value is an object (a JSON-RPC message's shape). */
  object: boolean;
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;
/** How many outer keys the scan keeps to name where the depth is. */
const KEPT_LEVELS = 4;
/** Each kept level's last string, start and end: reused by every scan. */
const STARTS = new Int32Array(KEPT_LEVELS);
const ENDS = new Int32Array(KEPT_LEVELS);
/** The longest key the scan keeps (a longer one is reported cut). */
const KEPT_KEY = 64;

/**
 * Whether `text` nests deeper than `limit`; `null` when it does not.
 * Malformed text is left to `JSON.parse` to name.
 */
export function tooDeep(
  text: string,
  limit: number = MAX_JSON_DEPTH,
): TooDeep | null {
  // The last string seen at each kept level, as [start, end) of `text`: cut
  // out only for the answer (the scan itself allocates nothing; the scan
  // runs to its end synchronously, so one pair of arrays serves every scan).
  const starts = STARTS;
  const ends = ENDS;
  let kept = 0;
  let depth = 0;
  let object = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) {
      const start = i + 1;
      i = stringEnd(text, start);
      if (depth >= 1 && depth <= KEPT_LEVELS) {
        // A level with no string of its own since it opened: none.
        for (let level = kept; level < depth - 1; level++) {
          starts[level] = ends[level] = 0;
        }
        starts[depth - 1] = start;
        ends[depth - 1] = i;
        kept = depth;
      }
    } else if (c === OPEN_OBJECT || c === OPEN_ARRAY) {
      if (depth === 0) object = c === OPEN_OBJECT;
      depth++;
      kept = Math.min(kept, depth - 1);
      if (depth > limit) {
        return { path: keys(text, starts, ends, kept), object };
      }
    } else if (c === CLOSE_OBJECT || c === CLOSE_ARRAY) {
      depth--;
      kept = Math.max(0, Math.min(kept, depth));
    }
  }
  return null;
}

/** The kept strings, cut to {@linkcode KEPT_KEY} characters. */
function keys(
  text: string,
  starts: Int32Array,
  ends: Int32Array,
  kept: number,
): string[] {
  const path: string[] = [];
  for (let level = 0; level < kept; level++) {
    const start = starts[level]!;
    const end = ends[level]!;
    path.push(
      end - start <= KEPT_KEY
        ? text.slice(start, end)
        : `${text.slice(start, start + KEPT_KEY)}\u2026`,
    );
  }
  return path;
}

/** The index of the quote that closes the string starting at `start`. */
function stringEnd(text: string, start: number): number {
  for (let i = start; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === BACKSLASH) i++;
    else if (c === QUOTE) return i;
  }
  return text.length;
}
