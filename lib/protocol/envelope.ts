/**
 * The modern-era request envelope: `params._meta` (docs/wire.md "Request `_meta`").
 *
 * @module
 */

import { ErrorCode, WireError } from "./errors.ts";
import { isJsonObject, type JsonObject } from "./jsonrpc.ts";
import {
  isLegacyVersion,
  isModernOrLater,
  isModernVersion,
  LEGACY_VERSIONS,
  MODERN_VERSION,
  SUPPORTED_VERSIONS,
} from "./versions.ts";

/** `_meta` key of the protocol version. */
export const META_PROTOCOL_VERSION = "io.modelcontextprotocol/protocolVersion";
/** `_meta` key of the client capabilities. */
export const META_CLIENT_CAPABILITIES =
  "io.modelcontextprotocol/clientCapabilities";
/** `_meta` key of the client info. */
export const META_CLIENT_INFO = "io.modelcontextprotocol/clientInfo";
/** `_meta` key of the server info on results. */
export const META_SERVER_INFO = "io.modelcontextprotocol/serverInfo";
/** `_meta` key of a subscription id. */
export const META_SUBSCRIPTION_ID = "io.modelcontextprotocol/subscriptionId";

/** W3C trace-context keys, carried through untouched. */
export const TRACE_KEYS = Object.freeze(
  ["traceparent", "tracestate", "baggage"] as const,
);

/** Who the client says it is. */
export interface ClientInfo {
  name: string;
  title?: string;
  version?: string;
}

/** W3C trace context from `_meta`. */
export type TraceContext = Partial<Record<typeof TRACE_KEYS[number], string>>;

/** What a valid modern envelope tells us. */
export interface Envelope {
  protocolVersion: string;
  clientCapabilities: JsonObject;
  clientInfo?: ClientInfo;
  progressToken?: string | number;
  trace: TraceContext;
}

/** The `_meta` object of params, or undefined. */
export function metaOf(params: JsonObject): JsonObject | undefined {
  const meta = params._meta;
  return isJsonObject(meta) ? meta : undefined;
}

/**
 * Whether a request belongs to the modern era (docs/wire.md "Versioning"): its `_meta`
 * names a protocol version, or its `MCP-Protocol-Version` header names the
 * modern revision or a later one (then a missing envelope is `-32602`).
 */
export function isModernRequest(
  params: JsonObject,
  versionHeader: string | null,
): boolean {
  const meta = metaOf(params);
  if (meta !== undefined && META_PROTOCOL_VERSION in meta) return true;
  return versionHeader !== null && isModernOrLater(versionHeader.trim());
}

function envelopeError(key: string, problem: string): WireError {
  return new WireError(
    ErrorCode.InvalidParams,
    `Invalid request envelope: _meta["${key}"] ${problem}`,
    { envelope: { key, problem } },
  );
}

/**
 * Read `_meta.progressToken`: absent, a string or an integer; anything else is
 * `-32602`. Both eras carry it the same way.
 */
export function readProgressToken(
  meta: JsonObject | undefined,
): { ok: true; value: string | number | undefined } | {
  ok: false;
  error: WireError;
} {
  const token = meta?.progressToken;
  if (
    token === undefined || typeof token === "string" ||
    (typeof token === "number" && Number.isSafeInteger(token))
  ) return { ok: true, value: token };
  return {
    ok: false,
    error: envelopeError("progressToken", "must be a string or an integer"),
  };
}

/** The result of {@linkcode parseEnvelope}. */
export type EnvelopeResult = { ok: true; envelope: Envelope } | {
  ok: false;
  error: WireError;
};

/**
 * Validate a modern request's envelope. Missing or empty version, a
 * non-object `clientCapabilities`, an ill-typed `progressToken`, `clientInfo`
 * or trace key is `-32602`; a version we do not serve in this era is `-32022`.
 */
export function parseEnvelope(params: JsonObject): EnvelopeResult {
  const meta = metaOf(params);
  if (meta === undefined) {
    return {
      ok: false,
      error: envelopeError(META_PROTOCOL_VERSION, "is missing"),
    };
  }
  const version = meta[META_PROTOCOL_VERSION];
  if (version === undefined || version === null || version === "") {
    return {
      ok: false,
      error: envelopeError(META_PROTOCOL_VERSION, "is missing or empty"),
    };
  }
  if (typeof version !== "string") {
    return {
      ok: false,
      error: envelopeError(META_PROTOCOL_VERSION, "must be a string"),
    };
  }
  if (!isModernVersion(version)) {
    // A legacy version inside a modern envelope is unsupported there: legacy
    // revisions are reached only through `initialize` (docs/wire.md "Versioning").
    return {
      ok: false,
      error: new WireError(
        ErrorCode.UnsupportedProtocolVersion,
        `Unsupported protocol version "${version}" in the _meta envelope: it serves ${MODERN_VERSION}${
          isLegacyVersion(version)
            ? `; ${version} is reached through initialize and a session`
            : `; initialize serves ${LEGACY_VERSIONS.join(", ")}`
        }`,
        { supported: [...SUPPORTED_VERSIONS], requested: version },
      ),
    };
  }
  const capabilities = meta[META_CLIENT_CAPABILITIES];
  if (capabilities === undefined) {
    return {
      ok: false,
      error: envelopeError(META_CLIENT_CAPABILITIES, "is missing"),
    };
  }
  if (!isJsonObject(capabilities)) {
    return {
      ok: false,
      error: envelopeError(META_CLIENT_CAPABILITIES, "must be an object"),
    };
  }
  const envelope: Envelope = {
    protocolVersion: version,
    clientCapabilities: capabilities,
    trace: {},
  };
  const info = meta[META_CLIENT_INFO];
  if (info !== undefined) {
    if (!isJsonObject(info) || typeof info.name !== "string") {
      return {
        ok: false,
        error: envelopeError(
          META_CLIENT_INFO,
          "must be an object with a string name",
        ),
      };
    }
    const clientInfo: ClientInfo = { name: info.name };
    if (typeof info.title === "string") clientInfo.title = info.title;
    if (typeof info.version === "string") clientInfo.version = info.version;
    envelope.clientInfo = clientInfo;
  }
  const token = readProgressToken(meta);
  if (!token.ok) return token;
  if (token.value !== undefined) envelope.progressToken = token.value;
  for (const key of TRACE_KEYS) {
    const value = meta[key];
    if (value === undefined) continue;
    if (typeof value !== "string") {
      return { ok: false, error: envelopeError(key, "must be a string") };
    }
    envelope.trace[key] = value;
  }
  return { ok: true, envelope };
}

/**
 * The W3C trace context of a legacy request's `_meta`: string values are
 * carried through, anything else is ignored (legacy `_meta` has no rules to
 * enforce).
 */
export function traceOf(meta: JsonObject | undefined): TraceContext {
  const trace: TraceContext = {};
  if (meta === undefined) return trace;
  for (const key of TRACE_KEYS) {
    const value = meta[key];
    if (typeof value === "string") trace[key] = value;
  }
  return trace;
}
