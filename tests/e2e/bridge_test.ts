/**
 * The stdio bridge as MCP clients run it: `deno run bridge.ts` spawned by the
 * v1 SDK client (legacy `initialize`) and the v2 SDK client (modern), against
 * a real server; the proof of identity against a squatter; launch on demand;
 * a rotated token and a restarted server recovered by one re-read; and a
 * clean exit when stdin closes.
 */

import { Client as ClientV2 } from "@modelcontextprotocol/client";
import { StdioClientTransport as StdioV2 } from "@modelcontextprotocol/client/stdio";
import { Client as ClientV1 } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport as StdioV1 } from "@modelcontextprotocol/sdk/client/stdio.js";
import {
  CallToolResultSchema,
  ElicitRequestSchema,
} from "@modelcontextprotocol/sdk/types.js";
import { assert, assertEquals } from "@std/assert";
import { writeHandshake } from "../../lib/app/handshake_file.ts";
import { BRIDGE_PERMISSIONS } from "../../lib/cli/integration.ts";
import { BRIDGE_TOKEN_NAME, HANDSHAKE_FILE } from "../../lib/base/identity.ts";
import type { JsonObject } from "../../lib/protocol/jsonrpc.ts";
import { sleep } from "../../lib/base/sleep.ts";
import { savedConnection, serverWith } from "../_connections.ts";
import { openFixture } from "../_db.ts";
import { recordingDialog } from "../_dialog.ts";
import { MAIN } from "../_main.ts";
import { startTestServer } from "../_server.ts";
import { waitUntil } from "../_wait.ts";

const BRIDGE = new URL("../../bridge.ts", import.meta.url).pathname;
const ARGS = ["run", ...BRIDGE_PERMISSIONS, BRIDGE];
const INSERT = "insert into authors (name) values ('Grace')";

async function withShop(
  run: (
    t: {
      home: string;
      connectionId: string;
      asked: () => Promise<JsonObject[]>;
      count: () => Promise<number>;
    },
  ) => Promise<void>,
) {
  await using fixture = await openFixture("sqlite");
  await using dialog = await recordingDialog(0);
  const saved = savedConnection(fixture, "Shop", {
    externalAccess: "readWrite",
  });
  await using server = await serverWith([saved], {
    hostDialog: dialog.setting,
  });
  await run({
    home: server.home,
    connectionId: saved.id,
    asked: () => dialog.asked(),
    count: async () => {
      const rows = await fixture.admin("select count(*) as n from authors");
      return Number((rows[0] as { n: unknown }).n);
    },
  });
}

Deno.test("v1 SDK client over the bridge (legacy initialize): tools, progress, and an approval by elicitation", async () => {
  await withShop(async (t) => {
    const client = new ClientV1(
      { name: "legacy-stdio", version: "1.0.0" },
      { capabilities: { elicitation: {} } },
    );
    const forms: JsonObject[] = [];
    client.setRequestHandler(
      ElicitRequestSchema,
      (request: { params: unknown }) => {
        forms.push(request.params as JsonObject);
        return Promise.resolve({
          action: "accept",
          content: { approved: true },
        });
      },
    );
    await client.connect(
      new StdioV1({
        command: Deno.execPath(),
        args: ARGS,
        env: { DBPORT_HOME: t.home },
        stderr: "ignore",
      }),
    );
    try {
      assertEquals(client.getServerVersion()?.name, "dbport");
      assertEquals(client.getServerCapabilities()?.resources?.subscribe, false);
      const tools = await client.listTools();
      // The bridge token is readWrite: no confirm_destructive_operation.
      assertEquals(
        tools.tools.map((tool: { name: string }) => tool.name).sort(),
        [
          "describe_table",
          "execute_query",
          "explain_query",
          "export_query",
          "list_connections",
          "list_schemas",
          "list_tables",
          "search_schema",
        ],
      );
      const progress: number[] = [];
      const read = await client.callTool(
        {
          name: "execute_query",
          arguments: {
            connection_id: t.connectionId,
            // Tens of milliseconds of work, so the progress lines are not all
            // in the response's chunk (see below).
            query:
              "with recursive c(x) as (select 1 union all select x + 1 from c where x < 300000) select min(x) as one from c",
          },
        },
        CallToolResultSchema,
        { onprogress: (p: { progress: number }) => progress.push(p.progress) },
      );
      // The v1 SDK hands notifications to its handlers a tick after the
      // response, which removes the progress handler: when the lines arrive
      // in one chunk (a fast statement), the later ones reach onprogress too
      // late. All three are sent, in order, before the response: the
      // raw-stdio test checks that.
      assert(progress.length >= 1, "no progress reached onprogress");
      assertEquals(progress, [0, 0.3, 1].slice(0, progress.length));
      assertEquals((read.structuredContent as JsonObject).rows, [[1]]);
      // Legacy results carry no modern fields.
      assertEquals("resultType" in read, false);
      assertEquals("ttlMs" in read, false);

      const write = await client.callTool({
        name: "execute_query",
        arguments: { connection_id: t.connectionId, query: INSERT },
      });
      assertEquals(write.isError, undefined, JSON.stringify(write));
      assertEquals(await t.count(), 3);
      // The form reached the client over stdio, with the statement...
      assertEquals(forms.length, 1);
      const schema = forms[0]!.requestedSchema as {
        properties: { approved: { description: string } };
      };
      assertEquals(
        schema.properties.approved.description,
        `Changes 1 row of authors\n\n${INSERT}`,
      );
      // ...and a readWrite token is confirmed on the host as well.
      assertEquals((await t.asked()).length, 1);
    } finally {
      await client.close();
      // The SDK's stdio close races the child's exit against a 2 s timer it
      // never clears; let it run out inside this test.
      await sleep(2_100);
    }
  });
});

