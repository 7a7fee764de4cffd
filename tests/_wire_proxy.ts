/**
 * A loopback HTTP proxy that checks every message a server sends against the
 * official JSON Schema of its protocol version ({@linkcode SchemaCheck}), for
 * clients whose `fetch` a test cannot reach: the MCP Inspector CLI and the
 * conformance suite run in their own processes.
 *
 * @module
 */

import { SchemaCheck } from "./_schema_check.ts";

/** Hop-by-hop or re-encoded headers the proxy does not copy. */
const DROPPED = ["host", "connection", "content-length", "transfer-encoding"];

/** A started proxy; `url` stands in for the server's `/mcp` URL. */
export interface WireProxy extends AsyncDisposable {
  readonly url: string;
  readonly check: SchemaCheck;
}

/** Proxy `upstream` (a server's `/mcp` URL) on a free loopback port. */
export function wireProxy(upstream: string): WireProxy {
  const check = new SchemaCheck();
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen: () => {} },
    async (request) => {
      const headers = new Headers();
      for (const [name, value] of request.headers) {
        if (!DROPPED.includes(name)) headers.set(name, value);
      }
      const body = request.body === null ? undefined : await request.text();
      const answer = await check.fetch(upstream, {
        method: request.method,
        headers,
        ...(body === undefined ? {} : { body }),
        signal: request.signal,
      });
      const out = new Headers(answer.headers);
      for (const name of DROPPED) out.delete(name);
      return new Response(answer.body, {
        status: answer.status,
        headers: out,
      });
    },
  );
  return {
    url: `http://127.0.0.1:${server.addr.port}/mcp`,
    check,
    async [Symbol.asyncDispose]() {
      await server.shutdown();
    },
  };
}
