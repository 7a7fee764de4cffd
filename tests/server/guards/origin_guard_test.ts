import { assertEquals } from "@std/assert";
import { originGuard } from "../../../lib/server/guards/origin_guard.ts";
import { guarded, testState } from "./_app.ts";

Deno.test("originGuard() lets requests without Origin through untouched", async () => {
  const response = await guarded(originGuard(testState())).request("/mcp", {
    method: "POST",
  });
  assertEquals(response.status, 200);
  assertEquals(response.headers.get("access-control-allow-origin"), null);
});

Deno.test("originGuard() refuses a foreign origin with 403 forbidden_origin", async () => {
  const response = await guarded(originGuard(testState())).request("/mcp", {
    method: "POST",
    headers: { origin: "https://evil.example" },
  });
  assertEquals(response.status, 403);
  assertEquals((await response.json()).error, "forbidden_origin");
});

Deno.test("originGuard() reads allowedOrigins live and grants CORS to them", async () => {
  const state = testState();
  const app = guarded(originGuard(state));
  const request = () =>
    app.request("/mcp", {
      method: "POST",
      headers: { origin: "https://app.example" },
    });
  assertEquals((await request()).status, 403);
  state.settings = {
    ...state.settings,
    allowedOrigins: ["https://app.example"],
  };
  const granted = await request();
  assertEquals(granted.status, 200);
  assertEquals(
    granted.headers.get("access-control-allow-origin"),
    "https://app.example",
  );
  assertEquals(granted.headers.get("vary"), "Origin");
});