Deno.test("v2 SDK client over the bridge (modern, forwarded as is): tools, progress, and an approval", async () => {
  await withShop(async (t) => {
    const client = new ClientV2(
      { name: "modern-stdio", version: "1.0.0" },
      {
        capabilities: { elicitation: { form: {} } },
        versionNegotiation: { mode: { pin: "2026-07-28" } },
      },
    );
    client.setRequestHandler(
      "elicitation/create",
      () =>
        Promise.resolve(
          // deno-lint-ignore no-explicit-any
          { action: "accept", content: { approved: true } } as any,
        ),
    );
    await client.connect(
      new StdioV2({
        command: Deno.execPath(),
        args: ARGS,
        env: { DBPORT_HOME: t.home },
        stderr: "ignore",
      }),
    );
    try {
      assertEquals(client.getNegotiatedProtocolVersion(), "2026-07-28");
      const tools = await client.listTools();
      assertEquals(tools.tools.length, 8);
      const progress: number[] = [];
      const read = await client.callTool({
        name: "execute_query",
        arguments: { connection_id: t.connectionId, query: "select 2 as two" },
      }, { onprogress: (p) => progress.push(p.progress) });
      // Like v1, the v2 SDK runs notification handlers a microtask after it
      // settles the response that drops the progress handler: over stdio the
      // lines arrive in one chunk, so the last ones may come too late. The
      // raw-stdio test checks that all three are sent, in order, first.
      assert(progress.length >= 1, "no progress reached onprogress");
      assertEquals(progress, [0, 0.3, 1].slice(0, progress.length));
      assertEquals((read.structuredContent as JsonObject).rows, [[2]]);
      const write = await client.callTool({
        name: "execute_query",
        arguments: { connection_id: t.connectionId, query: INSERT },
      });
      assertEquals(write.isError, undefined, JSON.stringify(write));
      assertEquals(await t.count(), 3);
      assertEquals((await t.asked()).length, 1);
    } finally {
      await client.close();
      // The SDK's stdio close races the child's exit against a 2 s timer it
      // never clears; let it run out inside this test.
      await sleep(2_100);
    }
  });
});

