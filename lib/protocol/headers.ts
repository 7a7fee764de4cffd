/**
 * Mirrored request headers of the modern era (docs/wire.md "Required headers").
 *
 * Each check returns the first disagreement as a `-32020` wire error, or null.
 * Header names are case-insensitive; values are case-sensitive.
 *
 * @module
 */

import { toBase64 } from "./base64.ts";
import { wire, type WireError } from "./errors.ts";
import { previewJson } from "../base/json_preview.ts";
import { isJsonObject, type JsonObject } from "./jsonrpc.ts";

/** Read access to request headers (a `Headers` object fits). */
export interface HeaderSource {
  get(name: string): string | null;
  forEach(callback: (value: string, name: string) => void): void;
  /**
   * Whether any header's name starts with `prefix` (lowercase): a source
   * that answers it spares the walk of every header when none does.
   */
  hasPrefix?(prefix: string): boolean;
}

/** Prefix of the optional per-parameter headers. */
export const PARAM_HEADER_PREFIX = "mcp-param-";

const WRAP_PREFIX = "=?base64?";
const WRAP_SUFFIX = "?=";
const BASE64 =
  /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;
// RFC 9110 token characters, for the field name after `Mcp-Param-`.
const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
const utf8 = new TextDecoder("utf-8", { fatal: true });

/** The outcome of decoding one header value. */
export type DecodedValue = { ok: true; value: string } | {
  ok: false;
  problem: string;
};

/**
 * Decode a mirrored header value. A value wrapped as `=?base64?<b64>?=` (exact,
 * lowercase) is standard base64 of UTF-8 and is decoded; any other value must be
 * printable ASCII. A control character or a malformed wrapper is refused.
 */
export function decodeHeaderValue(raw: string): DecodedValue {
  const value = raw.trim();
  if (/[^\x20-\x7e]/.test(value)) {
    return {
      ok: false,
      problem:
        "contains a control or non-ASCII character (send it as =?base64?\u2026?=)",
    };
  }
  if (!value.startsWith(WRAP_PREFIX) || !value.endsWith(WRAP_SUFFIX)) {
    return { ok: true, value };
  }
  if (value.length < WRAP_PREFIX.length + WRAP_SUFFIX.length) {
    return { ok: false, problem: "has a malformed =?base64?\u2026?= wrapper" };
  }
  const payload = value.slice(WRAP_PREFIX.length, -WRAP_SUFFIX.length);
  if (!BASE64.test(payload)) {
    return {
      ok: false,
      problem:
        "has a malformed =?base64?\u2026?= wrapper: the payload is not base64",
    };
  }
  try {
    const binary = atob(payload);
    const bytes = Uint8Array.from(binary, (c) => c.charCodeAt(0));
    return { ok: true, value: utf8.decode(bytes) };
  } catch {
    return {
      ok: false,
      problem:
        "has a malformed =?base64?\u2026?= wrapper: the payload is not UTF-8",
    };
  }
}

/** Encode a value for a header the way clients must (the bridge uses this). */
export function encodeHeaderValue(value: string): string {
  const plain = /^[\x21-\x7e](?:[\x20-\x7e]*[\x21-\x7e])?$/.test(value) &&
    !(value.startsWith(WRAP_PREFIX) && value.endsWith(WRAP_SUFFIX));
  if (plain) return value;
  return `${WRAP_PREFIX}${
    toBase64(new TextEncoder().encode(value))
  }${WRAP_SUFFIX}`;
}

const mismatch = wire.headerMismatch;

