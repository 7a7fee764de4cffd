/**
 * The bridge's proxy between one stdio client and the server (docs/wire.md
 * "Stdio bridge"). A modern client's messages are forwarded as they are. A
 * legacy client (`initialize` 2025-11-25/2025-06-18) gets `initialize` and
 * `ping` answered here from the discover result; its requests get the modern
 * `_meta` envelope spliced in, and their answers lose what legacy results do
 * not carry. An `input_required` answer becomes, for a legacy client that
 * declared elicitation, a real `elicitation/create` request over stdio, and
 * the answers go back as `inputResponses` with the `requestState`. SSE
 * answers are relayed frame by frame. A 401 re-reads the handshake once.
 *
 * Every request goes upstream under an id of this bridge's own (unique to its
 * process), and every line written back carries the client's id again: the
 * server sees many stdio clients behind one token, each numbering from 0, and
 * a client's cancellation must reach only its own request (docs/wire.md
 * "Request ids").
 *
 * @module
 */

import { messageOf } from "../base/message_of.ts";
import { ErrorCode } from "../protocol/errors.ts";
import {
  META_CLIENT_CAPABILITIES,
  META_CLIENT_INFO,
  META_PROTOCOL_VERSION,
  META_SERVER_INFO,
} from "../protocol/envelope.ts";
import { BRIDGE_EXECUTABLE } from "../base/identity.ts";
import { isJsonObject, type JsonObject } from "../protocol/jsonrpc.ts";
import { LEGACY_VERSIONS, MODERN_VERSION } from "../protocol/versions.ts";
import { replaceId, spliceMeta } from "./splice.ts";
import {
  BridgeFailure,
  bridgeMeta,
  type Endpoint,
  parseJson,
  post,
  statusError,
} from "./upstream.ts";

/** How many `input_required` rounds one request may take. */
const MAX_ROUNDS = 10;

/** What the proxy needs. */
export interface ProxyDeps {
  /** The endpoint in force. */
  endpoint(): Endpoint;
  /** Re-read and re-prove the handshake (after a 401). */
  refresh(): Promise<Endpoint>;
  /** The server's discover result. */
  discover: JsonObject;
  /** Write one line to the client. */
  write(line: string): Promise<void>;
  log(line: string): void;
}

interface LegacyClient {
  version: string;
  capabilities: JsonObject;
  clientInfo: JsonObject | undefined;
}

/** One stdio client's proxy. */
export class Proxy {
  readonly #deps: ProxyDeps;
  #legacy: LegacyClient | null = null;
  readonly #inflight = new Map<string, AbortController>();
  readonly #awaiting = new Map<string, (message: JsonObject) => void>();
  readonly #tasks = new Set<Promise<void>>();
  /** The upstream id of each running request, by the client's id. */
  readonly #upstream = new Map<string, string>();
  /** The prefix of this bridge's upstream ids: unique to the process. */
  readonly #prefix = `${BRIDGE_EXECUTABLE}-${crypto.randomUUID().slice(0, 8)}-`;
  #next = 1;

  constructor(deps: ProxyDeps) {
    this.#deps = deps;
  }

