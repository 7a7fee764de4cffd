/**
 * The error model.
 *
 * Wire errors (a JSON-RPC `error` with code, message and optional `data`, plus
 * the HTTP status the wire reference gives it) are kept apart from tool errors, which
 * are a successful result with `isError: true` and travel in-band.
 *
 * @module
 */

import type { JsonRpcId } from "./jsonrpc.ts";

/** Every JSON-RPC error code the service emits (docs/wire.md "Protocol errors"). */
export const ErrorCode = Object.freeze(
  {
    ParseError: -32700,
    InvalidRequest: -32600,
    MethodNotFound: -32601,
    InvalidParams: -32602,
    InternalError: -32603,
    HeaderMismatch: -32020,
    MissingRequiredClientCapability: -32021,
    UnsupportedProtocolVersion: -32022,
    ServiceUnavailable: -33000,
    SessionNotFound: -33001,
    RequestCancelled: -33002,
    RequestTimeout: -33003,
    PayloadTooLarge: -33005,
    ServerDisabled: -33006,
    Forbidden: -33007,
    TokenExpired: -33008,
    Unauthenticated: -33009,
    RateLimited: -33010,
  } as const,
);

/** A code from {@linkcode ErrorCode}. */
export type ErrorCodeValue = typeof ErrorCode[keyof typeof ErrorCode];

/** The HTTP status each code is answered with (docs/wire.md "Protocol errors" table). */
export const HTTP_STATUS: Readonly<Record<ErrorCodeValue, number>> = Object
  .freeze({
    [-32700]: 400,
    [-32600]: 400,
    [-32601]: 404,
    [-32602]: 400,
    [-32603]: 500,
    [-32020]: 400,
    [-32021]: 400,
    [-32022]: 400,
    [-33000]: 503,
    [-33001]: 404,
    [-33002]: 200,
    [-33003]: 200,
    [-33005]: 413,
    [-33006]: 503,
    [-33007]: 403,
    [-33008]: 401,
    [-33009]: 401,
    [-33010]: 429,
  });

/** The JSON-RPC `error` member. */
export interface JsonRpcErrorObject {
  code: number;
  message: string;
  data?: unknown;
}

/**
 * A protocol error that crosses the wire. Thrown by handlers and checks, turned
 * into one JSON-RPC error response (with the request id) at the edge.
 */
export class WireError extends Error {
  override name = "WireError";
  readonly code: ErrorCodeValue;
  readonly data: unknown;
  /** Extra HTTP headers the answer needs (`Retry-After`, `WWW-Authenticate`). */
  readonly headers: Readonly<Record<string, string>>;

  constructor(
    code: ErrorCodeValue,
    message: string,
    data?: unknown,
    headers: Record<string, string> = {},
  ) {
    super(message);
    this.code = code;
    this.data = data;
    this.headers = headers;
  }

  /** The HTTP status the wire reference assigns to this code. */
  get status(): number {
    return HTTP_STATUS[this.code];
  }

  /** The JSON-RPC `error` member. */
  toJSON(): JsonRpcErrorObject {
    return this.data === undefined
      ? { code: this.code, message: this.message }
      : { code: this.code, message: this.message, data: this.data };
  }
}

/** A complete JSON-RPC error response. */
export function errorResponse(
  id: JsonRpcId | null,
  error: WireError,
): { jsonrpc: "2.0"; id: JsonRpcId | null; error: JsonRpcErrorObject } {
  return { jsonrpc: "2.0", id, error: error.toJSON() };
}

/** Shorthand constructors for the errors raised in many places. */
export const wire = {
  invalidRequest: (message: string) =>
    new WireError(ErrorCode.InvalidRequest, message),
  methodNotFound: (method: string) =>
    new WireError(
      ErrorCode.MethodNotFound,
      `Method not found: "${method}"`,
      { method },
    ),
  invalidParams: (message: string, data?: unknown) =>
    new WireError(ErrorCode.InvalidParams, message, data),
  headerMismatch: (header: string, problem: string) =>
    new WireError(
      ErrorCode.HeaderMismatch,
      `Header mismatch: ${header} ${problem}`,
      { header },
    ),
  internal: (message = "Internal error") =>
    new WireError(ErrorCode.InternalError, message),
  /**
   * `-33007` (403) from a scope check: `WWW-Authenticate` names the error and
   * `data.requiredScopes` the scopes (docs/wire.md "Authentication" 7).
   */
  /**
   * `-33007` (403) from a connection check: the connection's external access,
   * AI policy or the token's allowlist hides it (docs/wire.md "Authentication" 4).
   */
  forbidden: (message: string, data?: unknown) =>
    new WireError(ErrorCode.Forbidden, message, data),
  /** `-33003` (HTTP 200): a statement timeout or the handler deadline ran out. */
  requestTimeout: (message: string) =>
    new WireError(ErrorCode.RequestTimeout, message),
  /** `-33002` (HTTP 200): the request was cancelled. */
  requestCancelled: (message: string) =>
    new WireError(ErrorCode.RequestCancelled, message),
  insufficientScope: (requiredScopes: readonly string[], what: string) =>
    new WireError(
      ErrorCode.Forbidden,
      `Forbidden: ${what} needs the scope ${
        requiredScopes.map((s) => `"${s}"`).join(" and ")
      }, which this token does not have`,
      { requiredScopes: [...requiredScopes].sort() },
      { "www-authenticate": 'Bearer error="insufficient_scope"' },
    ),
} as const;

/** The machine-readable codes a tool error text starts with (docs/wire.md "Tool errors"). */
export const TOOL_ERROR_CODES = Object.freeze(
  [
    "invalid_argument",
    "not_connected",
    "not_found",
    "denied",
    "timeout",
    "unsupported",
    "query_failed",
    "user_cancelled",
    "internal_failure",
  ] as const,
);

/** One of {@linkcode TOOL_ERROR_CODES}. */
export type ToolErrorCode = typeof TOOL_ERROR_CODES[number];

/** The in-band shape of a failed tool call. */
export interface ToolErrorResult {
  [key: string]: unknown;
  content: [{ type: "text"; text: string }];
  isError: true;
}

/**
 * A failed tool call: a successful JSON-RPC result with `isError: true` and one
 * text item `code: message`. The message must already be redacted.
 */
export function toolError(
  code: ToolErrorCode,
  message: string,
): ToolErrorResult {
  return {
    content: [{ type: "text", text: `${code}: ${message}` }],
    isError: true,
  };
}
