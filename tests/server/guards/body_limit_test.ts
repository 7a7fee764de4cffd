import { assertEquals } from "@std/assert";
import { bodyLimit } from "../../../lib/server/guards/body_limit.ts";
import { guarded } from "./_app.ts";

/** A body that never ends, 8 bytes a chunk, counting how often it was read. */
function endless(): { body: ReadableStream<Uint8Array>; pulled: () => number } {
  let count = 0;
  const body = new ReadableStream<Uint8Array>({
    pull(controller) {
      count++;
      controller.enqueue(new Uint8Array(8));
    },
  });
  return { body, pulled: () => count };
}

Deno.test("bodyLimit() refuses a declared length over the cap before reading", async () => {
  const { body, pulled } = endless();
  const response = await guarded(bodyLimit(16)).request("/mcp", {
    method: "POST",
    body,
    headers: { "content-length": "17" },
  });
  assertEquals(response.status, 413);
  assertEquals((await response.json()).error.code, -33005);
  assertEquals(pulled() <= 1, true);
});

Deno.test("bodyLimit() stops reading a stream once it passes the cap", async () => {
  const { body, pulled } = endless();
  const response = await guarded(bodyLimit(16)).request("/mcp", {
    method: "POST",
    body,
  });
  assertEquals(response.status, 413);
  assertEquals(pulled() <= 4, true, `pulled ${pulled()} chunks`);
});

Deno.test("bodyLimit() passes a body at the cap to the handler in one piece", async () => {
  const app = guarded(bodyLimit(16));
  const response = await app.request("/mcp", {
    method: "POST",
    body: "0123456789abcdef",
  });
  assertEquals([response.status, await response.text()], [200, "passed"]);
});
