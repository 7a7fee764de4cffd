/**
 * What the activity log records about one request: who, which client, what it
 * named, what its handler resolved (`ctx.record`: the connection, the SQL),
 * how it ended. Built from the dispatch and its outcome; the SQL text a call
 * recorded is reduced to its SHA-256 digest here, before anything queues.
 *
 * @module
 */

import { capClientFields } from "./activity_fields.ts";
import type { ActivityEntry, Outcome } from "../app/activity_log.ts";
import { sha256Hex } from "../app/digest.ts";
import type { CallRecord, Principal } from "../features/context.ts";
import type { ClientInfo, TraceContext } from "../protocol/envelope.ts";
import { ErrorCode, TOOL_ERROR_CODES } from "../protocol/errors.ts";
import { isJsonObject, type JsonObject } from "../protocol/jsonrpc.ts";

/** Where entries go. */
export type ActivitySink = (entry: ActivityEntry) => void;

/** A sink that drops everything (tests, or a server without a state db). */
export const discardActivity: ActivitySink = () => {};

/** What a request named and what it resolved: target, connection, SQL digest. */
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

/**
 * The tool, prompt or resource a request named (its `params.name` or
 * `params.uri`, never its arguments): the log's target, logged even when
 * nothing by that name exists.
 */
export function namedTarget(method: string, params: JsonObject): string | null {
  if (method === "tools/call" || method === "prompts/get") {
    return typeof params.name === "string" ? params.name : null;
  }
  if (method === "resources/read" && typeof params.uri === "string") {
    return params.uri;
  }
  return null;
}

/**
 * A request's details for the log: the target it named, and the connection
 * and SQL its handler recorded (`ctx.record`) - what the feature resolved,
 * whatever its arguments are called. Nothing recorded, nothing logged.
 */
export function callDetails(
  method: string,
  params: JsonObject,
  recorded: CallRecord = {},
): CallDetails {
  return {
    target: namedTarget(method, params),
    connectionId: recorded.connectionId ?? null,
    sqlDigest: recorded.sql === undefined ? null : sqlDigest(recorded.sql),
  };
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
  /** What the handler recorded (ctx.record); absent: nothing ran. */
  recorded?: CallRecord;
  detail?: string | undefined;
}

/** Build the log entry of one request. */
export function activityEntry(input: ActivityInput): ActivityEntry {
  const { principal, method, recorded } = input;
  const ended = outcomeOf(input.ended);
  const object = recorded?.object;
  return capClientFields({
    time: input.time,
    principalKind: principal === null ? "unauthenticated" : principal.kind,
    tokenId: principal?.tokenId ?? null,
    tokenName: principal === null || principal.kind === "anonymous"
      ? null
      : principal.name,
    clientName: input.clientInfo?.name ?? null,
    clientVersion: input.clientInfo?.version ?? null,
    method,
    // callDetails, field by field (no object a request to spread).
    target: method === null ? null : namedTarget(method, input.params),
    connectionId: method === null ? null : recorded?.connectionId ?? null,
    sqlDigest: method === null || recorded?.sql === undefined
      ? null
      : sqlDigest(recorded.sql),
    outcome: ended.outcome,
    errorCode: ended.errorCode,
    durationMs: Math.max(0, Math.round(input.durationMs)),
    traceparent: input.trace.traceparent ?? null,
    tracestate: input.trace.tracestate ?? null,
    baggage: input.trace.baggage ?? null,
    // A tool error's code first, the object the call worked on, then what
    // the call noted (ctx.note).
    detail: joinDetail(
      ended.detail,
      object === undefined ? null : `on ${object}`,
      input.detail ?? null,
    ),
  });
}

/** The parts that are not null, joined with "; "; null when that is empty. */
function joinDetail(
  first: string | null,
  second: string | null,
  third: string | null,
): string | null {
  let joined: string | null = first;
  if (second !== null) {
    joined = joined === null ? second : `${joined}; ${second}`;
  }
  if (third !== null) joined = joined === null ? third : `${joined}; ${third}`;
  return joined || null;
}