Deno.test("the bridge's own server/discover checks are logged as the bridge itself, and no client in the clients list", async () => {
  await using fixture = await openFixture("sqlite");
  await using server = await serverWith([savedConnection(fixture, "Shop")]);
  const client = new ClientV2({ name: "walk-client", version: "1.0.0" }, {
    versionNegotiation: { mode: { pin: "2026-07-28" } },
  });
  await client.connect(
    new StdioV2({
      command: Deno.execPath(),
      args: ARGS,
      env: { DBPORT_HOME: server.home },
      stderr: "ignore",
    }),
  );
  try {
    await client.listTools();
  } finally {
    await client.close();
    await sleep(2_100); // the SDK's stdio close timer (above)
  }
  const { activity } = server.server;
  const rows = await activity.since(0); // flushes
  // The bridge did send its own checks, as itself, under its token.
  assert(rows.some((row) => row.bridgeItself === true), JSON.stringify(rows));
  assertEquals(
    (await activity.clients()).map((c) => [c.name, c.tokenName]),
    [["walk-client", BRIDGE_TOKEN_NAME]],
  );
  assertEquals(await activity.clientNames(), ["walk-client"]);
});

/** Stop a server a launch started, and wait until its handshake is gone. */
async function stopLaunched(home: string, pid: number | null): Promise<void> {
  if (pid === null) return;
  Deno.kill(pid, "SIGTERM");
  await waitUntil(
    "the launched server's handshake file to be gone",
    () => Deno.stat(`${home}/${HANDSHAKE_FILE}`).then(() => false, () => true),
    { timeoutMs: 15_000, intervalMs: 100 },
  );
}

/** This process's environment without DBPORT_LAUNCH. */
function inherited(): Record<string, string> {
  const { DBPORT_LAUNCH: _launch, ...rest } = Deno.env.toObject();
  return rest;
}

/** Run the bridge with raw stdio; returns the process and a line reader. */
function spawnBridge(
  home: string,
  env: Record<string, string> = {},
  only = false,
) {
  const child = new Deno.Command(Deno.execPath(), {
    args: ARGS,
    // Never the desktop's open command in a test; `only`: this environment
    // and nothing inherited.
    env: only
      ? { ...inherited(), DBPORT_HOME: home, ...env }
      : { DBPORT_HOME: home, DBPORT_LAUNCH: "true", ...env },
    clearEnv: only,
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const lines = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = "";
  const stderr = new Response(child.stderr).text();
  const writer = child.stdin.getWriter();
  return {
    child,
    stderr,
    async send(message: JsonObject) {
      await writer.write(
        new TextEncoder().encode(JSON.stringify(message) + "\n"),
      );
    },
    async close() {
      await writer.close().catch(() => {});
    },
    async line(): Promise<JsonObject | null> {
      for (;;) {
        const nl = buffer.indexOf("\n");
        if (nl !== -1) {
          const text = buffer.slice(0, nl);
          buffer = buffer.slice(nl + 1);
          return JSON.parse(text);
        }
        const { done, value } = await lines.read();
        if (done) return null;
        buffer += value;
      }
    },
    async rest() {
      while (!(await lines.read()).done) { /* drain */ }
    },
  };
}

Deno.test("the bridge refuses a squatter that cannot prove it is the server", async () => {
  // A process holding the handshake's port, answering discover with another
  // instance id: the handshake's pid (this test) does hold the port.
  await using squatter = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen() {} },
    () =>
      Response.json({
        jsonrpc: "2.0",
        id: "dbport-mcp-discover",
        result: {
          supportedVersions: ["2026-07-28"],
          capabilities: {},
          _meta: { "dbport/instanceId": "someone-else" },
        },
      }),
  );
  const home = await Deno.makeTempDir({ prefix: "dbport-squat-" });
  try {
    await writeHandshake(`${home}/${HANDSHAKE_FILE}`, {
      version: 1,
      port: squatter.addr.port,
      pid: Deno.pid,
      instanceId: "the-real-one",
      protocolVersion: "2026-07-28",
      startedAt: new Date().toISOString(),
      token: "dbp_stolen",
      expiresAt: new Date(Date.now() + 3_600_000).toISOString(),
    });
    const bridge = spawnBridge(home);
    // It stays up and answers each request with what is wrong, by its id.
    await bridge.send({ jsonrpc: "2.0", id: 41, method: "tools/list" });
    const line = await bridge.line();
    const error = line?.error as { code: number; message: string };
    assertEquals(line?.id, 41);
    assertEquals(error.code, -33000);
    assert(
      error.message.startsWith(
        "the local endpoint did not prove it belongs to the service",
      ),
      error.message,
    );
    assert(error.message.includes("delete"), error.message);
    await bridge.close();
    assertEquals((await bridge.child.status).code, 0);
    assert((await bridge.stderr).includes("did not prove"));
    await bridge.close();
    await bridge.rest();
  } finally {
    await Deno.remove(home, { recursive: true });
  }
});

