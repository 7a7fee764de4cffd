/**
 * The official SDK v2 client for end-to-end tests, optionally with a
 * {@linkcode SchemaCheck} fetch that checks every message the server sends —
 * JSON answers and each SSE frame — against the official JSON Schema.
 *
 * @module
 */

import {
  Client,
  StreamableHTTPClientTransport,
} from "@modelcontextprotocol/client";
import type { JsonObject } from "../lib/protocol/jsonrpc.ts";
import { SchemaCheck } from "./_schema_check.ts";

const VERSION = "2026-07-28";

export { SchemaCheck };

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
 * The JSON-RPC code of an error the SDK threw. dbport answers most
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
