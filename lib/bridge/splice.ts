/**
 * Adding `_meta` keys to a request's raw JSON text without re-encoding the
 * rest of it (issue: a legacy client's requests get the envelope "without
 * re-encoding the rest of the message"), so numbers such as `1.0` or integers
 * past 2^53 reach the server exactly as the client wrote them.
 *
 * @module
 */

import type { JsonObject } from "../protocol/jsonrpc.ts";

/** Index of the first non-whitespace character at or after `i`. */
function skipSpace(text: string, i: number): number {
  while (i < text.length && /\s/.test(text[i]!)) i++;
  return i;
}

/** End (exclusive) of the JSON string starting at `i`. */
function skipString(text: string, i: number): number {
  i++;
  while (i < text.length) {
    if (text[i] === "\\") i += 2;
    else if (text[i] === '"') return i + 1;
    else i++;
  }
  return text.length;
}

/** End (exclusive) of the JSON value starting at `i`. */
function skipValue(text: string, i: number): number {
  const c = text[i];
  if (c === '"') return skipString(text, i);
  if (c === "{" || c === "[") {
    let depth = 0;
    while (i < text.length) {
      const d = text[i]!;
      if (d === '"') {
        i = skipString(text, i);
        continue;
      }
      if (d === "{" || d === "[") depth++;
      else if (d === "}" || d === "]") {
        depth--;
        if (depth === 0) return i + 1;
      }
      i++;
    }
    return text.length;
  }
  while (i < text.length && !/[,}\]\s]/.test(text[i]!)) i++;
  return i;
}

/** Where the value of `key` starts in the object starting at `open`, or -1. */
function valueOf(text: string, open: number, key: string): number {
  let i = skipSpace(text, open + 1);
  while (i < text.length && text[i] !== "}") {
    const keyEnd = skipString(text, i);
    const name = JSON.parse(text.slice(i, keyEnd)) as string;
    const valueStart = skipSpace(text, skipSpace(text, keyEnd) + 1);
    if (name === key) return valueStart;
    i = skipSpace(text, skipValue(text, valueStart));
    if (text[i] === ",") i = skipSpace(text, i + 1);
  }
  return -1;
}

/** Whether the object starting at `open` has no members. */
function isEmpty(text: string, open: number): boolean {
  return text[skipSpace(text, open + 1)] === "}";
}

/**
 * Add `meta`'s keys to `params._meta` of the request in `raw`, creating
 * `params` and `_meta` as needed. Keys already present are left as the
 * client wrote them. `raw` must be a JSON object (the caller parsed it).
 */
export function spliceMeta(raw: string, meta: JsonObject): string {
  const top = skipSpace(raw, 0);
  const add = (existing: JsonObject | null) =>
    JSON.stringify(
      Object.fromEntries(
        Object.entries(meta).filter(([k]) => !(existing && k in existing)),
      ),
    ).slice(1, -1);
  const params = valueOf(raw, top, "params");
  if (params === -1) {
    const close = skipValue(raw, top) - 1;
    const comma = isEmpty(raw, top) ? "" : ",";
    return `${raw.slice(0, close)}${comma}"params":{"_meta":{${add(null)}}}${
      raw.slice(close)
    }`;
  }
  if (raw[params] !== "{") return raw;
  const metaAt = valueOf(raw, params, "_meta");
  if (metaAt === -1) {
    const comma = isEmpty(raw, params) ? "" : ",";
    return `${raw.slice(0, params + 1)}"_meta":{${add(null)}}${comma}${
      raw.slice(params + 1)
    }`;
  }
  if (raw[metaAt] !== "{") return raw;
  const existing = JSON.parse(raw.slice(metaAt, skipValue(raw, metaAt)));
  const keys = add(existing);
  if (keys === "") return raw;
  const comma = isEmpty(raw, metaAt) ? "" : ",";
  return `${raw.slice(0, metaAt + 1)}${keys}${comma}${raw.slice(metaAt + 1)}`;
}

/**
 * The message in `raw` with its top-level `id` replaced by `id`, the rest of
 * the text untouched; `raw` unchanged when it has no `id`.
 */
export function replaceId(raw: string, id: string | number | null): string {
  const top = skipSpace(raw, 0);
  if (raw[top] !== "{") return raw;
  const at = valueOf(raw, top, "id");
  if (at === -1) return raw;
  return `${raw.slice(0, at)}${JSON.stringify(id)}${
    raw.slice(skipValue(raw, at))
  }`;
}