  /** Handle one line from the client; requests run concurrently. */
  handle(line: string): void {
    let message: unknown;
    try {
      message = JSON.parse(line);
    } catch {
      this.#reply(null, {
        error: { code: ErrorCode.ParseError, message: "Parse error: not JSON" },
      });
      return;
    }
    if (!isJsonObject(message)) {
      this.#reply(null, {
        error: {
          code: ErrorCode.InvalidRequest,
          message: "Invalid request: not a JSON-RPC object",
        },
      });
      return;
    }
    const method = message.method;
    if (typeof method !== "string") {
      // An answer to a request of ours (elicitation/create).
      const waiting = this.#awaiting.get(JSON.stringify(message.id));
      waiting?.(message);
      return;
    }
    if (!("id" in message)) {
      this.#track(this.#notification(message, method));
      return;
    }
    const id = message.id as string | number;
    if (method === "initialize") {
      this.#initialize(id, message);
      return;
    }
    if (method === "ping" && this.#legacy !== null) {
      this.#reply(id, { result: {} });
      return;
    }
    this.#track(this.#request(line, message, method, id));
  }

  /** Abort every pending request and question (stdin closed). */
  abortAll(): void {
    for (const controller of this.#inflight.values()) controller.abort();
    this.#inflight.clear();
  }

  /** Resolves when every running request has ended. */
  async settled(): Promise<void> {
    await Promise.allSettled([...this.#tasks]);
  }

  #track(task: Promise<void>): void {
    this.#tasks.add(task);
    task.finally(() => this.#tasks.delete(task));
  }

  #reply(id: string | number | null, body: JsonObject): Promise<void> {
    return this.#deps.write(JSON.stringify({ jsonrpc: "2.0", id, ...body }));
  }

  #initialize(id: string | number, message: JsonObject): void {
    const params = isJsonObject(message.params) ? message.params : {};
    const asked = typeof params.protocolVersion === "string"
      ? params.protocolVersion
      : "";
    const version = LEGACY_VERSIONS.includes(asked)
      ? asked
      : LEGACY_VERSIONS[0]!;
    this.#legacy = {
      version,
      capabilities: isJsonObject(params.capabilities)
        ? params.capabilities
        : {},
      clientInfo: isJsonObject(params.clientInfo)
        ? params.clientInfo
        : undefined,
    };
    const discover = this.#deps.discover;
    const capabilities = isJsonObject(discover.capabilities)
      ? { ...discover.capabilities }
      : {};
    // Legacy clients have no channel for change notices (as the server's own
    // legacy initialize says), and no extensions.
    delete capabilities.extensions;
    if (isJsonObject(capabilities.resources)) {
      capabilities.resources = {
        ...capabilities.resources,
        subscribe: false,
        listChanged: false,
      };
    }
    const meta = isJsonObject(discover._meta) ? discover._meta : {};
    this.#reply(id, {
      result: {
        protocolVersion: version,
        capabilities,
        serverInfo: meta[META_SERVER_INFO] ?? { name: BRIDGE_EXECUTABLE },
        instructions: discover.instructions ?? "",
      },
    });
  }

  async #notification(
    message: JsonObject,
    method: string,
  ): Promise<void> {
    if (method !== "notifications/cancelled") return; // the only one acted on
    const params = isJsonObject(message.params) ? message.params : {};
    const key = JSON.stringify(params.requestId);
    this.#inflight.get(key)?.abort();
    // The server knows the request by this bridge's id for it; one the
    // bridge never forwarded is no one's to cancel.
    const upstream = this.#upstream.get(key);
    if (upstream === undefined) return;
    const forwarded = JSON.stringify({
      ...message,
      params: { ...params, requestId: upstream },
    });
    // Nobody waits for the answer (202); it may not hang the bridge either.
    await this.#send(
      forwarded,
      method,
      undefined,
      AbortSignal.timeout(10_000),
    ).then(
      (response) => response.body?.cancel(),
      () => {},
    );
  }

  /** The envelope a legacy client's request is given. */
  #envelope(): JsonObject {
    const legacy = this.#legacy;
    if (legacy === null) return bridgeMeta();
    return {
      [META_PROTOCOL_VERSION]: MODERN_VERSION,
      [META_CLIENT_CAPABILITIES]: legacy.capabilities,
      [META_CLIENT_INFO]: legacy.clientInfo ??
        bridgeMeta()[META_CLIENT_INFO],
    };
  }

  async #request(
    line: string,
    message: JsonObject,
    method: string,
    id: string | number,
  ): Promise<void> {
    const key = JSON.stringify(id);
    const controller = new AbortController();
    this.#inflight.set(key, controller);
    const upstreamId = `${this.#prefix}${this.#next++}`;
    this.#upstream.set(key, upstreamId);
    const params = isJsonObject(message.params) ? message.params : {};
    const meta = isJsonObject(params._meta) ? params._meta : {};
    // A modern client's message goes as it is; anyone else's gets the envelope.
    const modern = typeof meta[META_PROTOCOL_VERSION] === "string";
    const body = replaceId(
      modern ? line : spliceMeta(line, this.#envelope()),
      upstreamId,
    );
    const name = method === "resources/read"
      ? params.uri
      : method === "tools/call" || method === "prompts/get"
      ? params.name
      : undefined;
    try {
      let answer = await this.#exchange(
        body,
        method,
        typeof name === "string" ? name : undefined,
        controller.signal,
        id,
        modern,
      );
      for (let round = 0; !modern && round < MAX_ROUNDS; round++) {
        const result = isJsonObject(answer.result) ? answer.result : null;
        if (result?.resultType !== "input_required") break;
        const retry = await this.#fulfil(
          JSON.parse(body) as JsonObject,
          result,
          controller.signal,
        );
        answer = await this.#exchange(
          JSON.stringify(retry),
          method,
          typeof name === "string" ? name : undefined,
          controller.signal,
          id,
          modern,
        );
      }
      if (!modern) await this.#deps.write(JSON.stringify(legacyAnswer(answer)));
    } catch (error) {
      if (controller.signal.aborted) return; // cancelled: nobody waits
      const failure = error instanceof BridgeFailure
        ? error
        : new BridgeFailure(
          ErrorCode.InternalError,
          `the bridge failed: ${messageOf(error)}`,
        );
      this.#deps.log(`${BRIDGE_EXECUTABLE}: ${method}: ${failure.message}`);
      await this.#reply(id, {
        error: { code: failure.code, message: failure.message },
      });
    } finally {
      if (this.#inflight.get(key) === controller) {
        this.#inflight.delete(key);
        this.#upstream.delete(key);
      }
    }
  }

  /**
   * POST with one re-read of the handshake when the token is refused (401:
   * rotated or revoked) or the server is gone (it may have restarted on
   * another port, with a new handshake).
   */
  async #send(
    body: string,
    method: string,
    name: string | undefined,
    signal: AbortSignal,
  ): Promise<Response> {
    let why: string;
    try {
      const response = await post(
        this.#deps.endpoint(),
        body,
        method,
        name,
        signal,
      );
      if (response.status !== 401) return response;
      await response.body?.cancel();
      why = "the server refused the token";
    } catch (error) {
      if (!(error instanceof BridgeFailure)) throw error;
      why = "the server cannot be reached";
    }
    this.#deps.log(`${BRIDGE_EXECUTABLE}: ${why}; re-reading the handshake`);
    const endpoint = await this.#deps.refresh();
    return await post(endpoint, body, method, name, signal);
  }

  /**
   * One round trip. Progress frames go to the client as lines as they come;
   * the answer is returned (a modern client's is also written, verbatim).
   */
  async #exchange(
    body: string,
    method: string,
    name: string | undefined,
    signal: AbortSignal,
    id: string | number,
    modern: boolean,
  ): Promise<JsonObject> {
    const response = await this.#send(body, method, name, signal);
    const type = response.headers.get("content-type") ?? "";
    if (type.startsWith("text/event-stream") && response.body !== null) {
      let answer: JsonObject | null = null;
      for await (const data of sseData(response.body)) {
        const frame = parseJson(data);
        if (isJsonObject(frame) && "id" in frame && !("method" in frame)) {
          answer = { ...frame, id };
          if (modern) await this.#deps.write(replaceId(data, id));
        } else await this.#deps.write(data);
      }
      if (answer === null) {
        throw new BridgeFailure(
          ErrorCode.InternalError,
          "the server's stream ended without an answer",
        );
      }
      return answer;
    }
    const text = await response.text();
    const json = parseJson(text);
    if (!isJsonObject(json) || !("result" in json || "error" in json)) {
      const { code, message } = statusError(response.status, method);
      throw new BridgeFailure(code, message);
    }
    if (modern) await this.#deps.write(replaceId(text, id));
    return { ...json, id };
  }

  /** Ask the legacy client each input request; the retry's params. */
  async #fulfil(
    request: JsonObject,
    result: JsonObject,
    signal: AbortSignal,
  ): Promise<JsonObject> {
    const legacy = this.#legacy;
    if (legacy === null || !isJsonObject(legacy.capabilities.elicitation)) {
      throw new BridgeFailure(
        ErrorCode.InternalError,
        "the server asked for input this client cannot give (it did not declare elicitation)",
      );
    }
    const requests = isJsonObject(result.inputRequests)
      ? result.inputRequests
      : {};
    const responses: JsonObject = {};
    for (const [key, entry] of Object.entries(requests)) {
      if (!isJsonObject(entry) || entry.method !== "elicitation/create") {
        responses[key] = { action: "cancel" };
        continue;
      }
      const answer = await this.#ask(
        "elicitation/create",
        entry.params,
        signal,
      );
      responses[key] = isJsonObject(answer.result)
        ? answer.result
        : { action: "cancel" };
    }
    const params = isJsonObject(request.params) ? request.params : {};
    return {
      ...request,
      params: {
        ...params,
        inputResponses: responses,
        ...(typeof result.requestState === "string"
          ? { requestState: result.requestState }
          : {}),
      },
    };
  }

  /** Send a request to the client and wait for its answer. */
  #ask(
    method: string,
    params: unknown,
    signal: AbortSignal,
  ): Promise<JsonObject> {
    const id = `${BRIDGE_EXECUTABLE}-${this.#next++}`;
    const key = JSON.stringify(id);
    return new Promise((resolve, reject) => {
      const onAbort = () => {
        this.#awaiting.delete(key);
        reject(signal.reason);
      };
      signal.addEventListener("abort", onAbort, { once: true });
      this.#awaiting.set(key, (message) => {
        this.#awaiting.delete(key);
        signal.removeEventListener("abort", onAbort);
        resolve(message);
      });
      this.#deps.write(
        JSON.stringify({ jsonrpc: "2.0", id, method, params: params ?? {} }),
      );
    });
  }
}

