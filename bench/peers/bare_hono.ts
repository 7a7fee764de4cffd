/**
 * The floor of W2: a bare Hono app on the same `node:http` server dbport uses
 * (`@hono/node-server`, `overrideGlobalObjects: false`), answering every POST
 * to /mcp with one fixed body the size of dbport's `tools/list` answer.
 *
 * Usage: deno run --allow-net=127.0.0.1 --allow-env --allow-read bare_hono.ts PORT BYTES
 *
 * @module
 */

import { serve } from "@hono/node-server";
import { Hono } from "hono";

const port = Number(Deno.args[0]);
const bytes = Number(Deno.args[1] ?? 4096);
const body = JSON.stringify({
  jsonrpc: "2.0",
  id: 1,
  result: { padding: "x".repeat(Math.max(0, bytes - 40)) },
});

const app = new Hono();
app.post(
  "/mcp",
  (c) => c.body(body, 200, { "content-type": "application/json" }),
);
serve(
  {
    fetch: app.fetch,
    port,
    hostname: "127.0.0.1",
    overrideGlobalObjects: false,
  },
);
