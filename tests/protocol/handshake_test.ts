import { assertEquals } from "@std/assert";
import { parseHandshake } from "../../lib/protocol/handshake.ts";

const good = {
  version: 1 as const,
  port: 1234,
  pid: 99,
  instanceId: "abc",
  protocolVersion: "2026-07-28",
  startedAt: "2026-11-21T00:00:00.000Z",
  token: null,
  expiresAt: null,
};

Deno.test("parseHandshake() accepts the written shape", () => {
  assertEquals(parseHandshake(JSON.stringify(good)), {
    ok: true,
    handshake: good,
  });
});

Deno.test("parseHandshake() refuses malformed handshakes with the field at fault", () => {
  const cases: [unknown, string][] = [
    ["{", "not JSON"],
    [[], "not a JSON object"],
    [{ ...good, version: 2 }, "version"],
    [{ ...good, port: 0 }, "port"],
    [{ ...good, port: 70000 }, "port"],
    [{ ...good, pid: -1 }, "pid"],
    [{ ...good, instanceId: "" }, "instanceId"],
    [{ ...good, token: 5 }, "token"],
  ];
  for (const [value, problem] of cases) {
    const result = parseHandshake(
      typeof value === "string" ? value : JSON.stringify(value),
    );
    assertEquals(result.ok, false);
    if (!result.ok) {
      assertEquals(result.problem.includes(problem), true, result.problem);
    }
  }
});

Deno.test("parseHandshake() reads the console's port, path and key, and refuses a malformed one", () => {
  const browser = { port: 4001, path: "/c/0a1b", key: "k" };
  const withConsole = { ...good, console: browser };
  const parsed = parseHandshake(JSON.stringify(withConsole));
  assertEquals(parsed.ok && parsed.handshake.console, browser);
  for (
    const bad of [
      { port: 0, path: "/c/0a1b", key: "k" },
      { port: 4001, path: "/c/0a1b" },
      { port: 4001, key: "k" },
      { port: 4001, path: "/", key: "k" },
      { port: 4001, path: "/c/../x", key: "k" },
      { port: 4001, path: "//evil.example/c/x", key: "k" },
      "4001",
    ]
  ) {
    const result = parseHandshake(JSON.stringify({ ...good, console: bad }));
    assertEquals(result.ok, false, JSON.stringify(bad));
  }
  // Without it (a server with "console": false): no console field at all.
  const plain = parseHandshake(JSON.stringify(good));
  assertEquals(plain.ok && "console" in plain.handshake, false);
});