/** A modern answer as a legacy client expects it (docs/wire.md "Versioning" 4). */
function legacyAnswer(answer: JsonObject): JsonObject {
  if (!isJsonObject(answer.result)) return answer;
  const {
    resultType: _type,
    ttlMs: _ttl,
    cacheScope: _scope,
    _meta,
    ...rest
  } = answer.result;
  const meta = isJsonObject(_meta) ? { ..._meta } : {};
  delete meta[META_SERVER_INFO];
  return {
    ...answer,
    result: Object.keys(meta).length > 0 ? { ...rest, _meta: meta } : rest,
  };
}

/** The `data:` payloads of an SSE stream, one event at a time. */
async function* sseData(
  body: ReadableStream<Uint8Array>,
): AsyncGenerator<string> {
  const decoder = new TextDecoder();
  let buffer = "";
  for await (const chunk of body) {
    buffer += decoder.decode(chunk, { stream: true });
    for (;;) {
      const end = buffer.search(/\r?\n\r?\n/);
      if (end === -1) break;
      const event = buffer.slice(0, end);
      buffer = buffer.slice(end).replace(/^\r?\n\r?\n/, "");
      const data = event.split(/\r?\n/).filter((l) => l.startsWith("data:"))
        .map((l) => l.slice(5).replace(/^ /, "")).join("\n");
      if (data !== "") yield data;
    }
  }
}
