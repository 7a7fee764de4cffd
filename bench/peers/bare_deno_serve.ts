/**
 * The HTTP floor of Deno's own server (`Deno.serve`, hyper): the same fixed
 * body as `bare_hono.ts`, to show what the `node:http` layer costs. dbport
 * stays on `node:http` for the connection cap, header cap and idle timeout
 * `Deno.serve` does not offer (deno-findings.md); this peer only measures.
 *
 * Usage: deno run --allow-net=127.0.0.1 bare_deno_serve.ts PORT BYTES
 *
 * @module
 */

const port = Number(Deno.args[0]);
const bytes = Number(Deno.args[1] ?? 4096);
const body = JSON.stringify({
  jsonrpc: "2.0",
  id: 1,
  result: { padding: "x".repeat(Math.max(0, bytes - 40)) },
});

Deno.serve(
  { hostname: "127.0.0.1", port, onListen: () => {} },
  (request) =>
    request.method === "POST"
      ? new Response(body, { headers: { "content-type": "application/json" } })
      : new Response(null, { status: 405 }),
);
