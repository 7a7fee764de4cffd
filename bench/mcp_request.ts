/**
 * Modern (2026-07-28) MCP requests as the load generator sends them: the
 * `_meta` envelope with clientInfo (Toolbox refuses requests without it) and
 * the mirrored headers, built once per target and method.
 *
 * @module
 */

import { MODERN_VERSION } from "../lib/protocol/versions.ts";
import type { Target } from "./targets.ts";

const META = {
  "io.modelcontextprotocol/protocolVersion": MODERN_VERSION,
  "io.modelcontextprotocol/clientCapabilities": {},
  "io.modelcontextprotocol/clientInfo": { name: "dbport-bench", version: "1" },
};

/** The body of a modern request. */
export function modernBody(
  id: number,
  method: string,
  params: Record<string, unknown> = {},
): string {
  return JSON.stringify({
    jsonrpc: "2.0",
    id,
    method,
    params: { ...params, _meta: META },
  });
}

/**
 * The HTTP client of the harness. Each load phase ends with
 * {@linkcode closeConnections}: idle keep-alive connections left open would
 * count against a server's connection cap (dbport's is 64) in the next phase.
 */
let client = Deno.createHttpClient({});

/** Close every connection the harness holds; later requests open new ones. */
export function closeConnections(): void {
  client.close();
  client = Deno.createHttpClient({});
}

/** The headers of a modern request to `target`. */
function requestHeaders(
  target: Target,
  method: string,
  params: Record<string, unknown>,
): Record<string, string> {
  const headers: Record<string, string> = {
    "content-type": "application/json",
    "accept": "application/json, text/event-stream",
    "mcp-protocol-version": MODERN_VERSION,
    "mcp-method": method,
    ...target.headers,
  };
  if (typeof params.name === "string") headers["mcp-name"] = params.name;
  return headers;
}

/** A request function for the load generator; resolves true on a right answer. */
export function mcpRequest(
  target: Target,
  method: string,
  params: Record<string, unknown> = {},
): () => Promise<boolean> {
  const headers = requestHeaders(target, method, params);
  let id = 0;
  return async () => {
    const response = await fetch(target.url, {
      method: "POST",
      headers,
      body: modernBody(++id, method, params),
      client,
    });
    const text = await response.text();
    return response.status === 200 && text.includes('"result"') &&
      !text.includes('"isError":true');
  };
}

/** One call, answered whole (for sizes and sanity checks). */
export async function callOnce(
  target: Target,
  method: string,
  params: Record<string, unknown> = {},
): Promise<string> {
  const headers = requestHeaders(target, method, params);
  const response = await fetch(target.url, {
    method: "POST",
    headers,
    body: modernBody(1, method, params),
    client,
  });
  const text = await response.text();
  if (response.status !== 200 || !text.includes('"result"')) {
    throw new Error(
      `${target.name} answered ${method} with ${response.status}: ${
        text.slice(0, 300)
      }`,
    );
  }
  return text;
}
