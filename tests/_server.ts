/**
 * Test helpers: a real server on a free port in a temporary app directory, and
 * requests built the way real clients send them.
 *
 * @module
 */

import type { Settings } from "../lib/app/settings.ts";
import type { Level } from "../lib/app/tokens.ts";
import { silentLogger } from "../lib/base/log.ts";
import {
  META_CLIENT_CAPABILITIES,
  META_PROTOCOL_VERSION,
} from "../lib/protocol/envelope.ts";
import type { JsonObject } from "../lib/protocol/jsonrpc.ts";
import { MODERN_VERSION } from "../lib/protocol/versions.ts";
import {
  type RunningServer,
  saveSettings,
  type StartOptions,
  startServer,
} from "../lib/serve.ts";
import { assertSchema } from "./_schema.ts";

/** A started server that cleans up after itself. */
export interface TestServer extends AsyncDisposable {
  readonly server: RunningServer;
  readonly home: string;
  readonly url: string;
  readonly port: number;
  /**
   * The plaintext of the server's default test token (null with `token:
   * null`). The request helpers send it unless a test sets `authorization`.
   */
  readonly token: string | null;
  /** Mint another token; returns its plaintext and id. */
  mint(
    level: Level,
    options?: { name?: string; connections?: string[]; expiresAt?: number },
  ): Promise<{ plaintext: string; id: string }>;
}

/** Default `Authorization` per server URL, used by the request helpers. */
const defaultAuthorization = new Map<string, string>();

/**
 * Start a server in a fresh temporary home. Use with `await using`.
 *
 * Unless `token` says otherwise, a `readOnly` token is minted and the request
 * helpers authenticate with it, so a test is about its own subject and not
 * about authentication (tests/server/auth_test.ts is about that).
 */
export async function startTestServer(
  options: Partial<StartOptions> & {
    settings?: Partial<Settings>;
    token?: Level | null;
  } = {},
): Promise<TestServer> {
  // A home the caller passed is the caller's to remove.
  const ownHome = options.home === undefined;
  const home = options.home ??
    await Deno.makeTempDir({ prefix: "dbport-test-" });
  if (options.settings !== undefined) {
    await saveSettings(home, options.settings);
  }
  const { settings: _settings, token: level = "readOnly", ...rest } = options;
  const server = await startServer({
    log: silentLogger,
    watchIntervalMs: 50,
    tokenPollMs: 50,
    drainMs: 500,
    ...rest,
    home,
    port: options.port ?? 0,
  });
  const mint: TestServer["mint"] = async (level, extra = {}) => {
    const created = await server.tokens.create({
      name: extra.name ?? `test ${level}`,
      level,
      connections: extra.connections ?? null,
      expiresAt: extra.expiresAt ?? null,
    }, options.now?.());
    await server.syncTokens();
    return { plaintext: created.plaintext, id: created.token.id };
  };
  const token = level === null ? null : (await mint(level)).plaintext;
  if (token !== null) defaultAuthorization.set(server.url, `Bearer ${token}`);
  return {
    server,
    home,
    url: server.url,
    port: server.port,
    token,
    mint,
    async [Symbol.asyncDispose]() {
      defaultAuthorization.delete(server.url);
      await server.stop();
      if (ownHome) await Deno.remove(home, { recursive: true }).catch(() => {});
    },
  };
}

/** Headers with the server's default Authorization added, unless the test set one (null removes). */
function withAuthorization(
  url: string,
  headers: Record<string, string | null>,
): Record<string, string> {
  const out: Record<string, string> = {};
  const given = Object.keys(headers).some((name) =>
    name.toLowerCase() === "authorization"
  );
  const fallback = defaultAuthorization.get(url);
  if (!given && fallback !== undefined) out.authorization = fallback;
  for (const [name, value] of Object.entries(headers)) {
    if (value !== null) out[name] = value;
  }
  return out;
}

/** A loopback port nobody holds right now. */
export function freePort(): number {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const { port } = listener.addr as Deno.NetAddr;
  listener.close();
  return port;
}

/** Whether a path exists. */
export function exists(path: string): Promise<boolean> {
  return Deno.stat(path).then(() => true, () => false);
}

/** The `_meta` envelope of a modern request. */
export function envelope(extra: JsonObject = {}): JsonObject {
  return {
    [META_PROTOCOL_VERSION]: MODERN_VERSION,
    [META_CLIENT_CAPABILITIES]: {},
    ...extra,
  };
}

/** A modern JSON-RPC request body. */
export function modernRequest(
  method: string,
  params: JsonObject = {},
  id: string | number = 1,
  meta: JsonObject = {},
): JsonObject {
  return {
    jsonrpc: "2.0",
    id,
    method,
    params: { ...params, _meta: envelope(meta) },
  };
}

/** The mirrored headers a modern client sends for a body. */
export function modernHeaders(body: JsonObject): Record<string, string> {
  const headers: Record<string, string> = {
    "content-type": "application/json",
    "accept": "application/json, text/event-stream",
    "mcp-protocol-version": MODERN_VERSION,
  };
  const method = body.method;
  if (typeof method === "string" && "id" in body) {
    headers["mcp-method"] = method;
  }
  const params = (body.params ?? {}) as JsonObject;
  if (
    (method === "tools/call" || method === "prompts/get") &&
    typeof params.name === "string"
  ) {
    headers["mcp-name"] = params.name;
  }
  if (method === "resources/read" && typeof params.uri === "string") {
    headers["mcp-name"] = params.uri;
  }
  return headers;
}

