/**
 * The request lifecycle against real PostgreSQL, MariaDB and a SQLite file
 * (docs/wire.md "Request lifecycle", "Cancellation"): whatever ends a request —
 * the client's cancellation, a revoked token, a dropped connection, the
 * statement timeout, the handler deadline — the query is stopped on the
 * database too. Another principal's cancellation does nothing.
 */

import {
  Client,
  StreamableHTTPClientTransport,
} from "@modelcontextprotocol/client";
import process from "node:process";
import { assert, assertEquals } from "@std/assert";
import type { Engine } from "../../lib/db/types.ts";
import type { JsonObject } from "../../lib/protocol/jsonrpc.ts";
import { sleep } from "../../lib/base/sleep.ts";
import { savedConnection, serverWith } from "../_connections.ts";
import { waitUntil } from "../_wait.ts";
import {
  ENGINES,
  type Fixture,
  needs,
  openFixture,
  runningCount,
} from "../_db.ts";
import {
  type Answer,
  initializeSession,
  modernHeaders,
  modernRequest,
  postLegacy,
  postModern,
  type TestServer,
} from "../_server.ts";

/** A statement that runs about 30 s, tagged with `marker` so it can be found. */
function longQuery(engine: Engine, marker: string): string {
  switch (engine) {
    case "postgres":
      // pg_sleep is off the read allowlist: a long read of its own.
      return `with recursive c(x) as (select 1 union all select x + 1 from c where x < 2000000000) select count(*) as ${marker} from c`;
    case "mysql":
      return `select sleep(30) as ${marker}`;
    case "sqlite":
      return `with recursive c(x) as (select 1 union all select x + 1 from c where x < 2000000000) select count(*) as ${marker} from c`;
  }
}

interface Running {
  id: string;
  marker: string;
  answer: Promise<Answer>;
}

/** Start a long query; resolves once it runs on the database. */
async function startLong(
  server: TestServer,
  fixture: Fixture,
  connectionId: string,
  options: {
    authorization?: string;
    signal?: AbortSignal;
    timeoutSeconds?: number;
    progressToken?: string;
  } = {},
): Promise<Running> {
  const id = crypto.randomUUID();
  const marker = `m_${id.slice(0, 8)}`;
  const body = modernRequest(
    "tools/call",
    {
      name: "execute_query",
      arguments: {
        connection_id: connectionId,
        query: longQuery(fixture.engine, marker),
        timeout_seconds: options.timeoutSeconds ?? 60,
      },
    },
    id,
    options.progressToken ? { progressToken: options.progressToken } : {},
  );
  const headers: Record<string, string> = {};
  if (options.authorization) headers.authorization = options.authorization;
  const answer = options.signal
    ? fetch(server.url, {
      method: "POST",
      body: JSON.stringify(body),
      signal: options.signal,
      headers: {
        ...modernHeaders(body),
        authorization: `Bearer ${server.token}`,
      },
    }).then(async (response): Promise<Answer> => ({
      status: response.status,
      headers: response.headers,
      text: await response.text(),
      json: null,
    }))
    : postModern(server.url, body, headers);
  answer.catch(() => {});
  await untilRunning(fixture, marker);
  return { id, marker, answer };
}

async function untilRunning(fixture: Fixture, marker: string) {
  if (fixture.engine === "sqlite") {
    // Running means a core busy with it (the check goneWithin relies on),
    // measured over 250 ms windows of this process's CPU time.
    for (let i = 0; i < 20; i++) {
      const before = cpuMs();
      await sleep(250);
      if (cpuMs() - before > 150) return;
    }
    throw new Error(`${marker} never burned CPU`);
  }
  await waitUntil(
    `${marker} to run on ${fixture.engine}`,
    async () => await runningCount(fixture, marker) > 0,
    { timeoutMs: 15_000, intervalMs: 50 },
  );
}

/**
 * Wait until the query is gone from the database; returns how long it took.
 * SQLite runs in this process: there the query is gone when the process
 * stops burning CPU (a running count burns a whole core).
 */
async function goneWithin(fixture: Fixture, marker: string, ms: number) {
  const started = performance.now();
  if (fixture.engine === "sqlite") {
    for (;;) {
      // A 250 ms window of this process's CPU time.
      const before = cpuMs();
      await sleep(250);
      if (cpuMs() - before < 125) return performance.now() - started;
      if (performance.now() - started > ms) {
        throw new Error(`${marker} still burns CPU after ${ms} ms`);
      }
    }
  }
  await waitUntil(
    `${marker} to be gone from ${fixture.engine}`,
    async () => await runningCount(fixture, marker) === 0,
    { timeoutMs: ms, intervalMs: 50 },
  );
  return performance.now() - started;
}

