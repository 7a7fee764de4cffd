/**
 * The one host guard (lib/server/guards/host_guard.ts) with each listener's
 * hosts: the MCP endpoint's (any loopback name, the port optional) and the
 * console's (127.0.0.1 or localhost, always with its port).
 */
import { assertEquals } from "@std/assert";
import {
  type AllowedHosts,
  allowedHostsGuard,
  hostGuard,
  MCP_HOSTS,
} from "../../lib/server/guards/host_guard.ts";
import { CONSOLE_HOSTS } from "../../lib/console/guards.ts";
import { guarded, testState } from "../server/guards/_app.ts";

async function answer(
  hosts: AllowedHosts,
  port: () => number,
  host: string | undefined,
): Promise<{ status: number; text: string }> {
  const app = guarded(allowedHostsGuard(hosts, port));
  const response = await app.request("/mcp", {
    method: "POST",
    headers: host === undefined ? {} : { host },
  });
  return { status: response.status, text: await response.text() };
}

Deno.test("the host guard takes each listener's own hosts and nothing else", async () => {
  const port = () => 4000;
  const cases: [AllowedHosts, string | undefined, number][] = [
    [MCP_HOSTS, "localhost", 200],
    [MCP_HOSTS, "127.0.0.1:4000", 200],
    [MCP_HOSTS, "[::1]:4000", 200],
    [MCP_HOSTS, "LocalHost:4000", 200],
    [MCP_HOSTS, "localhost:4001", 403],
    [MCP_HOSTS, "evil.example:4000", 403],
    [MCP_HOSTS, undefined, 403],
    [CONSOLE_HOSTS, "127.0.0.1:4000", 200],
    [CONSOLE_HOSTS, "localhost:4000", 200],
    [CONSOLE_HOSTS, "127.0.0.1", 403],
    [CONSOLE_HOSTS, "localhost", 403],
    [CONSOLE_HOSTS, "[::1]:4000", 403],
    [CONSOLE_HOSTS, "127.0.0.1:4001", 403],
    [CONSOLE_HOSTS, "evil.example:4000", 403],
    [CONSOLE_HOSTS, undefined, 403],
  ];
  for (const [hosts, host, status] of cases) {
    const got = await answer(hosts, port, host);
    assertEquals(
      got.status,
      status,
      `${hosts === MCP_HOSTS ? "mcp" : "console"} ${host}`,
    );
    if (status === 403) {
      assertEquals(JSON.parse(got.text).error, "forbidden_host");
    }
  }
});

Deno.test("the host guard's refusal quotes the Host and names the listener's hosts and port", async () => {
  const mcp = JSON.parse(
    (await answer(MCP_HOSTS, () => 4000, "evil.example")).text,
  );
  assertEquals(
    mcp.message,
    'Host "evil.example" is not allowed: use 127.0.0.1, localhost or [::1] with port 4000',
  );
  const console = JSON.parse(
    (await answer(CONSOLE_HOSTS, () => 5000, "127.0.0.1")).text,
  );
  assertEquals(
    console.message,
    'Host "127.0.0.1" is not allowed: use 127.0.0.1 or localhost with port 5000',
  );
});

Deno.test("the host guard reads the port at each request (bound after the app is made)", async () => {
  const state = testState({}, 0);
  const app = guarded(hostGuard(state));
  const ask = (host: string) =>
    app.request("/mcp", { method: "POST", headers: { host } });
  state.port = 4100;
  assertEquals((await ask("127.0.0.1:4100")).status, 200);
  assertEquals((await ask("127.0.0.1:4000")).status, 403);
});
