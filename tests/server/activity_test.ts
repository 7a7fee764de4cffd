/**
 * The activity log as requests write it: who, which client, what, how it
 * ended, the trace context untouched; SQL only as a digest; failed
 * authentications without the token.
 */
import { assert, assertEquals } from "@std/assert";
import { createHash } from "node:crypto";
import type { ActivityRow } from "../../lib/app/activity_log.ts";
import type { ToolEntry } from "../../lib/features/catalog.ts";
import { META_CLIENT_INFO } from "../../lib/protocol/envelope.ts";
import { toolError, type ToolErrorCode } from "../../lib/protocol/errors.ts";
import { fixtureCatalog } from "../_catalog.ts";
import {
  initializeSession,
  modernRequest,
  postLegacy,
  postModern,
  startTestServer,
  type TestServer,
} from "../_server.ts";

async function rows(t: TestServer): Promise<ActivityRow[]> {
  await t.server.activity.flush();
  return await t.server.activity.recent(1_000);
}

const CLIENT = {
  [META_CLIENT_INFO]: { name: "claude-code", version: "2.1.0" },
};

Deno.test("a tool call is logged with principal, client, target, connection, outcome and trace", async () => {
  await using t = await startTestServer({ catalog: fixtureCatalog() });
  const sql = "SELECT secret_column FROM users WHERE password = 'hunter2'";
  await postModern(
    t.url,
    modernRequest(
      "tools/call",
      {
        name: "echo",
        arguments: { connection_id: "conn-1", query: sql },
      },
      1,
      {
        ...CLIENT,
        traceparent: "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
        tracestate: "congo=t61rcWkgMzE",
        baggage: "userId=alice",
      },
    ),
  );
  const [row] = await rows(t);
  assert(row !== undefined);
  const token = (await t.server.tokens.list())[0]!;
  assertEquals({ ...row, id: 0, time: 0, durationMs: 0 }, {
    id: 0,
    time: 0,
    durationMs: 0,
    principalKind: "token",
    tokenId: token.id,
    tokenName: "test readOnly",
    clientName: "claude-code",
    clientVersion: "2.1.0",
    method: "tools/call",
    target: "echo",
    connectionId: "conn-1",
    outcome: "success",
    errorCode: null,
    sqlDigest: createHash("sha256").update(sql).digest("hex"),
    traceparent: "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
    tracestate: "congo=t61rcWkgMzE",
    baggage: "userId=alice",
    detail: null,
  });
  assert(Math.abs(row.time - Date.now()) < 10_000);
  // The SQL text itself is nowhere in the database file.
  await t.server.activity.flush();
  for (const file of ["state.db", "state.db-wal"]) {
    const bytes = await Deno.readFile(`${t.home}/${file}`).catch(() =>
      new Uint8Array()
    );
    assertEquals(
      new TextDecoder("latin1").decode(bytes).includes("hunter2"),
      false,
    );
  }
});

Deno.test("outcomes: denied for a scope refusal, error for a failure, and the tool error code", async () => {
  const refusing = (name: string, code: ToolErrorCode): ToolEntry => ({
    definition: { name, inputSchema: { type: "object" } },
    scope: null,
    call: () => Promise.resolve(toolError(code, "refused")),
  });
  await using t = await startTestServer({
    catalog: fixtureCatalog([
      refusing("refuser", "denied"),
      refusing("failer", "query_failed"),
    ]),
  });
  for (const name of ["refuser", "failer"]) {
    await postModern(
      t.url,
      modernRequest("tools/call", { name, arguments: {} }),
    );
  }
  await postModern(
    t.url,
    modernRequest("tools/call", { name: "writer", arguments: {} }),
  );
  await postModern(
    t.url,
    modernRequest("tools/call", { name: "boom", arguments: {} }),
  );
  await postModern(
    t.url,
    modernRequest("tools/call", { name: "nope", arguments: {} }),
  );
  const logged = await rows(t);
  assertEquals(
    logged.slice(0, 2).map((row) => row.detail),
    ["denied", "query_failed"],
  );
  assertEquals(
    logged.map((row) => [row.target, row.outcome, row.errorCode]),
    [
      ["refuser", "denied", null],
      ["failer", "error", null],
      ["writer", "denied", -33007],
      ["boom", "error", -32603],
      ["nope", "error", -32602],
    ],
  );
});

Deno.test("a legacy session's clientInfo names the client in the log", async () => {
  await using t = await startTestServer({ catalog: fixtureCatalog() });
  const session = await initializeSession(t.url);
  await postLegacy(t.url, {
    jsonrpc: "2.0",
    id: 2,
    method: "resources/read",
    params: { uri: "test://fast", _meta: { traceparent: "00-aa-bb-01" } },
  }, { "mcp-session-id": session });
  const row = (await rows(t)).find((r) => r.method === "resources/read")!;
  assertEquals(row.clientName, "test-client");
  assertEquals(row.clientVersion, "1.0.0");
  assertEquals(row.target, "test://fast");
  assertEquals(row.traceparent, "00-aa-bb-01");
  assertEquals(row.outcome, "success");
});

Deno.test("failed authentications are logged without the presented token", async () => {
  await using t = await startTestServer();
  const presented = "dbp_thisIsNotARealTokenButItMustNotBeStoredAnywhere1";
  await postModern(
    t.url,
    modernRequest("tools/list", {}, 1, CLIENT),
    { authorization: `Bearer ${presented}` },
  );
  await postModern(t.url, modernRequest("tools/list"), { authorization: null });
  const logged = await rows(t);
  assertEquals(
    logged.map((row) => [
      row.principalKind,
      row.tokenId,
      row.clientName,
      row.method,
      row.outcome,
      row.errorCode,
      row.detail,
    ]),
    [
      [
        "unauthenticated",
        null,
        "claude-code",
        "tools/list",
        "denied",
        -33009,
        "unknown token",
      ],
      [
        "unauthenticated",
        null,
        null,
        "tools/list",
        "denied",
        -33009,
        "no token",
      ],
    ],
  );
  for (const file of ["state.db", "state.db-wal"]) {
    const text = new TextDecoder("latin1").decode(
      await Deno.readFile(`${t.home}/${file}`).catch(() => new Uint8Array()),
    );
    assertEquals(text.includes(presented), false, file);
  }
});

Deno.test("a locked-out request is logged as rateLimited", async () => {
  await using t = await startTestServer();
  for (let i = 0; i < 6; i++) {
    await postModern(t.url, modernRequest("server/discover"), {
      authorization: "Bearer dbp_wrong",
    });
  }
  const outcomes = (await rows(t)).map((row) => row.outcome);
  assertEquals(outcomes, [
    "denied",
    "denied",
    "denied",
    "denied",
    "denied",
    "rateLimited",
  ]);
});
