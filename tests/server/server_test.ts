/**
 * A server's life: the handshake file, settings re-read while running, and an
 * orderly stop.
 */
import {
  assert,
  assertEquals,
  assertRejects,
  assertStringIncludes,
} from "@std/assert";
import { waitUntil } from "../_wait.ts";
import {
  exists,
  modernRequest,
  postModern,
  startTestServer,
} from "../_server.ts";
import { parseHandshake } from "../../lib/protocol/handshake.ts";
import { saveSettings, startServer } from "../../lib/serve.ts";
import { silentLogger } from "../../lib/base/log.ts";

Deno.test("startServer() writes the handshake after binding, file 0600 in a 0700 directory", async () => {
  await using t = await startTestServer();
  const info = await Deno.stat(t.server.handshakePath);
  assertEquals(info.mode! & 0o777, 0o600);
  assertEquals((await Deno.stat(t.home)).mode! & 0o777, 0o700);
  const parsed = parseHandshake(
    await Deno.readTextFile(t.server.handshakePath),
  );
  assert(parsed.ok);
  assertEquals(parsed.handshake.port, t.port);
  assertEquals(parsed.handshake.pid, Deno.pid);
  assertEquals(parsed.handshake.instanceId, t.server.instanceId);
  assertEquals(parsed.handshake.protocolVersion, "2026-07-28");
  assert(!Number.isNaN(Date.parse(parsed.handshake.startedAt)));
  const leftovers = [...Deno.readDirSync(t.home)].map((entry) => entry.name)
    .filter((name) => name.startsWith("."));
  assertEquals(leftovers, []);
});

Deno.test("stop() removes the handshake it wrote", async () => {
  const t = await startTestServer();
  await t.server.stop();
  assertEquals(
    await exists(t.server.handshakePath),
    false,
  );
  await t[Symbol.asyncDispose]();
});

Deno.test("stop() leaves a handshake that another server wrote since", async () => {
  const t = await startTestServer();
  const other = {
    ...JSON.parse(await Deno.readTextFile(t.server.handshakePath)),
    instanceId: "someone-else",
  };
  await Deno.writeTextFile(t.server.handshakePath, JSON.stringify(other));
  await t.server.stop();
  assertEquals(
    JSON.parse(await Deno.readTextFile(t.server.handshakePath)).instanceId,
    "someone-else",
  );
  await t[Symbol.asyncDispose]();
});

Deno.test("startServer() replaces a stale handshake whose pid is dead", async () => {
  const home = await Deno.makeTempDir();
  const child = new Deno.Command("true").spawn();
  const { success } = await child.status;
  assert(success);
  await Deno.writeTextFile(
    `${home}/mcp-handshake.json`,
    JSON.stringify({
      version: 1,
      port: 1,
      pid: child.pid,
      instanceId: "old",
      protocolVersion: "2026-07-28",
      startedAt: "x",
      token: null,
      expiresAt: null,
    }),
  );
  await using t = await startTestServer({ home });
  const parsed = JSON.parse(await Deno.readTextFile(t.server.handshakePath));
  assertEquals(parsed.instanceId, t.server.instanceId);
});

Deno.test("startServer() refuses invalid settings with a message naming the key", async () => {
  const home = await Deno.makeTempDir();
  try {
    await Deno.writeTextFile(
      `${home}/settings.json`,
      JSON.stringify({ requireAuth: true, colour: "blue" }),
    );
    const error = await assertRejects(() =>
      startServer({ home, port: 0, log: silentLogger })
    );
    assertStringIncludes(error.message, '"colour"');
  } finally {
    await Deno.remove(home, { recursive: true });
  }
});

Deno.test("settings changes apply within a second; an invalid change keeps the settings in force", async () => {
  const lines: string[] = [];
  await using t = await startTestServer({
    log: (line) => lines.push(line),
    watchIntervalMs: 250,
  });
  const origin = "https://app.example";
  const status = async () =>
    (await postModern(t.url, modernRequest("server/discover"), { origin }))
      .status;
  assertEquals(await status(), 403);
  await saveSettings(t.home, { allowedOrigins: [origin] });
  // "Within a second" is the file watch's 250 ms poll (its default, below):
  // the change is read by the running server, never by a restart. Its wall
  // time is not asserted: on a loaded two-core machine a poll can be late.
  await waitUntil(
    "the saved origin to be allowed",
    async () => await status() === 200,
    { timeoutMs: 5_000, intervalMs: 20 },
  );
  await Deno.writeTextFile(
    `${t.home}/settings.json`,
    '{"allowedOrigins": "everyone"}',
  );
  await waitUntil(
    "the invalid settings.json to be read and refused in the log",
    () => lines.join("\n").includes('"allowedOrigins"'),
  );
  assertEquals(await status(), 200);
  assertStringIncludes(lines.join("\n"), '"allowedOrigins"');
});

Deno.test("deleting settings.json goes back to the defaults", async () => {
  await using t = await startTestServer({ settings: { enabled: false } });
  assertEquals(
    (await postModern(t.url, modernRequest("server/discover"))).status,
    503,
  );
  await Deno.remove(`${t.home}/settings.json`);
  await waitUntil(
    "the defaults (server on) after settings.json is deleted",
    async () =>
      (await postModern(t.url, modernRequest("server/discover"))).status ===
        200,
  );
});

Deno.test("each start has its own instance id", async () => {
  await using a = await startTestServer();
  await using b = await startTestServer();
  assert(a.server.instanceId !== b.server.instanceId);
  assert(a.port !== b.port);
});

Deno.test("startServer() binds settings.port on 127.0.0.1 when no port is forced", async () => {
  const probe = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (probe.addr as Deno.NetAddr).port;
  probe.close();
  const home = await Deno.makeTempDir();
  await saveSettings(home, { port });
  const server = await startServer({ home, log: silentLogger });
  try {
    assertEquals(server.port, port);
    assertEquals(server.url, `http://127.0.0.1:${port}/mcp`);
  } finally {
    await server.stop();
    await Deno.remove(home, { recursive: true });
  }
});

Deno.test("startServer() reports a port that is already taken", async () => {
  const taken = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const home = await Deno.makeTempDir();
  try {
    await saveSettings(home, { port: (taken.addr as Deno.NetAddr).port });
    const error = await assertRejects(() =>
      startServer({ home, log: silentLogger })
    );
    assertStringIncludes(error.message, "is in use");
    assertEquals(
      await exists(`${home}/mcp-handshake.json`),
      false,
    );
  } finally {
    taken.close();
    await Deno.remove(home, { recursive: true });
  }
});

Deno.test("a start that fails after the MCP endpoint is listening (the console's port is taken) closes what it opened: the MCP port is free again, no handshake is left", async () => {
  const taken = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const probe = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (probe.addr as Deno.NetAddr).port;
  probe.close();
  const home = await Deno.makeTempDir();
  try {
    await saveSettings(home, { console: true });
    const error = await assertRejects(() =>
      startServer({
        home,
        port,
        consolePort: (taken.addr as Deno.NetAddr).port,
        log: silentLogger,
      })
    );
    assertStringIncludes(error.message, "Cannot start the console");
    assertEquals(await exists(`${home}/mcp-handshake.json`), false);
    // The MCP endpoint had bound `port`: it was closed, so it binds again.
    Deno.listen({ hostname: "127.0.0.1", port }).close();
  } finally {
    taken.close();
    await Deno.remove(home, { recursive: true });
  }
});