/** Whether a Content-Type is `application/json` or any `+json` type. */
export function isJsonContentType(value: string | null): boolean {
  if (value === null) return false;
  const type = value.split(";", 1)[0]!.trim().toLowerCase();
  return type === "application/json" ||
    /^[a-z0-9!#$&^_.+-]+\/[a-z0-9!#$&^_.+-]+\+json$/.test(type);
}

/** Check `Content-Type` (both eras: the body must be JSON). */
export function checkContentType(headers: HeaderSource): WireError | null {
  const value = headers.get("content-type");
  if (value === null) return mismatch("Content-Type", "is missing");
  return isJsonContentType(value) ? null : mismatch(
    "Content-Type",
    `must be application/json or a +json type, got "${value}"`,
  );
}

/** Compare one required header with the body value it mirrors. */
function checkMirror(
  headers: HeaderSource,
  name: string,
  expected: string,
): WireError | null {
  const raw = headers.get(name);
  if (raw === null) return mismatch(name, "is missing");
  const decoded = decodeHeaderValue(raw);
  if (!decoded.ok) return mismatch(name, decoded.problem);
  if (decoded.value !== expected) {
    return mismatch(
      name,
      `is "${decoded.value}" but the body says "${expected}"`,
    );
  }
  return null;
}

/** The body value `Mcp-Name` mirrors for a method, if it has one. */
function nameTarget(method: string, params: JsonObject): {
  field: string;
  value: unknown;
} | null {
  if (method === "tools/call" || method === "prompts/get") {
    return { field: "params.name", value: params.name };
  }
  if (method === "resources/read") {
    return { field: "params.uri", value: params.uri };
  }
  return null;
}

/**
 * The first check of a modern request, before any version is judged:
 * `MCP-Protocol-Version` must be sent and equal the `_meta` version (when
 * that is a non-empty string; a missing one is the envelope's `-32602`). A
 * header and body that disagree are `-32020`, whichever version either names.
 */
export function checkVersionHeader(
  headers: HeaderSource,
  metaVersion: unknown,
): WireError | null {
  if (typeof metaVersion !== "string" || metaVersion === "") return null;
  const version = headers.get("mcp-protocol-version");
  if (version === null) return mismatch("MCP-Protocol-Version", "is missing");
  if (version.trim() !== metaVersion) {
    return mismatch(
      "MCP-Protocol-Version",
      `is "${version.trim()}" but _meta names "${metaVersion}"`,
    );
  }
  return null;
}

/**
 * Check the mirrored headers of a modern request: `Content-Type`,
 * `MCP-Protocol-Version`, `Mcp-Method`, `Mcp-Name` and any `Mcp-Param-*`.
 */
export function checkMirroredHeaders(
  headers: HeaderSource,
  message: { method: string; params: JsonObject },
  protocolVersion: string,
): WireError | null {
  const contentType = checkContentType(headers);
  if (contentType) return contentType;
  const version = headers.get("mcp-protocol-version");
  if (version === null) return mismatch("MCP-Protocol-Version", "is missing");
  if (version.trim() !== protocolVersion) {
    return mismatch(
      "MCP-Protocol-Version",
      `is "${version.trim()}" but _meta names "${protocolVersion}"`,
    );
  }
  const method = checkMirror(headers, "Mcp-Method", message.method);
  if (method) return method;
  const target = nameTarget(message.method, message.params);
  if (target !== null) {
    if (typeof target.value === "string") {
      const name = checkMirror(headers, "Mcp-Name", target.value);
      if (name) return name;
    } else if (headers.get("mcp-name") !== null) {
      return mismatch(
        "Mcp-Name",
        `is sent but ${target.field} is not a string`,
      );
    }
  }
  return checkParamHeaders(headers, message);
}

/** Check every `Mcp-Param-<field>` header that was sent. */
export function checkParamHeaders(
  headers: HeaderSource,
  message: { method: string; params: JsonObject },
): WireError | null {
  if (headers.hasPrefix?.(PARAM_HEADER_PREFIX) === false) return null;
  const sent: [string, string][] = [];
  headers.forEach((value, name) => {
    if (name.toLowerCase().startsWith(PARAM_HEADER_PREFIX)) {
      sent.push([name, value]);
    }
  });
  if (sent.length === 0) return null;
  const scope = message.method === "tools/call"
    ? message.params.arguments
    : message.params;
  for (const [name, raw] of sent) {
    const field = name.slice(PARAM_HEADER_PREFIX.length);
    const label = `Mcp-Param-${field}`;
    if (!TOKEN.test(field)) return mismatch(label, "names no valid field");
    const decoded = decodeHeaderValue(raw);
    if (!decoded.ok) return mismatch(label, decoded.problem);
    const found = isJsonObject(scope) ? findField(scope, field) : undefined;
    if (found === undefined) {
      return mismatch(label, `names a field the body does not have`);
    }
    if (!valueMatches(found.value, decoded.value)) {
      return mismatch(
        label,
        `is "${decoded.value}" but the body has ${previewJson(found.value)}`,
      );
    }
  }
  return null;
}

/**
 * Find a field by case-insensitive name: the object's own keys first, then
 * nested objects breadth-first (docs/wire.md "Required headers": descending into nested objects).
 */
function findField(
  root: JsonObject,
  field: string,
): { value: unknown } | undefined {
  const wanted = field.toLowerCase();
  const queue: JsonObject[] = [root];
  for (let i = 0; i < queue.length; i++) {
    const object = queue[i]!;
    for (const [key, value] of Object.entries(object)) {
      if (key.toLowerCase() === wanted) return { value };
    }
    for (const value of Object.values(object)) {
      if (isJsonObject(value)) queue.push(value);
    }
  }
  return undefined;
}

const NUMBER = /^-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?$/;

/** Strings compare as text, numbers numerically, booleans as `true`/`false`. */
function valueMatches(body: unknown, header: string): boolean {
  if (typeof body === "string") return body === header;
  if (typeof body === "number") {
    return NUMBER.test(header) && Number(header) === body;
  }
  if (typeof body === "boolean") return header === String(body);
  // null, arrays and objects never match.
  return false;
}
