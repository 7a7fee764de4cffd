/**
 * JSON-RPC 2.0 message classification.
 *
 * A body is parsed once and classified as a request, a notification or a
 * response; anything else is an invalid request. Validators return results and
 * never throw (the MCP SDK v2 way), so callers choose the wire error.
 *
 * @module
 */

import { messageOf } from "../base/message_of.ts";
import { MAX_JSON_DEPTH, type TooDeep, tooDeep } from "./json_depth.ts";

/** A JSON-RPC id as MCP allows it: a string or an integer (0 is a real id). */
export type JsonRpcId = string | number;

/** A JSON object. */
export type JsonObject = Record<string, unknown>;

/** A request: has a method and an id. */
export interface JsonRpcRequest {
  kind: "request";
  id: JsonRpcId;
  method: string;
  params: JsonObject;
}

/** A notification: has a method and no id. */
export interface JsonRpcNotification {
  kind: "notification";
  method: string;
  params: JsonObject;
}

/** A response sent to us (which a server never accepts). */
export interface JsonRpcResponseMessage {
  kind: "response";
  id: JsonRpcId | null;
}

/** A body that is JSON but not a valid JSON-RPC message; `id` is kept when it could be read. */
export interface JsonRpcInvalid {
  kind: "invalid";
  id: JsonRpcId | null;
  reason: string;
}

/** The outcome of classifying a parsed body. */
export type JsonRpcMessage =
  | JsonRpcRequest
  | JsonRpcNotification
  | JsonRpcResponseMessage
  | JsonRpcInvalid;

/** Whether a value is a plain JSON object (not null, not an array). */
export function isJsonObject(value: unknown): value is JsonObject {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** Whether a value is an object whose every value is a string. */
export function isStringRecord(
  value: unknown,
): value is Record<string, string> {
  return isJsonObject(value) &&
    Object.values(value).every((item) => typeof item === "string");
}

/** The strings of a list (none when it is not a list). */
export function stringsOf(value: unknown): string[] {
  return Array.isArray(value)
    ? value.filter((item): item is string => typeof item === "string")
    : [];
}

/** Whether a value is a usable id: a string, or an integer that JSON can carry exactly. */
export function isJsonRpcId(value: unknown): value is JsonRpcId {
  return typeof value === "string" ||
    (typeof value === "number" && Number.isSafeInteger(value));
}

/** Parse result of a raw body. */
export type ParseResult = { ok: true; value: unknown } | {
  ok: false;
  reason: string;
  /**
   * The wire code when it is not -32700: a body nested past
   * {@linkcode MAX_JSON_DEPTH} is -32602 inside `params` (naming the
   * argument in `data`), -32600 elsewhere.
   */
  code?: -32600 | -32602;
  data?: JsonObject;
};

const decoder = new TextDecoder("utf-8", { fatal: true });

/** Decode UTF-8 and parse JSON exactly once; never throws. */
export function parseJsonBody(bytes: Uint8Array): ParseResult {
  let text: string;
  try {
    text = decoder.decode(bytes);
  } catch {
    return { ok: false, reason: "Cannot parse body: it is not UTF-8" };
  }
  const deep = tooDeep(text);
  if (deep !== null) return tooDeepResult(deep);
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch (error) {
    const detail = messageOf(error);
    return { ok: false, reason: `Cannot parse body as JSON: ${detail}` };
  }
}

/** The refusal of a body nested past the bound, placed where it nests. */
function tooDeepResult(deep: TooDeep): ParseResult {
  const where = deep.path.length === 0
    ? "the body"
    : `"${deep.path.join(".")}"`;
  const reason = `${where} nests deeper than ${MAX_JSON_DEPTH} levels`;
  if (!deep.object || deep.path[0] !== "params") {
    return { ok: false, reason: `Invalid request: ${reason}`, code: -32600 };
  }
  const argument = deep.path[1] === "arguments" ? deep.path[2] : undefined;
  return {
    ok: false,
    reason: `Invalid params: ${reason}`,
    code: -32602,
    ...(argument === undefined ? {} : { data: { argument } }),
  };
}

/** Classify a parsed JSON value as a JSON-RPC 2.0 message. */
export function classifyMessage(value: unknown): JsonRpcMessage {
  if (Array.isArray(value)) {
    return {
      kind: "invalid",
      id: null,
      reason: "Batch requests are not supported: send one JSON object",
    };
  }
  if (!isJsonObject(value)) {
    return {
      kind: "invalid",
      id: null,
      reason: "Invalid request: the body must be a JSON object",
    };
  }
  const id = isJsonRpcId(value.id) ? value.id : null;
  if (value.jsonrpc !== "2.0") {
    return {
      kind: "invalid",
      id,
      reason: 'Invalid request: "jsonrpc" must be "2.0"',
    };
  }
  const hasId = "id" in value;
  if (!("method" in value)) {
    if (hasId && ("result" in value || "error" in value)) {
      return { kind: "response", id };
    }
    return {
      kind: "invalid",
      id,
      reason: 'Invalid request: "method" is missing',
    };
  }
  if (typeof value.method !== "string" || value.method === "") {
    return {
      kind: "invalid",
      id,
      reason: 'Invalid request: "method" must be a non-empty string',
    };
  }
  const rawParams = value.params;
  if (rawParams !== undefined && !isJsonObject(rawParams)) {
    return {
      kind: "invalid",
      id,
      reason: 'Invalid request: "params" must be an object',
    };
  }
  const params = rawParams ?? {};
  if (!hasId) {
    return { kind: "notification", method: value.method, params };
  }
  if (id === null) {
    return {
      kind: "invalid",
      id: null,
      reason: `Invalid request: "id" must be a string or an integer, got ${
        JSON.stringify(value.id)
      }`,
    };
  }
  return { kind: "request", id, method: value.method, params };
}
