/**
 * What the activity log records about one request: who, which client, what it
 * named, how it ended. Built from the dispatch and its outcome; the SQL text a
 * call carries is reduced to its SHA-256 digest here, before anything queues.
 *
 * @module
 */

import { capClientFields } from "./activity_fields.ts";
import type { ActivityEntry, Outcome } from "../app/activity_log.ts";
import { sha256Hex } from "../app/digest.ts";
import type { Principal } from "../features/context.ts";
import type { ClientInfo, TraceContext } from "../protocol/envelope.ts";
import { ErrorCode, TOOL_ERROR_CODES } from "../protocol/errors.ts";
import { RESOURCE_URI_ROOT } from "../base/identity.ts";
import { isJsonObject, type JsonObject } from "../protocol/jsonrpc.ts";

/** Where entries go. */
export type ActivitySink = (entry: ActivityEntry) => void;

/** A sink that drops everything (tests, or a server without a state db). */
export const discardActivity: ActivitySink = () => {};

/** What a request named: tool or resource, connection, SQL digest. */
export interface CallDetails {
  target: string | null;
  connectionId: string | null;
  sqlDigest: string | null;
}

/** Digests of recent statements: agents repeat theirs, and hashing each was visible in the bench W1 profile. */
const recentDigests = new Map<string, string>();
const RECENT_DIGESTS = 256;

/** The SHA-256 the log keeps instead of a statement's text. */
function sqlDigest(query: string): string {
  let digest = recentDigests.get(query);
  if (digest === undefined) {
    digest = sha256Hex(query);
    // Long statements are hashed each time rather than kept in memory.
    if (query.length <= 4096) {
      if (recentDigests.size >= RECENT_DIGESTS) recentDigests.clear();
      recentDigests.set(query, digest);
    }
  }
  return digest;
}

/** Read what a request's params name, for the log. */
export function callDetails(method: string, params: JsonObject): CallDetails {
  const details: CallDetails = {
    target: null,
    connectionId: null,
    sqlDigest: null,
  };
  if (method === "tools/call" || method === "prompts/get") {
    if (typeof params.name === "string") details.target = params.name;
    const args = params.arguments;
    if (isJsonObject(args)) {
      if (typeof args.connection_id === "string") {
        details.connectionId = args.connection_id;
      }
      if (typeof args.query === "string") {
        details.sqlDigest = sqlDigest(args.query);
      }
    }
  } else if (method === "resources/read" && typeof params.uri === "string") {
    details.target = params.uri;
    const prefix = `${RESOURCE_URI_ROOT}/`;
    if (params.uri.startsWith(prefix)) {
      const id = params.uri.slice(prefix.length).split(/[/?#]/)[0];
      if (id !== undefined && id !== "") {
        details.connectionId = decodeURIComponentSafe(id);
      }
    }
  }
  return details;
}

function decodeURIComponentSafe(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

const DENIED_CODES: ReadonlySet<number> = new Set([
  ErrorCode.Forbidden,
  ErrorCode.TokenExpired,
  ErrorCode.Unauthenticated,
]);

/** How a request ended, from its JSON-RPC error code or its result. */
export function outcomeOf(
  ended: { errorCode: number } | { result: JsonObject },
): { outcome: Outcome; errorCode: number | null; detail: string | null } {
  if ("errorCode" in ended) {
    const code = ended.errorCode;
    const outcome: Outcome = code === ErrorCode.RateLimited
      ? "rateLimited"
      : DENIED_CODES.has(code)
      ? "denied"
      : "error";
    return { outcome, errorCode: code, detail: null };
  }
  const { result } = ended;
  if (result.isError !== true) {
    return { outcome: "success", errorCode: null, detail: null };
  }
  // A tool error's text starts with its machine code (docs/wire.md "Tool errors").
  const content = Array.isArray(result.content) ? result.content[0] : undefined;
  const text = isJsonObject(content) && typeof content.text === "string"
    ? content.text
    : "";
  const code = TOOL_ERROR_CODES.find((c) => text.startsWith(`${c}:`)) ?? null;
  return {
    outcome: code === "denied" || code === "user_cancelled"
      ? "denied"
      : "error",
    errorCode: null,
    detail: code,
  };
}

/** Everything an entry is built from. */
export interface ActivityInput {
  time: number;
  durationMs: number;
  principal: Principal | null;
  clientInfo: ClientInfo | undefined;
  method: string | null;
  params: JsonObject;
  trace: TraceContext;
  ended: { errorCode: number } | { result: JsonObject };
  detail?: string;
}

/** Build the log entry of one request. */
export function activityEntry(input: ActivityInput): ActivityEntry {
  const { principal } = input;
  const details = input.method === null
    ? { target: null, connectionId: null, sqlDigest: null }
    : callDetails(input.method, input.params);
  const ended = outcomeOf(input.ended);
  return capClientFields({
    time: input.time,
    principalKind: principal === null ? "unauthenticated" : principal.kind,
    tokenId: principal?.tokenId ?? null,
    tokenName: principal === null || principal.kind === "anonymous"
      ? null
      : principal.name,
    clientName: input.clientInfo?.name ?? null,
    clientVersion: input.clientInfo?.version ?? null,
    method: input.method,
    ...details,
    outcome: ended.outcome,
    errorCode: ended.errorCode,
    durationMs: Math.max(0, Math.round(input.durationMs)),
    traceparent: input.trace.traceparent ?? null,
    tracestate: input.trace.tracestate ?? null,
    baggage: input.trace.baggage ?? null,
    // A tool error's code first, then what the call noted (ctx.note).
    detail: [ended.detail, input.detail].filter((d) => d != null).join("; ") ||
      null,
  });
}
