/**
 * The official MCP conformance suite (`npm:@modelcontextprotocol/conformance`)
 * under Deno, against a started server in the legacy era with `requireAuth`
 * off, for every server scenario that applies to a server without the
 * suite's own test tools, prompts and resources (docs/clients.md, "Proven with real clients", lists
 * the others and why). The suite talks through a proxy that checks every
 * message the server sends against the JSON Schema of its revision.
 */

import { assert, assertEquals, assertMatch } from "@std/assert";
import { savedConnection, serverWith } from "../_connections.ts";
import { openFixture } from "../_db.ts";
import { freePort } from "../_server.ts";
import { wireProxy } from "../_wire_proxy.ts";

const SUITE = "npm:@modelcontextprotocol/conformance@0.1.16";
/** The suite at the modern wire (deno.dev.json's `conformance-modern`). */
const MODERN_SUITE = "npm:@modelcontextprotocol/conformance@0.2.0-alpha.12";
const EXPECTED = new URL(
  "./conformance-2026-07-28-expected.yml",
  import.meta.url,
).pathname;
const CONFIG = new URL("../../deno.dev.json", import.meta.url).pathname;

const SCENARIOS = [
  "server-initialize",
  "ping",
  "logging-set-level",
  "tools-list",
  "resources-list",
  "prompts-list",
  "completion-complete",
  "dns-rebinding-protection",
];

/**
 * The 0.2.0-alpha.12 suite's server scenarios that apply to a server without
 * the suite's diagnostic tools, prompts and resources, at 2026-07-28, with
 * how many of each one's checks are expected failures (listed in
 * conformance-2026-07-28-expected.yml and explained in docs/clients.md).
 */
const MODERN_SCENARIOS: Readonly<Record<string, number>> = {
  "server-stateless": 4,
  "tools-list": 0,
  "caching": 0,
  "sep-2164-resource-not-found": 0,
  "completion-complete": 0,
  "prompts-list": 0,
  "resources-list": 0,
  "server-sse-multiple-streams": 0,
  "input-required-result-unsupported-methods": 0,
  "http-header-validation": 1,
  "dns-rebinding-protection": 1,
};

/** Run one scenario; returns the exit code and what the suite printed. */
async function runScenario(
  url: string,
  scenario: string,
  cwd: string,
  modern = false,
): Promise<{ code: number; out: string }> {
  const { code, stdout, stderr } = await new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      `--config=${CONFIG}`,
      "--allow-net=127.0.0.1",
      "--allow-read",
      `--allow-write=${cwd}`,
      "--allow-env",
      "--allow-sys",
      modern ? MODERN_SUITE : SUITE,
      "server",
      "--url",
      url,
      "--scenario",
      scenario,
      ...(modern
        ? ["--spec-version", "2026-07-28", "--expected-failures", EXPECTED]
        : []),
    ],
    cwd,
    env: { NO_COLOR: "1" },
    stdout: "piped",
    stderr: "piped",
  }).output();
  const decoder = new TextDecoder();
  return {
    code,
    out: decoder.decode(stdout) + decoder.decode(stderr),
  };
}

Deno.test("the official conformance suite passes every applicable server scenario (legacy era, requireAuth false)", async (t) => {
  await using fixture = await openFixture("sqlite");
  const port = freePort();
  // dbport refuses any Origin but the configured web origins; the
  // dns-rebinding scenario sends the server's own loopback origin as the
  // valid case, so this server lists it (docs/clients.md, "Proven with real clients").
  await using server = await serverWith(
    [savedConnection(fixture, "Shop")],
    { requireAuth: false, allowedOrigins: [`http://127.0.0.1:${port}`] },
    { port },
  );
  await using proxy = wireProxy(server.url);
  const cwd = await Deno.makeTempDir({ prefix: "dbport-conformance-" });
  try {
    for (const scenario of SCENARIOS) {
      await t.step(scenario, async () => {
        // dns-rebinding-protection forges Host, which a proxy would rewrite.
        const url = scenario === "dns-rebinding-protection"
          ? server.url
          : proxy.url;
        const { code, out } = await runScenario(url, scenario, cwd);
        assertEquals(code, 0, out);
        const passed = out.match(/Passed: (\d+)\/(\d+), (\d+) failed/);
        assert(passed !== null, out);
        assertEquals(passed[1], passed[2], out);
        assertEquals(passed[3], "0", out);
        assertMatch(out, /SUCCESS/);
      });
    }
    await proxy.check.assertValid();
    // Every proxied scenario's answers were seen and checked.
    assertEquals([...new Set(proxy.check.seen)].sort(), [
      "completion/complete",
      "initialize",
      "logging/setLevel",
      "ping",
      "prompts/list",
      "resources/list",
      "tools/list",
    ]);
  } finally {
    await Deno.remove(cwd, { recursive: true });
  }
});

Deno.test("the 0.2.0-alpha.12 conformance suite at --spec-version 2026-07-28 passes every applicable server scenario but the contract's differences", async (t) => {
  await using fixture = await openFixture("sqlite");
  await using server = await serverWith(
    [savedConnection(fixture, "Shop")],
    { requireAuth: false },
  );
  const cwd = await Deno.makeTempDir({ prefix: "dbport-conformance-" });
  try {
    for (const [scenario, expected] of Object.entries(MODERN_SCENARIOS)) {
      await t.step(scenario, async () => {
        const { code, out } = await runScenario(
          server.url,
          scenario,
          cwd,
          true,
        );
        // Exit 0: nothing failed but the expected failures, and each of
        // those still fails (a stale entry is exit 1).
        assertEquals(code, 0, out);
        const passed = out.match(/Passed: (\d+)\/(\d+), (\d+) failed/);
        assert(passed !== null, out);
        assertEquals(Number(passed[3]), expected, out);
        assertEquals(Number(passed[1]) + expected, Number(passed[2]), out);
      });
    }
  } finally {
    await Deno.remove(cwd, { recursive: true });
  }
});