Deno.test("a bridge with no server stays up, says how to start dbport per request, and connects once the server is up", async () => {
  const home = await Deno.makeTempDir({ prefix: "dbport-noserver-" });
  // A launch command that fails at once is not waited on for 10 s.
  const bridge = spawnBridge(home, { DBPORT_LAUNCH: "false" });
  try {
    const started = performance.now();
    await bridge.send({
      jsonrpc: "2.0",
      id: "first",
      method: "initialize",
      params: {
        protocolVersion: "2025-06-18",
        capabilities: {},
        clientInfo: { name: "raw", version: "1" },
      },
    });
    const first = await bridge.line();
    assert(performance.now() - started < 5_000, "waited for a failed launch");
    assertEquals(first?.id, "first");
    const error = first?.error as { code: number; message: string };
    assertEquals(error.code, -33000);
    assert(/deno task serve/.test(error.message), error.message);
    // A server appears: the next request finds its handshake.
    await using server = await startTestServer({ home });
    await bridge.send({
      jsonrpc: "2.0",
      id: 2,
      method: "tools/list",
      params: {
        _meta: {
          "io.modelcontextprotocol/protocolVersion": "2026-07-28",
          "io.modelcontextprotocol/clientCapabilities": {},
        },
      },
    });
    const listed = await bridge.line();
    assertEquals(listed?.id, 2);
    assert(listed?.result, JSON.stringify(listed));
    void server;
    await bridge.close();
    assertEquals((await bridge.child.status).code, 0);
    await bridge.rest();
    await bridge.stderr;
  } finally {
    await Deno.remove(home, { recursive: true });
  }
});

Deno.test("the bridge reports a switched-off server as what it is, not as a failed proof", async () => {
  const home = await Deno.makeTempDir({ prefix: "dbport-off-" });
  try {
    await using server = await startTestServer({
      home,
      settings: { enabled: false },
    });
    void server;
    const bridge = spawnBridge(home);
    await bridge.send({ jsonrpc: "2.0", id: 1, method: "tools/list" });
    const line = await bridge.line();
    const error = line?.error as { code: number; message: string };
    assertEquals(line?.id, 1);
    assert(/switched off/.test(error.message), error.message);
    assert(!/did not prove|delete/.test(error.message), error.message);
    await bridge.close();
    await bridge.child.status;
    await bridge.rest();
    await bridge.stderr;
  } finally {
    await Deno.remove(home, { recursive: true });
  }
});

Deno.test("launch on demand: DBPORT_LAUNCH starts a real server, and the bridge reaches it", async () => {
  const home = await Deno.makeTempDir({ prefix: "dbport-launch-" });
  const launch = JSON.stringify([
    Deno.execPath(),
    "run",
    "--allow-all",
    MAIN,
    "open-url",
  ]);
  const bridge = spawnBridge(home, { DBPORT_LAUNCH: launch });
  let pid: number | null = null;
  try {
    await bridge.send({
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: {
        protocolVersion: "2025-06-18",
        capabilities: {},
        clientInfo: { name: "raw", version: "1" },
      },
    });
    const init = await bridge.line();
    assertEquals((init?.result as JsonObject).protocolVersion, "2025-06-18");
    await bridge.send({ jsonrpc: "2.0", id: 2, method: "tools/list" });
    const list = await bridge.line();
    const tools = (list?.result as { tools: { name: string }[] }).tools;
    assert(tools.some((tool) => tool.name === "execute_query"));
    pid = JSON.parse(await Deno.readTextFile(`${home}/${HANDSHAKE_FILE}`)).pid;
    await bridge.close();
    assertEquals((await bridge.child.status).code, 0);
    await bridge.rest();
    assert((await bridge.stderr).includes("no trusted handshake"));
    // The server runs headless, its output in serve.log.
    const log = await Deno.readTextFile(`${home}/serve.log`);
    assert(log.includes("is listening on"), log);
  } finally {
    await stopLaunched(home, pid);
    await Deno.remove(home, { recursive: true });
  }
});