/** An answer, read whole. */
export interface Answer {
  status: number;
  headers: Headers;
  text: string;
  // deno-lint-ignore no-explicit-any
  json: any;
}

/** POST a raw body with exact headers. */
export async function post(
  url: string,
  body: string | Uint8Array<ArrayBuffer>,
  headers: Record<string, string | null>,
): Promise<Answer> {
  const response = await fetch(url, {
    method: "POST",
    body,
    headers: withAuthorization(url, headers),
  });
  const text = await response.text();
  let json: unknown = undefined;
  try {
    json = JSON.parse(text);
  } catch { /* not JSON: SSE or empty */ }
  return { status: response.status, headers: response.headers, text, json };
}

/**
 * Check a JSON-RPC answer against the JSON Schema of its revision: every
 * answer the helpers receive is validated, so no test passes on a malformed
 * envelope. Non-JSON-RPC bodies (403/404/405 refusals) are left alone.
 */
function validateAnswer(answer: Answer, version: string): Answer {
  const json = answer.json;
  if (typeof json === "object" && json !== null && json.jsonrpc === "2.0") {
    const errorDef = version === "2025-06-18"
      ? "JSONRPCError"
      : "JSONRPCErrorResponse";
    const resultDef = version === "2025-06-18"
      ? "JSONRPCResponse"
      : "JSONRPCResultResponse";
    // JSON-RPC 2.0 answers `id: null` when the request's id could not be read
    // (a parse error, say); MCP's schema only omits it. Both mean "unknown".
    const { id, ...rest } = json;
    const checked = "error" in json && id === null ? rest : json;
    assertSchema(version, "error" in json ? errorDef : resultDef, checked);
  }
  return answer;
}

/** POST a modern request with correct mirrored headers, plus overrides (null removes). */
export async function postModern(
  url: string,
  body: JsonObject,
  overrides: Record<string, string | null> = {},
): Promise<Answer> {
  const headers: Record<string, string | null> = modernHeaders(body);
  for (const [name, value] of Object.entries(overrides)) {
    headers[name.toLowerCase()] = value;
  }
  return validateAnswer(
    await post(url, JSON.stringify(body), headers),
    MODERN_VERSION,
  );
}

/** POST a legacy request (no envelope); validated against its revision's schema. */
export async function postLegacy(
  url: string,
  body: JsonObject,
  headers: Record<string, string | null> = {},
): Promise<Answer> {
  const answer = await post(url, JSON.stringify(body), {
    "content-type": "application/json",
    "accept": "application/json, text/event-stream",
    ...headers,
  });
  const params = (body.params ?? {}) as JsonObject;
  const version = headers["mcp-protocol-version"] ??
    (typeof params.protocolVersion === "string" &&
        params.protocolVersion.startsWith("2025-")
      ? params.protocolVersion
      : "2025-11-25");
  return validateAnswer(
    answer,
    ["2025-11-25", "2025-06-18"].includes(version) ? version : "2025-11-25",
  );
}

/** Open a legacy session; returns its id. */
export async function initializeSession(
  url: string,
  version = "2025-11-25",
  headers: Record<string, string | null> = {},
): Promise<string> {
  const answer = await postLegacy(url, {
    jsonrpc: "2.0",
    id: "init",
    method: "initialize",
    params: {
      protocolVersion: version,
      capabilities: {},
      clientInfo: { name: "test-client", version: "1.0.0" },
    },
  }, headers);
  const id = answer.headers.get("mcp-session-id");
  if (answer.status !== 200 || id === null) {
    throw new Error(`initialize failed: ${answer.status} ${answer.text}`);
  }
  return id;
}

/** Send exact bytes over a socket and read the whole answer (the server closes). */
export async function rawHttp(
  port: number,
  request: string | Uint8Array,
): Promise<{
  status: number;
  head: string;
  body: string;
}> {
  const conn = await Deno.connect({ hostname: "127.0.0.1", port });
  try {
    const bytes = typeof request === "string"
      ? new TextEncoder().encode(request)
      : request;
    let offset = 0;
    while (offset < bytes.length) {
      const n = await conn.write(bytes.subarray(offset)).catch(() => -1);
      if (n < 0) break;
      offset += n;
    }
    const chunks: Uint8Array[] = [];
    const buffer = new Uint8Array(65536);
    for (;;) {
      const n = await conn.read(buffer).catch(() => null);
      if (n === null) break;
      chunks.push(buffer.slice(0, n));
      const text = new TextDecoder().decode(concat(chunks));
      if (isComplete(text)) break;
    }
    const text = new TextDecoder().decode(concat(chunks));
    const split = text.indexOf("\r\n\r\n");
    const head = split < 0 ? text : text.slice(0, split);
    const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(head)?.[1] ?? 0);
    return { status, head, body: split < 0 ? "" : text.slice(split + 4) };
  } finally {
    conn.close();
  }
}

function concat(chunks: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(chunks.reduce((n, c) => n + c.length, 0));
  let offset = 0;
  for (const chunk of chunks) {
    out.set(chunk, offset);
    offset += chunk.length;
  }
  return out;
}

/** A response with Content-Length is complete once that many body bytes arrived. */
function isComplete(text: string): boolean {
  const split = text.indexOf("\r\n\r\n");
  if (split < 0) return false;
  const length = /\r\ncontent-length: (\d+)/i.exec(text.slice(0, split));
  if (length === null) return false;
  return new TextEncoder().encode(text.slice(split + 4)).length >=
    Number(length[1]);
}
