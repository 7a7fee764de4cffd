/**
 * The official SDK v2 client for end-to-end tests, with a `fetch` that checks
 * every message the server sends — JSON answers and each SSE frame — against
 * the official 2026-07-28 JSON Schema of its method.
 *
 * @module
 */

import {
  Client,
  StreamableHTTPClientTransport,
} from "@modelcontextprotocol/client";
import { assertEquals } from "@std/assert";
import type { JsonObject } from "../lib/protocol/jsonrpc.ts";
import { parseSseEvents } from "../lib/protocol/sse.ts";
import { assertSchema } from "./_schema.ts";

const VERSION = "2026-07-28";

/** The response definition of each method's answer. */
const RESPONSES: Readonly<Record<string, string>> = {
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

/** The definition of each notification the server may send. */
const NOTIFICATIONS: Readonly<Record<string, string>> = {
  "notifications/progress": "ProgressNotification",
  "notifications/resources/list_changed": "ResourceListChangedNotification",
  "notifications/resources/updated": "ResourceUpdatedNotification",
  "notifications/subscriptions/acknowledged":
    "SubscriptionsAcknowledgedNotification",
};

/** Checks what the server sends; `checked` counts the messages seen. */
export class SchemaCheck {
  readonly problems: string[] = [];
  checked = 0;
  readonly #methods = new Map<string, string>();
  readonly #pending = new Set<Promise<void>>();

  /** A fetch that records request methods and checks every answer. */
  readonly fetch: typeof fetch = async (input, init) => {
    const body = typeof init?.body === "string" ? init.body : null;
    if (body !== null) {
      try {
        const message = JSON.parse(body);
        if (message.id !== undefined && typeof message.method === "string") {
          this.#methods.set(JSON.stringify(message.id), message.method);
        }
      } catch { /* not JSON: nothing to record */ }
    }
    const response = await fetch(input, init);
    const type = response.headers.get("content-type") ?? "";
    if (type.startsWith("application/json")) {
      this.#message(await response.clone().json());
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
        for (const event of events) this.#message(JSON.parse(event));
      }
    } catch { /* the client closed the stream */ }
  }

  #message(message: JsonObject): void {
    this.checked++;
    let definition: string;
    if (typeof message.method === "string") {
      definition = NOTIFICATIONS[message.method] ?? "JSONRPCNotification";
    } else if ("error" in message) {
      definition = "JSONRPCErrorResponse";
    } else {
      const method = this.#methods.get(JSON.stringify(message.id));
      definition = (method && RESPONSES[method]) ?? "JSONRPCResultResponse";
    }
    try {
      assertSchema(VERSION, definition, message);
    } catch (error) {
      this.problems.push(
        error instanceof Error ? error.message : String(error),
      );
    }
  }
}

/** Options for {@linkcode sdkClient}. */
export interface SdkOptions {
  /** Answers the server's `input_required` forms (declares form elicitation). */
  elicit?: (params: JsonObject) => JsonObject | Promise<JsonObject>;
  check?: SchemaCheck;
  /** A fetch of the test's own (one that rewrites a request, say). */
  fetch?: typeof fetch;
  /** The clientInfo name (default "dbport-e2e"). */
  name?: string;
}

/** An SDK v2 client pinned to 2026-07-28, connected with a bearer token. */
export async function sdkClient(
  url: string,
  token: string,
  options: SdkOptions = {},
): Promise<Client> {
  const client = new Client(
    { name: options.name ?? "dbport-e2e", version: "1.0.0" },
    {
      capabilities: options.elicit === undefined
        ? {}
        : { elicitation: { form: {} } },
      versionNegotiation: { mode: { pin: VERSION } },
    },
  );
  if (options.elicit !== undefined) {
    const elicit = options.elicit;
    client.setRequestHandler(
      "elicitation/create",
      // deno-lint-ignore no-explicit-any
      async (request: any) => await elicit(request.params) as any,
    );
  }
  await client.connect(
    new StreamableHTTPClientTransport(new URL(url), {
      requestInit: { headers: { authorization: `Bearer ${token}` } },
      ...(options.fetch !== undefined
        ? { fetch: options.fetch }
        : options.check !== undefined
        ? { fetch: options.check.fetch }
        : {}),
    }),
  );
  return client;
}

/**
 * The JSON-RPC code of an error the SDK threw. The contract answers most
 * protocol errors with an HTTP error status (-32602 is 400, -33007 is 403),
 * which the SDK reports as an HTTP error carrying the body.
 */
export function wireCode(error: unknown): number | undefined {
  const { code, data } = error as { code?: unknown; data?: { text?: string } };
  if (typeof code === "number") return code;
  try {
    return JSON.parse(data?.text ?? "").error?.code;
  } catch {
    return undefined;
  }
}
