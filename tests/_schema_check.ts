/**
 * Checks every message a server sends against the official JSON Schema of the
 * protocol version it was sent in: modern requests name their version in
 * `_meta`; a legacy session's version is the one `initialize` negotiated.
 * Feed it what a client sends ({@linkcode SchemaCheck.sent}) and what it
 * receives ({@linkcode SchemaCheck.received}), or let its `fetch` do both.
 *
 * @module
 */

import { assertEquals } from "@std/assert";
import { META_PROTOCOL_VERSION } from "../lib/protocol/envelope.ts";
import type { JsonObject } from "../lib/protocol/jsonrpc.ts";
import { parseSseEvents } from "../lib/protocol/sse.ts";
import { MODERN_VERSION } from "../lib/protocol/versions.ts";
import { assertSchema } from "./_schema.ts";

/** 2026-07-28 names one definition per method's whole answer. */
const MODERN_RESPONSES: Readonly<Record<string, string>> = {
  "server/discover": "DiscoverResultResponse",
  "tools/list": "ListToolsResultResponse",
  "tools/call": "CallToolResultResponse",
  "resources/list": "ListResourcesResultResponse",
  "resources/templates/list": "ListResourceTemplatesResultResponse",
  "resources/read": "ReadResourceResultResponse",
  "prompts/list": "ListPromptsResultResponse",
  "prompts/get": "GetPromptResultResponse",
  "completion/complete": "CompleteResultResponse",
  "subscriptions/listen": "SubscriptionsListenResultResponse",
};

/** The legacy revisions name the `result` of each method's answer. */
const LEGACY_RESULTS: Readonly<Record<string, string>> = {
  "initialize": "InitializeResult",
  "ping": "EmptyResult",
  "logging/setLevel": "EmptyResult",
  "tools/list": "ListToolsResult",
  "tools/call": "CallToolResult",
  "resources/list": "ListResourcesResult",
  "resources/templates/list": "ListResourceTemplatesResult",
  "resources/read": "ReadResourceResult",
  "prompts/list": "ListPromptsResult",
  "prompts/get": "GetPromptResult",
  "completion/complete": "CompleteResult",
};

/** What the server may send unasked, in any revision. */
const SERVER_MESSAGES: Readonly<Record<string, string>> = {
  "notifications/progress": "ProgressNotification",
  "notifications/message": "LoggingMessageNotification",
  "notifications/resources/list_changed": "ResourceListChangedNotification",
  "notifications/resources/updated": "ResourceUpdatedNotification",
  "notifications/subscriptions/acknowledged":
    "SubscriptionsAcknowledgedNotification",
  "elicitation/create": "ElicitRequest",
};

const LEGACY_DEFAULT = "2025-11-25";

/** Checks what a server sends; `checked` counts the messages, `seen` names them. */
export class SchemaCheck {
  readonly problems: string[] = [];
  checked = 0;
  /** Every method answered, and every notification or request received. */
  readonly seen: string[] = [];
  /** The protocol versions messages were checked against. */
  readonly versions = new Set<string>();
  readonly #requests = new Map<string, { method: string; version: string }>();
  readonly #pending = new Set<Promise<void>>();
  #legacyVersion: string | null = null;

  /** Record a message the client sends (requests are matched to answers by id). */
  sent(message: unknown): void {
    if (typeof message !== "object" || message === null) return;
    const { id, method, params } = message as JsonObject;
    if (id === undefined || typeof method !== "string") return;
    const meta = (params as { _meta?: JsonObject } | undefined)?._meta;
    const modern = meta?.[META_PROTOCOL_VERSION];
    const asked = (params as { protocolVersion?: unknown } | undefined)
      ?.protocolVersion;
    const version = typeof modern === "string"
      ? modern
      : method === "initialize" && typeof asked === "string"
      ? asked
      : this.#legacyVersion ?? LEGACY_DEFAULT;
    this.#requests.set(JSON.stringify(id), { method, version });
  }

  /** Check one message the server sent. */
  received(message: unknown): void {
    this.checked++;
    try {
      this.#check(message as JsonObject);
    } catch (error) {
      this.problems.push(
        error instanceof Error ? error.message : String(error),
      );
    }
  }

  /** A fetch that records requests and checks every answer, JSON or SSE. */
  readonly fetch: typeof fetch = async (input, init) => {
    const body = typeof init?.body === "string" ? init.body : null;
    if (body !== null) {
      try {
        this.sent(JSON.parse(body));
      } catch { /* not JSON: nothing to record */ }
    }
    const response = await fetch(input, init);
    const type = response.headers.get("content-type") ?? "";
    if (type.startsWith("application/json")) {
      const text = await response.clone().text();
      // A 4xx/5xx of the HTTP layer (403 forbidden_host, say) is plain JSON
      // without `jsonrpc`: not a protocol message.
      const json = JSON.parse(text);
      if (json?.jsonrpc === "2.0") this.received(json);
      return response;
    }
    if (type.startsWith("text/event-stream") && response.body !== null) {
      const [mine, theirs] = response.body.tee();
      const reading = this.#readSse(mine);
      this.#pending.add(reading);
      void reading.finally(() => this.#pending.delete(reading));
      return new Response(theirs, {
        status: response.status,
        statusText: response.statusText,
        headers: response.headers,
      });
    }
    return response;
  };

  /** Wait for open streams to end, then assert nothing was invalid. */
  async assertValid(): Promise<void> {
    await Promise.all([...this.#pending]);
    assertEquals(this.problems, []);
  }

  async #readSse(stream: ReadableStream<Uint8Array>): Promise<void> {
    const decoder = new TextDecoder();
    let buffer = "";
    try {
      for await (const chunk of stream) {
        buffer += decoder.decode(chunk, { stream: true });
        const { events, rest } = parseSseEvents(buffer);
        buffer = rest;
        for (const event of events) this.received(JSON.parse(event));
      }
    } catch { /* the client closed the stream */ }
  }

  #check(message: JsonObject): void {
    if (typeof message.method === "string") {
      this.seen.push(message.method);
      const version = this.#legacyVersion ?? MODERN_VERSION;
      this.versions.add(version);
      const definition = SERVER_MESSAGES[message.method] ??
        (message.id === undefined ? "JSONRPCNotification" : "JSONRPCRequest");
      // A modern stream's notifications belong to a modern request; a
      // legacy session's to its negotiated revision.
      assertSchema(version, definition, message);
      return;
    }
    const request = this.#requests.get(JSON.stringify(message.id));
    const method = request?.method ?? "";
    const version = request?.version ?? this.#legacyVersion ?? MODERN_VERSION;
    this.seen.push(method);
    this.versions.add(version);
    const old = version === "2025-06-18";
    if ("error" in message) {
      // JSON-RPC 2.0 answers `id: null` when the id could not be read; MCP's
      // schema only omits it.
      const { id, ...rest } = message;
      assertSchema(
        version,
        old ? "JSONRPCError" : "JSONRPCErrorResponse",
        id === null ? rest : message,
      );
      return;
    }
    if (version === MODERN_VERSION) {
      assertSchema(
        version,
        MODERN_RESPONSES[method] ?? "JSONRPCResultResponse",
        message,
      );
      return;
    }
    if (method === "initialize") {
      const negotiated = (message.result as JsonObject).protocolVersion;
      if (typeof negotiated === "string") this.#legacyVersion = negotiated;
    }
    assertSchema(
      version,
      old ? "JSONRPCResponse" : "JSONRPCResultResponse",
      message,
    );
    const definition = LEGACY_RESULTS[method];
    if (definition !== undefined) {
      assertSchema(version, definition, message.result);
    }
  }
}
