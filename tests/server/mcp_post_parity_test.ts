/**
 * The Hono app's `POST /mcp` (`app.request()`, runtime-neutral) and the
 * node:http fast path (`mcp_post.ts`) built from the same dependencies answer
 * the same requests alike: status, body and the contract's headers.
 */
import { assertEquals } from "@std/assert";
import { silentLogger } from "../../lib/base/log.ts";
import { CursorCodec } from "../../lib/protocol/cursor.ts";
import { parseSseEvents } from "../../lib/protocol/sse.ts";
import { type AppDeps, createApp } from "../../lib/server/app.ts";
import { Lockout } from "../../lib/server/auth/lockout.ts";
import { TokenVerifier } from "../../lib/server/auth/verifier.ts";
import { Dispatcher } from "../../lib/server/dispatch.ts";
import { InFlightRegistry } from "../../lib/server/inflight.ts";
import { listen } from "../../lib/server/listener.ts";
import { createMcpPost } from "../../lib/server/mcp_post.ts";
import { buildMethodTable } from "../../lib/server/methods.ts";
import { SessionStore } from "../../lib/server/sessions.ts";
import { fixtureCatalog } from "../_catalog.ts";
import { modernHeaders, modernRequest } from "../_server.ts";
import { testState } from "./guards/_app.ts";

/** One endpoint's answer, reduced to what the contract fixes. */
async function seen(response: Response) {
  const text = await response.text();
  const type = response.headers.get("content-type");
  return {
    status: response.status,
    type,
    body: type === "text/event-stream"
      ? parseSseEvents(text).events.map((data) => JSON.parse(data))
      : text === ""
      ? null
      : JSON.parse(text),
    headers: [
      "www-authenticate",
      "retry-after",
      "mcp-session-id",
      "access-control-allow-origin",
      "access-control-expose-headers",
      "vary",
    ].map((name) => [name, response.headers.get(name)]),
  };
}

Deno.test("the Hono app and the fast path answer POST /mcp alike", async () => {
  const state = testState({ requireAuth: false }, 0);
  const inflight = new InFlightRegistry();
  const shutdown = new AbortController();
  const deps: AppDeps = {
    state,
    log: silentLogger,
    methods: buildMethodTable({
      catalog: fixtureCatalog(),
      cursors: new CursorCodec(),
      instanceId: state.instanceId,
    }),
    sessions: new SessionStore(),
    inflight,
    auth: {
      state,
      verifier: new TokenVerifier(state.instanceId),
      lockout: new Lockout(),
      activity: () => {},
      now: Date.now,
    },
    dispatcher: new Dispatcher({
      inflight,
      shutdown: shutdown.signal,
      log: silentLogger,
    }),
  };
  const app = createApp(deps);
  const fast = createMcpPost(deps);
  const listener = await listen(app.fetch, { port: 0 }, fast.handle);
  state.port = listener.port;
  const url = `http://127.0.0.1:${listener.port}/mcp`;
  const json = { "content-type": "application/json" };
  const discover = modernRequest("server/discover");
  const cases: [string, () => RequestInit][] = [
    ["discover", () => ({
      body: JSON.stringify(discover),
      headers: modernHeaders(discover),
    })],
    ["allowed origin", () => ({
      body: JSON.stringify(discover),
      headers: { ...modernHeaders(discover), origin: "https://claude.ai" },
    })],
    ["malformed JSON", () => ({ body: "{nope", headers: json })],
    ["batch", () => ({ body: "[1]", headers: json })],
    ["notification", () => ({
      body: JSON.stringify({ jsonrpc: "2.0", method: "notifications/x" }),
      headers: json,
    })],
    ["legacy initialize", () => ({
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: 1,
        method: "initialize",
        params: { protocolVersion: "2025-11-25", capabilities: {} },
      }),
      headers: json,
    })],
    ["progress", () => {
      const body = modernRequest(
        "tools/call",
        { name: "progress", arguments: {} },
        "p",
        { progressToken: "t" },
      );
      return { body: JSON.stringify(body), headers: modernHeaders(body) };
    }],
  ];
  try {
    for (const [name, init] of cases) {
      const before = fast.served;
      const viaFast = await seen(
        await fetch(url, { method: "POST", ...init() }),
      );
      assertEquals(fast.served - before, 1, name);
      const request = init();
      const viaHono = await seen(
        await app.request(url, {
          method: "POST",
          body: request.body!,
          headers: {
            ...request.headers as Record<string, string>,
            host: `127.0.0.1:${listener.port}`,
          },
        }),
      );
      // A fresh session each time: compare that one was minted.
      for (const answer of [viaFast, viaHono]) {
        for (const pair of answer.headers) {
          if (pair[0] === "mcp-session-id" && pair[1] !== null) pair[1] = "id";
        }
      }
      assertEquals(viaFast, viaHono, name);
    }
    // Switched off: both refuse alike, with the request's id.
    state.settings = { ...state.settings, enabled: false };
    const off = () => ({
      method: "POST",
      body: JSON.stringify(discover),
      headers: {
        ...modernHeaders(discover),
        host: `127.0.0.1:${listener.port}`,
      },
    });
    const offFast = await seen(await fetch(url, off()));
    assertEquals(offFast.status, 503);
    assertEquals(offFast, await seen(await app.request(url, off())));
    // Authentication on, no token: the same 401 and WWW-Authenticate.
    state.settings = { ...state.settings, enabled: true, requireAuth: true };
    const noToken = await seen(await fetch(url, off()));
    assertEquals(noToken.status, 401);
    assertEquals(noToken, await seen(await app.request(url, off())));
  } finally {
    shutdown.abort();
    await listener.close();
  }
});