/** This process's CPU time (user and system), in milliseconds. */
function cpuMs(): number {
  const usage = process.cpuUsage();
  return (usage.user + usage.system) / 1000;
}

function cancel(server: TestServer, id: string, authorization?: string) {
  return postModern(server.url, {
    jsonrpc: "2.0",
    method: "notifications/cancelled",
    params: { requestId: id, reason: "test" },
  }, authorization ? { authorization } : {});
}

async function setup(engine: Engine, options: { deadlineMs?: number } = {}) {
  const fixture = await openFixture(engine);
  const saved = savedConnection(fixture, "Long");
  const server = await serverWith([saved], {}, {
    ...(options.deadlineMs === undefined
      ? {}
      : { deadlineMs: options.deadlineMs }),
  });
  return {
    fixture,
    server,
    id: saved.id,
    async [Symbol.asyncDispose]() {
      await server[Symbol.asyncDispose]();
      await fixture[Symbol.asyncDispose]();
    },
  };
}

/** After a stop the connection answers again at once. */
async function stillServes(server: TestServer, id: string) {
  const next = await postModern(
    server.url,
    modernRequest("tools/call", {
      name: "execute_query",
      arguments: { connection_id: id, query: "select 1 as one" },
    }, crypto.randomUUID()),
  );
  assertEquals(next.json.result.structuredContent.rows, [[1]]);
}

for (const engine of ENGINES) {
  Deno.test(
    `${engine}: notifications/cancelled → -33002, and the query is gone within 2 s`,
    needs(engine),
    async () => {
      await using t = await setup(engine);
      const run = await startLong(t.server, t.fixture, t.id);
      const started = performance.now();
      assertEquals((await cancel(t.server, run.id)).status, 202);
      const answer = await run.answer;
      assertEquals([answer.status, answer.json.error.code], [200, -33002]);
      await goneWithin(t.fixture, run.marker, 2_000);
      assert(performance.now() - started < 2_000);
      await stillServes(t.server, t.id);
    },
  );

  Deno.test(
    `${engine}: another principal's cancellation has no effect`,
    needs(engine),
    async () => {
      await using t = await setup(engine);
      const other = await t.server.mint("readOnly");
      const run = await startLong(t.server, t.fixture, t.id);
      const refused = await cancel(
        t.server,
        run.id,
        `Bearer ${other.plaintext}`,
      );
      assertEquals(refused.status, 202);
      // Nothing to wait on for a cancel that must not act: half a second
      // for a wrongly honoured one to reach the database.
      await sleep(500);
      if (engine !== "sqlite") {
        assertEquals(await runningCount(t.fixture, run.marker), 1);
      }
      // Not a wait: a request still running has no answer within 10 ms.
      const settled = await Promise.race([
        run.answer,
        sleep(10).then(() => null),
      ]);
      assertEquals(settled, null, "the request ended on another's cancel");
      await cancel(t.server, run.id);
      assertEquals((await run.answer).json.error.code, -33002);
      await goneWithin(t.fixture, run.marker, 2_000);
    },
  );

  Deno.test(
    `${engine}: revoking the token mid-query cancels it within a second`,
    needs(engine),
    async () => {
      await using t = await setup(engine);
      const token = await t.server.mint("readOnly");
      const run = await startLong(t.server, t.fixture, t.id, {
        authorization: `Bearer ${token.plaintext}`,
      });
      const started = performance.now();
      // What `dbport tokens revoke` does: the running server notices by polling.
      await t.server.server.tokens.revoke(token.id);
      const answer = await run.answer;
      assertEquals([answer.status, answer.json.error.code], [200, -33002]);
      assert(
        performance.now() - started < 1_000,
        `took ${Math.round(performance.now() - started)} ms`,
      );
      await goneWithin(t.fixture, run.marker, 2_000);
    },
  );

  Deno.test(
    `${engine}: a client that disconnects mid-query leaves no query running`,
    needs(engine),
    async () => {
      await using t = await setup(engine);
      const controller = new AbortController();
      const run = await startLong(t.server, t.fixture, t.id, {
        signal: controller.signal,
      });
      controller.abort();
      await goneWithin(t.fixture, run.marker, 2_000);
      // The server stays usable and holds no request of that client.
      await stillServes(t.server, t.id);
    },
  );

  Deno.test(
    `${engine}: the statement timeout → -33003, and the query is gone`,
    needs(engine),
    async () => {
      await using t = await setup(engine);
      // 2 s: SQLite's "running" is a core seen busy with it in 250 ms
      // windows, which a 1 s timeout left four of — on two loaded cores
      // (the other end-to-end process) sometimes none.
      const run = await startLong(t.server, t.fixture, t.id, {
        timeoutSeconds: 2,
      });
      const answer = await run.answer;
      assertEquals([answer.status, answer.json.error.code], [200, -33003]);
      await goneWithin(t.fixture, run.marker, 2_000);
    },
  );

  Deno.test(
    `${engine}: the handler deadline (injected: 1 s) → -33003, and the query is gone`,
    needs(engine),
    async () => {
      await using t = await setup(engine, { deadlineMs: 1_000 });
      const run = await startLong(t.server, t.fixture, t.id);
      const answer = await run.answer;
      assertEquals([answer.status, answer.json.error.code], [200, -33003]);
      assert(/deadline/.test(answer.json.error.message));
      await goneWithin(t.fixture, run.marker, 2_000);
      await stillServes(t.server, t.id);
    },
  );
}

