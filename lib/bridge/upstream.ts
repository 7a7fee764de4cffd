/**
 * The bridge's side of HTTP: the modern request headers, the server's proof
 * of identity (`server/discover` must answer the handshake's instanceId and
 * list 2026-07-28), and the JSON-RPC errors for answers that carry none.
 *
 * @module
 */

import { ErrorCode } from "../protocol/errors.ts";
import { encodeHeaderValue } from "../protocol/headers.ts";
import {
  BRIDGE_EXECUTABLE,
  INSTANCE_ID_META_KEY,
  SERVICE_NAME,
  SERVICE_VERSION,
} from "../base/identity.ts";
import { isJsonObject, type JsonObject } from "../protocol/jsonrpc.ts";
import { MODERN_VERSION } from "../protocol/versions.ts";
import {
  META_CLIENT_CAPABILITIES,
  META_CLIENT_INFO,
  META_PROTOCOL_VERSION,
} from "../protocol/envelope.ts";

/** A failure the bridge reports as a JSON-RPC error (and on stderr). */
export class BridgeFailure extends Error {
  override name = "BridgeFailure";
  readonly code: number;

  constructor(code: number, message: string) {
    super(message);
    this.code = code;
  }
}

/** Where the bridge forwards to, as the trusted handshake says. */
export interface Endpoint {
  url: string;
  token: string;
  instanceId: string;
  handshakePath: string;
}

/** What to say when the server cannot be reached. */
export const NOT_RUNNING =
  `${SERVICE_NAME} is not running: start it (\`deno task serve\`, or open the app) and try again`;

/** The headers of a modern request (docs/wire.md "Required headers"). */
export function upstreamHeaders(
  method: string,
  name: string | undefined,
  token: string,
): Record<string, string> {
  const headers: Record<string, string> = {
    "content-type": "application/json",
    accept: "application/json, text/event-stream",
    "mcp-protocol-version": MODERN_VERSION,
    "mcp-method": method,
    authorization: `Bearer ${token}`,
  };
  if (name !== undefined) headers["mcp-name"] = encodeHeaderValue(name);
  return headers;
}

/** POST one message; an unreachable server is `-33000` saying how to start it. */
export async function post(
  endpoint: Endpoint,
  body: string,
  method: string,
  name: string | undefined,
  signal: AbortSignal,
): Promise<Response> {
  try {
    return await fetch(endpoint.url, {
      method: "POST",
      body,
      headers: upstreamHeaders(method, name, endpoint.token),
      signal,
    });
  } catch (error) {
    if (signal.aborted) throw error;
    throw new BridgeFailure(ErrorCode.ServiceUnavailable, NOT_RUNNING);
  }
}

/** JSON text as a value; undefined when it is not JSON. */
export function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** The JSON-RPC error for an HTTP answer without a JSON-RPC body. */
export function statusError(
  status: number,
  method: string,
): { code: number; message: string } {
  switch (status) {
    case 401:
      return {
        code: ErrorCode.Unauthenticated,
        message: "the server refused the bridge's token",
      };
    case 403:
      return { code: ErrorCode.Forbidden, message: "forbidden by the server" };
    case 404:
      return {
        code: ErrorCode.MethodNotFound,
        message: `method not found: ${method}`,
      };
    case 413:
      return {
        code: ErrorCode.PayloadTooLarge,
        message: "the request is over the server's 10 MB limit",
      };
    case 429:
      return {
        code: ErrorCode.RateLimited,
        message: "rate limited by the server; try again later",
      };
    case 503:
      return {
        code: ErrorCode.ServiceUnavailable,
        message: `${SERVICE_NAME} is unavailable (disabled or stopping)`,
      };
    default:
      return {
        code: ErrorCode.InternalError,
        message: `the server answered HTTP ${status} without a JSON-RPC body`,
      };
  }
}

