/**
 * `POST /mcp`: one JSON-RPC message in, one answer out.
 *
 * The body is parsed once and classified; notifications are answered 202; a
 * request is routed by era - modern requests prove their envelope and mirrored
 * headers, legacy ones their session - and handed to the dispatcher.
 *
 * @module
 */

import type { AppEnv } from "./env.ts";
import { connectionSignal } from "./connection_signal.ts";
import type { Context } from "hono";
import type { Principal } from "../features/context.ts";
import { initializeResult } from "../features/discover.ts";
import {
  isModernRequest,
  META_PROTOCOL_VERSION,
  metaOf,
  parseEnvelope,
  readProgressToken,
  traceOf,
} from "../protocol/envelope.ts";
import { ErrorCode, wire, WireError } from "../protocol/errors.ts";
import {
  checkContentType,
  checkMirroredHeaders,
  checkVersionHeader,
  type HeaderSource,
} from "../protocol/headers.ts";
import {
  classifyMessage,
  isJsonObject,
  isJsonRpcId,
  type JsonRpcRequest,
  parseJsonBody,
} from "../protocol/jsonrpc.ts";
import {
  type Era,
  isLegacyVersion,
  LEGACY_VERSIONS,
  SUPPORTED_VERSIONS,
} from "../protocol/versions.ts";
import type { Dispatcher } from "./dispatch.ts";
import { HttpError } from "./http_error.ts";
import { type Answer, type JsonAnswer, toResponse } from "./answer.ts";
import type { InFlightRegistry } from "./inflight.ts";
import type { MethodSpec, MethodTable } from "./methods.ts";
import type { SessionStore } from "./sessions.ts";

/** What the endpoint needs. */
export interface EndpointDeps {
  methods: MethodTable;
  sessions: SessionStore;
  dispatcher: Dispatcher;
  inflight: InFlightRegistry;
}

/** One `POST /mcp`, past the guards. */
export interface McpPost {
  /** The body, read once under the cap. */
  body: Uint8Array;
  headers: HeaderSource;
  principal: Principal;
  /** Aborts when the client's connection drops. */
  connection: AbortSignal;
}

/**
 * Answer one `POST /mcp` past the guards; a refusal is thrown as an
 * {@linkcode HttpError}. Shared by the Hono handler and the fast path
 * (`mcp_post.ts`).
 */
export function answerPost(
  deps: EndpointDeps,
  post: McpPost,
): Promise<Answer> {
  const parsed = parseJsonBody(post.body);
  if (!parsed.ok) {
    throw HttpError.wire(
      new WireError(
        parsed.code ?? ErrorCode.ParseError,
        parsed.reason,
        parsed.data,
      ),
    );
  }
  const message = classifyMessage(parsed.value);
  switch (message.kind) {
    case "invalid":
      throw HttpError.wire(wire.invalidRequest(message.reason), message.id);
    case "response":
      throw HttpError.wire(
        wire.invalidRequest(
          "Invalid request: a JSON-RPC response cannot be sent to the server",
        ),
        message.id,
      );
    case "notification":
      // Pre-dispatch check 4: only notifications/cancelled is acted on; it
      // cancels a request of the same principal only (docs/wire.md "Cancellation").
      if (
        message.method === "notifications/cancelled" &&
        isJsonRpcId(message.params.requestId)
      ) {
        deps.inflight.cancel(post.principal.key, message.params.requestId);
      }
      return Promise.resolve({ status: 202, headers: {} });
    case "request": {
      const { headers, principal, connection } = post;
      return isModernRequest(
          message.params,
          headers.get("mcp-protocol-version"),
        )
        ? modern(deps, message, headers, principal, connection)
        : legacy(deps, message, headers, principal, connection);
    }
  }
}

/** The `POST /mcp` handler of the Hono app. */
export function mcpEndpoint(deps: EndpointDeps) {
  return async function mcpEndpoint(c: Context<AppEnv>): Promise<Response> {
    return toResponse(
      await answerPost(deps, {
        body: c.get("body"),
        headers: c.req.raw.headers,
        principal: c.get("principal"),
        connection: connectionSignal(c),
      }),
    );
  };
}

function modern(
  deps: EndpointDeps,
  message: JsonRpcRequest,
  headers: HeaderSource,
  principal: Principal,
  connection: AbortSignal,
): Promise<Answer> {
  // Header and body disagreeing is -32020 before any version check.
  const disagree = checkVersionHeader(
    headers,
    metaOf(message.params)?.[META_PROTOCOL_VERSION],
  );
  if (disagree !== null) throw HttpError.wire(disagree, message.id);
  const parsed = parseEnvelope(message.params);
  if (!parsed.ok) throw HttpError.wire(parsed.error, message.id);
  const { envelope } = parsed;
  const mismatch = checkMirroredHeaders(
    headers,
    message,
    envelope.protocolVersion,
  );
  if (mismatch !== null) throw HttpError.wire(mismatch, message.id);
  const spec = methodFor(deps, message, "modern");
  return deps.dispatcher.answer({
    spec,
    id: message.id,
    era: "modern",
    protocolVersion: envelope.protocolVersion,
    params: message.params,
    clientCapabilities: envelope.clientCapabilities,
    clientInfo: envelope.clientInfo,
    trace: envelope.trace,
    principal,
    progressToken: envelope.progressToken,
    session: null,
    connection,
  });
}

