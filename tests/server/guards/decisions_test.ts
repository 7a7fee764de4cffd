/**
 * Each guard's decision alone, as the Hono middleware and the `POST /mcp`
 * fast path both ask it: null to pass, or the exact refusal.
 */
import { assertEquals, assertRejects } from "@std/assert";
import { EventEmitter } from "node:events";
import type { IncomingMessage } from "node:http";
import { unavailable } from "../../../lib/server/guards/availability_guard.ts";
import {
  declaredTooLarge,
  readIncoming,
} from "../../../lib/server/guards/body_limit.ts";
import { hostRefusal } from "../../../lib/server/guards/host_guard.ts";
import {
  corsHeaders,
  originRefusal,
} from "../../../lib/server/guards/origin_guard.ts";
import { HttpError } from "../../../lib/server/http_error.ts";
import { RawHeaders } from "../../../lib/server/raw_headers.ts";
import { testState } from "./_app.ts";

Deno.test("hostRefusal() passes the loopback names and refuses the rest by name", () => {
  assertEquals(hostRefusal("127.0.0.1:4000", 4000), null);
  assertEquals(hostRefusal("localhost", 4000), null);
  const refused = hostRefusal("evil.example:4000", 4000)!;
  assertEquals(refused.status, 403);
  assertEquals(refused.body, {
    error: "forbidden_host",
    message:
      'Host "evil.example:4000" is not allowed: use 127.0.0.1, localhost or [::1] with port 4000',
  });
  assertEquals(
    (hostRefusal(undefined, 4000)!.body as { message: string }).message
      .startsWith("Host (missing)"),
    true,
  );
});

Deno.test("originRefusal() passes no Origin and an allowed one; corsHeaders() grants it", () => {
  const allowed = ["https://claude.ai"];
  assertEquals(originRefusal(undefined, allowed), null);
  assertEquals(originRefusal("https://claude.ai", allowed), null);
  assertEquals(originRefusal("https://x.example", [])!.body, {
    error: "forbidden_origin",
    message: 'Origin "https://x.example" is not allowed: allowed are none',
  });
  assertEquals(corsHeaders("https://claude.ai"), {
    "access-control-allow-origin": "https://claude.ai",
    "vary": "Origin",
    "access-control-expose-headers":
      "Mcp-Session-Id, WWW-Authenticate, Retry-After",
  });
});

Deno.test("declaredTooLarge() refuses a lone Content-Length over the cap only", () => {
  assertEquals(declaredTooLarge("16", undefined, 16), null);
  assertEquals(declaredTooLarge("17", "chunked", 16), null);
  assertEquals(declaredTooLarge(undefined, undefined, 16), null);
  const refused = declaredTooLarge("17", undefined, 16)!;
  assertEquals([refused.status, refused.headers], [413, {
    connection: "close",
  }]);
});

/** A stand-in IncomingMessage: an emitter with pause() and complete. */
function incoming(): EventEmitter & { complete: boolean; paused: boolean } {
  const emitter = new EventEmitter() as EventEmitter & {
    complete: boolean;
    paused: boolean;
    pause(): void;
  };
  emitter.complete = false;
  emitter.paused = false;
  emitter.pause = () => {
    emitter.paused = true;
  };
  return emitter;
}

Deno.test("readIncoming() joins the chunks, and pauses (not destroys) past the cap", async () => {
  const ok = incoming();
  const read = readIncoming(ok as unknown as IncomingMessage, 8);
  ok.emit("data", new TextEncoder().encode("0123"));
  ok.emit("data", new TextEncoder().encode("4567"));
  ok.complete = true;
  ok.emit("end");
  assertEquals(new TextDecoder().decode(await read), "01234567");

  const big = incoming();
  const refused = readIncoming(big as unknown as IncomingMessage, 8);
  big.emit("data", new Uint8Array(9));
  const error = await refused.catch((e) => e);
  assertEquals([error instanceof HttpError, error.status], [true, 413]);
  assertEquals(big.paused, true);

  const gone = incoming();
  const aborted = readIncoming(gone as unknown as IncomingMessage, 8);
  gone.emit("close");
  await assertRejects(() => aborted, Error, "aborted");
});

Deno.test("unavailable() answers -33006 while off and -33000 while stopping, with the request id", () => {
  assertEquals(unavailable(testState(), undefined), null);
  const body = new TextEncoder().encode(
    JSON.stringify({ jsonrpc: "2.0", id: 9, method: "tools/list" }),
  );
  const off = unavailable(testState({ enabled: false }), body)!;
  assertEquals([off.status, (off.body as { id: number }).id], [503, 9]);
  const stopping = { ...testState(), stopping: true };
  assertEquals(unavailable(stopping, body)!.headers, { "retry-after": "5" });
});

Deno.test("RawHeaders reads as a web Headers does: any case, repeats joined, in name order", () => {
  const headers = new RawHeaders([
    "Mcp-Param-B",
    "2",
    "Host",
    "a",
    "host",
    "b",
    "Mcp-Param-A",
    "1",
  ]);
  const web = new Headers([["Mcp-Param-B", "2"], ["Host", "a"], ["host", "b"], [
    "Mcp-Param-A",
    "1",
  ]]);
  assertEquals(headers.get("HOST"), web.get("HOST"));
  assertEquals(headers.value("host"), "a, b");
  assertEquals(headers.get("absent"), null);
  const seen: string[] = [];
  headers.forEach((value, name) => seen.push(`${name}=${value}`));
  const expected: string[] = [];
  web.forEach((value, name) => expected.push(`${name}=${value}`));
  assertEquals(seen, expected);
});
