import { assertEquals } from "@std/assert";
import { availabilityGuard } from "../../../lib/server/guards/availability_guard.ts";
import { bodyLimit } from "../../../lib/server/guards/body_limit.ts";
import { guarded, testState } from "./_app.ts";

const request = JSON.stringify({
  jsonrpc: "2.0",
  id: "x",
  method: "tools/list",
});

Deno.test("availabilityGuard() answers -33006 (503) with the request id while switched off", async () => {
  const state = testState({ enabled: false });
  const response = await guarded(bodyLimit(), availabilityGuard(state)).request(
    "/mcp",
    { method: "POST", body: request },
  );
  assertEquals(response.status, 503);
  const body = await response.json();
  assertEquals([body.id, body.error.code], ["x", -33006]);
});

Deno.test("availabilityGuard() answers -33000 (503) with Retry-After while stopping", async () => {
  const state = testState();
  state.stopping = true;
  const response = await guarded(bodyLimit(), availabilityGuard(state)).request(
    "/mcp",
    { method: "POST", body: "not json" },
  );
  assertEquals(response.status, 503);
  assertEquals(response.headers.get("retry-after"), "5");
  const body = await response.json();
  assertEquals([body.id, body.error.code], [null, -33000]);
});

Deno.test("availabilityGuard() passes requests while the server is on", async () => {
  const response = await guarded(bodyLimit(), availabilityGuard(testState()))
    .request("/mcp", { method: "POST", body: request });
  assertEquals(response.status, 200);
});