/** The JSON-RPC messages of an SSE answer, in order. */
function sseMessages(text: string): JsonObject[] {
  return text.split("\n").filter((line) => line.startsWith("data: ")).map((
    line,
  ) => JSON.parse(line.slice(6)) as JsonObject);
}

Deno.test(
  "postgres: a streamed (progressToken) request is cancelled the same way",
  needs("postgres"),
  async () => {
    await using t = await setup("postgres");
    const run = await startLong(t.server, t.fixture, t.id, {
      progressToken: "p",
    });
    await cancel(t.server, run.id);
    const answer = await run.answer;
    assertEquals(answer.status, 200);
    const messages = sseMessages(answer.text);
    assertEquals(
      messages.slice(0, 2).map((m) => (m.params as JsonObject).progress),
      [0, 0.3],
    );
    assertEquals((messages.at(-1)!.error as JsonObject).code, -33002);
    await goneWithin(t.fixture, run.marker, 2_000);
  },
);

Deno.test(
  "postgres: a legacy session's request is cancelled the same way",
  needs("postgres"),
  async () => {
    await using t = await setup("postgres");
    const authorization = `Bearer ${t.server.token}`;
    const session = await initializeSession(t.server.url, "2025-11-25", {
      authorization,
    });
    const marker = "m_legacy1";
    const answer = postLegacy(t.server.url, {
      jsonrpc: "2.0",
      id: 7,
      method: "tools/call",
      params: {
        name: "execute_query",
        arguments: {
          connection_id: t.id,
          query: longQuery("postgres", marker),
        },
        _meta: { progressToken: "lp" },
      },
    }, { authorization, "mcp-session-id": session });
    await untilRunning(t.fixture, marker);
    const cancelled = await postLegacy(t.server.url, {
      jsonrpc: "2.0",
      method: "notifications/cancelled",
      params: { requestId: 7 },
    }, { authorization, "mcp-session-id": session });
    assertEquals(cancelled.status, 202);
    const done = await answer;
    // With a progressToken the legacy answer is an SSE stream: the last frame.
    const last = sseMessages(done.text).at(-1) as { error?: { code: number } };
    assertEquals(last.error?.code, -33002);
    await goneWithin(t.fixture, marker, 2_000);
  },
);

Deno.test("SDK v2 client: onprogress receives 0, 0.3 and 1 for execute_query", async () => {
  await using t = await setup("sqlite");
  const client = new Client(
    { name: "progress", version: "1.0.0" },
    { capabilities: {}, versionNegotiation: { mode: { pin: "2026-07-28" } } },
  );
  await client.connect(
    new StreamableHTTPClientTransport(new URL(t.server.url), {
      requestInit: { headers: { authorization: `Bearer ${t.server.token}` } },
    }),
  );
  try {
    const seen: number[] = [];
    const result = await client.callTool({
      name: "execute_query",
      arguments: { connection_id: t.id, query: "select 42 as answer" },
    }, { onprogress: (progress) => seen.push(progress.progress) });
    assertEquals(seen, [0, 0.3, 1]);
    assertEquals((result.structuredContent as JsonObject).rows, [[42]]);
  } finally {
    await client.close();
  }
});
