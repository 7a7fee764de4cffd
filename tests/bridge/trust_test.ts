import { assert, assertEquals } from "@std/assert";
import { pidListensOn, readTrusted } from "../../lib/bridge/trust.ts";
import { HANDSHAKE_FILE } from "../../lib/base/identity.ts";

async function home(
  handshake: Record<string, unknown>,
  mode = 0o600,
): Promise<string> {
  const dir = await Deno.makeTempDir({ prefix: "dbport-trust-" });
  await Deno.chmod(dir, 0o700);
  const path = `${dir}/${HANDSHAKE_FILE}`;
  await Deno.writeTextFile(path, JSON.stringify(handshake));
  await Deno.chmod(path, mode);
  return dir;
}

function handshake(port: number, overrides: Record<string, unknown> = {}) {
  return {
    version: 1,
    port,
    pid: Deno.pid,
    instanceId: "i-1",
    protocolVersion: "2026-07-28",
    startedAt: new Date().toISOString(),
    token: "dbp_x",
    expiresAt: new Date(Date.now() + 3_600_000).toISOString(),
    ...overrides,
  };
}

Deno.test("readTrusted() trusts a 0600 handshake whose live pid holds the port", async () => {
  using listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const dir = await home(handshake(listener.addr.port));
  try {
    const trust = await readTrusted(dir, Date.now());
    assert(trust.ok, trust.ok ? "" : trust.problem);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("readTrusted() refuses 0644, a dead pid, an expired token, a writable directory and a port not held", async () => {
  using listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = listener.addr.port;
  const cases: [string, Record<string, unknown>, number, RegExp][] = [
    ["0644", handshake(port), 0o644, /has mode 0644; only 0600 is trusted/],
    ["dead pid", handshake(port, { pid: 4_000_000 }), 0o600, /is not running/],
    [
      "expired",
      handshake(port, { expiresAt: new Date(Date.now() - 1).toISOString() }),
      0o600,
      /has expired/,
    ],
  ];
  if (Deno.build.os === "linux") {
    // A port nobody (or somebody else) listens on.
    cases.push(["port", handshake(1), 0o600, /does not hold port 1/]);
  }
  for (const [name, value, mode, problem] of cases) {
    const dir = await home(value, mode);
    try {
      const trust = await readTrusted(dir, Date.now());
      assertEquals(trust.ok, false, name);
      if (!trust.ok) assert(problem.test(trust.problem), trust.problem);
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  }
  const dir = await home(handshake(port));
  try {
    await Deno.chmod(dir, 0o777);
    const trust = await readTrusted(dir, Date.now());
    assert(!trust.ok && /group- or world-writable/.test(trust.problem));
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test({
  name: "pidListensOn() finds this process's listening socket (Linux)",
  ignore: Deno.build.os !== "linux",
  async fn() {
    using listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
    assertEquals(await pidListensOn(Deno.pid, listener.addr.port), true);
    assertEquals(await pidListensOn(1, listener.addr.port), false);
  },
});