function legacy(
  deps: EndpointDeps,
  message: JsonRpcRequest,
  headers: HeaderSource,
  principal: Principal,
  connection: AbortSignal,
): Promise<Answer> {
  const contentType = checkContentType(headers);
  if (contentType !== null) throw HttpError.wire(contentType, message.id);
  if (message.method === "initialize") {
    const refused = deps.dispatcher.admit(principal);
    if (refused !== null) throw HttpError.wire(refused, message.id);
    return Promise.resolve(initialize(deps, message, principal));
  }
  const spec = methodFor(deps, message, "legacy");
  const sessionId = headers.get("mcp-session-id");
  if (sessionId === null) {
    throw HttpError.wire(
      wire.invalidRequest(
        "Invalid request: the Mcp-Session-Id header is missing (call initialize first, or send the 2026-07-28 _meta envelope)",
      ),
      message.id,
    );
  }
  const found = deps.sessions.lookup(sessionId.trim(), principal.key);
  if (!found.ok) {
    throw HttpError.wire(
      new WireError(
        ErrorCode.SessionNotFound,
        found.problem === "unknown"
          ? "Session not found: it ended or was evicted; call initialize again"
          : "Session not found for this token; call initialize again",
      ),
      message.id,
    );
  }
  const { session } = found;
  const version = headers.get("mcp-protocol-version")?.trim();
  if (version !== undefined) {
    if (!isLegacyVersion(version)) {
      throw HttpError.wire(unsupportedVersion(version), message.id);
    }
    if (version !== session.protocolVersion) {
      throw HttpError.wire(
        wire.headerMismatch(
          "MCP-Protocol-Version",
          `is "${version}" but the session negotiated "${session.protocolVersion}"`,
        ),
        message.id,
      );
    }
  }
  const meta = metaOf(message.params);
  const token = readProgressToken(meta);
  if (!token.ok) throw HttpError.wire(token.error, message.id);
  return deps.dispatcher.answer({
    spec,
    id: message.id,
    era: "legacy",
    protocolVersion: session.protocolVersion,
    params: message.params,
    clientCapabilities: session.clientCapabilities,
    clientInfo: session.clientInfo,
    trace: traceOf(meta),
    principal,
    progressToken: token.value,
    session,
    connection,
  });
}

/**
 * The method's spec, or `-32601` (HTTP 404) for an unknown method and for one
 * the request's era does not have (docs/wire.md "JSON-RPC methods").
 */
function methodFor(
  deps: EndpointDeps,
  message: JsonRpcRequest,
  era: Era,
): MethodSpec {
  const spec = deps.methods.get(message.method);
  if (spec === undefined || !spec.eras.includes(era)) {
    throw HttpError.wire(wire.methodNotFound(message.method), message.id);
  }
  return spec;
}

function unsupportedVersion(version: unknown): WireError {
  return new WireError(
    ErrorCode.UnsupportedProtocolVersion,
    `Unsupported protocol version ${
      JSON.stringify(version)
    }: initialize accepts ${
      LEGACY_VERSIONS.join(", ")
    }; 2026-07-28 clients call server/discover with the _meta envelope instead`,
    { supported: [...SUPPORTED_VERSIONS], requested: version },
  );
}

/** Legacy `initialize`: negotiate, mint a session bound to the principal. */
function initialize(
  deps: EndpointDeps,
  message: JsonRpcRequest,
  principal: Principal,
): JsonAnswer {
  const { protocolVersion, capabilities, clientInfo } = message.params;
  if (
    typeof protocolVersion !== "string" || !isLegacyVersion(protocolVersion)
  ) {
    throw HttpError.wire(unsupportedVersion(protocolVersion), message.id);
  }
  if (capabilities !== undefined && !isJsonObject(capabilities)) {
    throw HttpError.wire(
      wire.invalidParams(
        "Invalid params for initialize: capabilities must be an object",
      ),
      message.id,
    );
  }
  if (
    clientInfo !== undefined &&
    (!isJsonObject(clientInfo) || typeof clientInfo.name !== "string")
  ) {
    throw HttpError.wire(
      wire.invalidParams(
        "Invalid params for initialize: clientInfo must be an object with a string name",
      ),
      message.id,
    );
  }
  const session = deps.sessions.create({
    protocolVersion,
    principalKey: principal.key,
    clientCapabilities: capabilities ?? {},
    ...(clientInfo === undefined ? {} : {
      clientInfo: {
        name: clientInfo.name as string,
        ...(typeof clientInfo.title === "string"
          ? { title: clientInfo.title }
          : {}),
        ...(typeof clientInfo.version === "string"
          ? { version: clientInfo.version }
          : {}),
      },
    }),
  });
  return {
    status: 200,
    body: {
      jsonrpc: "2.0",
      id: message.id,
      result: initializeResult(protocolVersion),
    },
    headers: { "mcp-session-id": session.id },
  };
}