Deno.test("from a checkout with no app and no URL handler, the bridge starts the checkout's serve in the background", async () => {
  const home = await Deno.makeTempDir({ prefix: "dbport-checkout-" });
  // No xdg-mime or xdg-open on this PATH: nothing takes dbport:// URLs.
  const bin = await Deno.makeTempDir({ prefix: "dbport-nobin-" });
  const bridge = spawnBridge(home, { PATH: bin }, true);
  let pid: number | null = null;
  try {
    await bridge.send({
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: {
        protocolVersion: "2025-06-18",
        capabilities: {},
        clientInfo: { name: "raw", version: "1" },
      },
    });
    const init = await bridge.line();
    assertEquals((init?.result as JsonObject).protocolVersion, "2025-06-18");
    pid = JSON.parse(await Deno.readTextFile(`${home}/${HANDSHAKE_FILE}`)).pid;
    await bridge.close();
    assertEquals((await bridge.child.status).code, 0);
    await bridge.rest();
    const stderr = await bridge.stderr;
    assert(stderr.includes(`${MAIN} open-url dbport://`), stderr);
    // Headless, its output in the app directory.
    const log = await Deno.readTextFile(`${home}/serve.log`);
    assert(log.includes("is listening on"), log);
  } finally {
    await stopLaunched(home, pid);
    await Deno.remove(home, { recursive: true });
    await Deno.remove(bin, { recursive: true });
  }
});

Deno.test("a rotated-out token and a restarted server are recovered by one re-read of the handshake", async () => {
  const clock = { now: Date.now() };
  const home = await Deno.makeTempDir({ prefix: "dbport-rotate-" });
  let first = await startTestServer({ home, now: () => clock.now });
  const bridge = spawnBridge(home);
  try {
    const list = async (id: number) => {
      await bridge.send({
        jsonrpc: "2.0",
        id,
        method: "tools/list",
        params: {
          _meta: {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {},
          },
        },
      });
      return await bridge.line();
    };
    assert((await list(1))?.result);
    // 61 minutes on: a new token was published at 45, the first one expired.
    clock.now += 46 * 60_000;
    await first.server.rotation.tick();
    clock.now += 15 * 60_000;
    await first.server.rotation.tick();
    const afterRotation = await list(2);
    assert(afterRotation?.result, JSON.stringify(afterRotation));
    // The server restarts (new port, new instance, new handshake).
    await first[Symbol.asyncDispose]();
    first = await startTestServer({ home });
    const afterRestart = await list(3);
    assert(afterRestart?.result, JSON.stringify(afterRestart));
    const log = bridge.close().then(() => bridge.stderr);
    assertEquals((await bridge.child.status).code, 0);
    await bridge.rest();
    const text = await log;
    assert(text.includes("the server refused the token"), text);
    assert(text.includes("the server cannot be reached"), text);
  } finally {
    await first[Symbol.asyncDispose]();
  }
});

Deno.test("stdin EOF ends the bridge within a second, even with a request in flight", async () => {
  await using fixture = await openFixture("sqlite");
  const saved = savedConnection(fixture, "Slow");
  await using server = await serverWith([saved]);
  const bridge = spawnBridge(server.home);
  await bridge.send({
    jsonrpc: "2.0",
    id: 1,
    method: "tools/call",
    params: {
      name: "execute_query",
      arguments: {
        connection_id: saved.id,
        query:
          "with recursive c(x) as (select 1 union all select x + 1 from c where x < 2000000000) select count(*) from c",
      },
      _meta: {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
      },
    },
  });
  // The request crosses the bridge and is in flight; the bridge shows
  // nothing to wait on.
  await sleep(500);
  const started = performance.now();
  await bridge.close();
  const status = await bridge.child.status;
  const took = performance.now() - started;
  assertEquals(status.code, 0);
  assert(took < 1_000, `the bridge took ${Math.round(took)} ms to exit`);
  await bridge.rest();
  await bridge.stderr;
});

