/**
 * The SDK v2 peer: a minimal MCP server on the official TypeScript SDK v2
 * (`@modelcontextprotocol/server`, served through `@modelcontextprotocol/hono`
 * on `@hono/node-server`), with one `execute_query` tool over postgres.js —
 * what a developer gets by following the SDK's own examples.
 *
 * Usage: deno run -A sdk_v2_server.ts PORT POSTGRES_URL
 *
 * @module
 */

import { serve } from "@hono/node-server";
import { createMcpHonoApp } from "@modelcontextprotocol/hono";
import {
  createMcpHandler,
  fromJsonSchema,
  McpServer,
} from "@modelcontextprotocol/server";
import postgres from "postgres";

const port = Number(Deno.args[0]);
const sql = postgres(Deno.args[1]!, { onnotice: () => {} });

const inputSchema = fromJsonSchema<{ query: string }>({
  type: "object",
  properties: { query: { type: "string" } },
  required: ["query"],
});

const handler = createMcpHandler(() => {
  const server = new McpServer({ name: "sdk-v2-peer", version: "1.0.0" });
  server.registerTool(
    "execute_query",
    { description: "Run one SQL statement.", inputSchema },
    async ({ query }) => {
      const rows = await sql.unsafe(query);
      return { content: [{ type: "text", text: JSON.stringify(rows) }] };
    },
  );
  return server;
});

const app = createMcpHonoApp();
app.all(
  "/mcp",
  // deno-lint-ignore no-explicit-any
  (c: any) => handler.fetch(c.req.raw, { parsedBody: c.get("parsedBody") }),
);
serve(
  {
    fetch: app.fetch,
    port,
    hostname: "127.0.0.1",
    overrideGlobalObjects: false,
  },
);