/** The `_meta` the bridge sends as itself. */
export function bridgeMeta(capabilities: JsonObject = {}): JsonObject {
  return {
    [META_PROTOCOL_VERSION]: MODERN_VERSION,
    [META_CLIENT_CAPABILITIES]: capabilities,
    [META_CLIENT_INFO]: {
      name: BRIDGE_EXECUTABLE,
      title: BRIDGE_EXECUTABLE,
      version: SERVICE_VERSION,
    },
  };
}

/** What a `server/discover` answered with an error means, and what to do. */
function discoverRefusal(response: Response, error: JsonObject): BridgeFailure {
  const code = typeof error.code === "number"
    ? error.code
    : ErrorCode.ServiceUnavailable;
  const said = typeof error.message === "string" ? error.message : "";
  if (code === ErrorCode.RateLimited || response.status === 429) {
    const wait = response.headers.get("retry-after") ?? "a few";
    return new BridgeFailure(
      code,
      `${SERVICE_NAME} is refusing this machine's address for ${wait} s after repeated failed sign-ins (a client with a revoked or mistyped token keeps retrying): remove or update that client's token, then try again (${said})`,
    );
  }
  if (code === ErrorCode.ServiceUnavailable || response.status === 503) {
    return new BridgeFailure(
      code,
      `${SERVICE_NAME} is running but its MCP server is switched off: turn it on in the app (or set "enabled": true in settings.json) and try again (${said})`,
    );
  }
  return new BridgeFailure(
    code,
    `${SERVICE_NAME} refused server/discover: ${
      said || `HTTP ${response.status}`
    }`,
  );
}

/**
 * Call `server/discover` and require the proof: the answer names the
 * handshake's instanceId (only the process that wrote the 0600 file knows it)
 * and lists 2026-07-28 (docs/wire.md "The stdio bridge" 1, 7, 8).
 */
export async function discover(
  endpoint: Endpoint,
  signal: AbortSignal,
): Promise<JsonObject> {
  const body = JSON.stringify({
    jsonrpc: "2.0",
    id: `${BRIDGE_EXECUTABLE}-discover`,
    method: "server/discover",
    params: { _meta: bridgeMeta() },
  });
  const response = await post(
    endpoint,
    body,
    "server/discover",
    undefined,
    signal,
  );
  const json = parseJson(await response.text());
  const result = isJsonObject(json) && isJsonObject(json.result)
    ? json.result
    : undefined;
  const meta = isJsonObject(result?._meta) ? result._meta : {};
  if (response.status === 401 && result === undefined) {
    throw new BridgeFailure(
      ErrorCode.Unauthenticated,
      "the server refused the bridge token of the handshake",
    );
  }
  // A refusal is reported as what it is, with its remedy; only an answer
  // that is not MCP, or names another instance, fails the proof.
  const refused = isJsonObject(json) && isJsonObject(json.error)
    ? json.error
    : undefined;
  if (result === undefined && refused !== undefined) {
    throw discoverRefusal(response, refused);
  }
  if (
    result === undefined || meta[INSTANCE_ID_META_KEY] !== endpoint.instanceId
  ) {
    throw new BridgeFailure(
      ErrorCode.ServiceUnavailable,
      `the local endpoint did not prove it belongs to the service (${endpoint.url} did not answer with the instance id of ${endpoint.handshakePath}). To clear it: quit ${SERVICE_NAME}, delete ${endpoint.handshakePath}, and start ${SERVICE_NAME} again.`,
    );
  }
  const versions = Array.isArray(result.supportedVersions)
    ? result.supportedVersions
    : [];
  if (!versions.includes(MODERN_VERSION)) {
    throw new BridgeFailure(
      ErrorCode.ServiceUnavailable,
      `${SERVICE_NAME} at ${endpoint.url} does not speak ${MODERN_VERSION}: the app is older than this bridge; update ${SERVICE_NAME}`,
    );
  }
  return result;
}