Deno.test("raw stdio, legacy: progress lines come in order before the answer, which has no modern fields", async () => {
  await using fixture = await openFixture("sqlite");
  const saved = savedConnection(fixture, "Raw");
  await using server = await serverWith([saved]);
  const bridge = spawnBridge(server.home);
  try {
    await bridge.send({
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: { protocolVersion: "2025-11-25", capabilities: {} },
    });
    await bridge.line();
    await bridge.send({ jsonrpc: "2.0", method: "notifications/initialized" });
    await bridge.send({ jsonrpc: "2.0", id: 9, method: "ping" });
    assertEquals(await bridge.line(), { jsonrpc: "2.0", id: 9, result: {} });
    await bridge.send({
      jsonrpc: "2.0",
      id: 2,
      method: "tools/call",
      params: {
        name: "execute_query",
        arguments: { connection_id: saved.id, query: "select 1.0 as one" },
        _meta: { progressToken: "t" },
      },
    });
    const lines = [
      await bridge.line(),
      await bridge.line(),
      await bridge.line(),
      await bridge.line(),
    ];
    assertEquals(
      lines.slice(0, 3).map((l) => (l?.params as JsonObject).progress),
      [0, 0.3, 1],
    );
    const result = lines[3]!.result as JsonObject;
    assertEquals(lines[3]!.id, 2);
    assertEquals("resultType" in result, false);
    assertEquals("_meta" in result, false);
    // A modern request through the same bridge: forwarded as is, the same
    // order, the answer verbatim (modern fields kept).
    await bridge.send({
      jsonrpc: "2.0",
      id: 5,
      method: "tools/call",
      params: {
        name: "execute_query",
        arguments: { connection_id: saved.id, query: "select 2 as two" },
        _meta: {
          "io.modelcontextprotocol/protocolVersion": "2026-07-28",
          "io.modelcontextprotocol/clientCapabilities": {},
          progressToken: "m",
        },
      },
    });
    const modern = [
      await bridge.line(),
      await bridge.line(),
      await bridge.line(),
      await bridge.line(),
    ];
    assertEquals(
      modern.slice(0, 3).map((l) => (l?.params as JsonObject).progress),
      [0, 0.3, 1],
    );
    assertEquals(modern[3]!.id, 5);
    assertEquals((modern[3]!.result as JsonObject).resultType, "complete");
    await bridge.send({ jsonrpc: "2.0", id: 3, method: "nope/nothing" });
    // The bridge token is readWrite: confirm_destructive_operation is 403.
    await bridge.send({
      jsonrpc: "2.0",
      id: 4,
      method: "tools/call",
      params: {
        name: "confirm_destructive_operation",
        arguments: { connection_id: saved.id, query: "drop table books" },
      },
    });
    // Requests run concurrently: the two answers may come in either order.
    const answers = [await bridge.line(), await bridge.line()].sort((a, b) =>
      Number(a?.id) - Number(b?.id)
    );
    assertEquals([answers[0]?.id, (answers[0]?.error as JsonObject).code], [
      3,
      -32601,
    ]);
    const refused = answers[1]?.error as JsonObject;
    assertEquals([answers[1]?.id, refused.code], [4, -33007]);
    assertEquals((refused.data as JsonObject).requiredScopes, ["admin"]);
  } finally {
    await bridge.close();
    await bridge.child.status;
    await bridge.rest();
    await bridge.stderr;
  }
});

Deno.test("a server that went away for good is -33000 saying how to start it", async () => {
  const home = await Deno.makeTempDir({ prefix: "dbport-gone-" });
  const server = await startTestServer({ home });
  const bridge = spawnBridge(home);
  const list = (id: number) =>
    bridge.send({
      jsonrpc: "2.0",
      id,
      method: "tools/list",
      params: {
        _meta: {
          "io.modelcontextprotocol/protocolVersion": "2026-07-28",
          "io.modelcontextprotocol/clientCapabilities": {},
        },
      },
    });
  try {
    // Connected first: the bridge proved the server and forwards.
    await list(1);
    assert((await bridge.line())?.result);
    await server[Symbol.asyncDispose]();
    await list(2);
    const error = (await bridge.line())?.error as JsonObject;
    assertEquals(error.code, -33000);
    assert(String(error.message).startsWith("dbport is not running"));
  } finally {
    await bridge.close();
    await bridge.child.status;
    await bridge.rest();
    await bridge.stderr;
    await Deno.remove(home, { recursive: true }).catch(() => {});
  }
});
