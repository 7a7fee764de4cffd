import { assertEquals } from "@std/assert";
import {
  hostGuard,
  isAllowedHost,
  parseHost,
} from "../../../lib/server/guards/host_guard.ts";
import { guarded, testState } from "./_app.ts";

Deno.test("parseHost() splits names, IPv6 literals and ports", () => {
  assertEquals(parseHost("localhost:80"), { name: "localhost", port: 80 });
  assertEquals(parseHost("[::1]:4000"), { name: "[::1]", port: 4000 });
  assertEquals(parseHost("127.0.0.1"), { name: "127.0.0.1", port: null });
  assertEquals(parseHost("a:b:c"), null);
  assertEquals(parseHost("localhost:0"), null);
  assertEquals(parseHost("localhost:99999"), null);
});

Deno.test("isAllowedHost() accepts only loopback names and the bound port", () => {
  for (
    const host of [
      "localhost",
      "127.0.0.1:4000",
      "[::1]:4000",
      "LocalHost:4000",
    ]
  ) {
    assertEquals(isAllowedHost(host, 4000), true, host);
  }
  for (
    const host of [
      undefined,
      "",
      "localhost:4001",
      "example.com",
      "127.0.0.1.nip.io",
      "[::ffff:127.0.0.1]",
    ]
  ) {
    assertEquals(isAllowedHost(host, 4000), false, String(host));
  }
});

Deno.test("hostGuard() answers 403 forbidden_host with the refused value", async () => {
  const app = guarded(hostGuard(testState()));
  const refused = await app.request("/mcp", {
    method: "POST",
    headers: { host: "evil.example" },
  });
  assertEquals(refused.status, 403);
  const body = await refused.json();
  assertEquals(body.error, "forbidden_host");
  assertEquals(body.message.includes('"evil.example"'), true);
  const passed = await app.request("/mcp", {
    method: "POST",
    headers: { host: "localhost:4000" },
  });
  assertEquals([passed.status, await passed.text()], [200, "passed"]);
});
