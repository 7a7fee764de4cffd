/**
 * Heartbeats: with a progressToken, a request waiting for the user's
 * approval or for a long statement sends a progress frame at least every
 * heartbeat interval (15 s; 150 ms here, so that a wait of a second stands
 * for one of 40 s), advancing, below 1, saying what it waits for and for how
 * long.
 */

import { assert, assertEquals, assertMatch, assertRejects } from "@std/assert";
import { sdkClient } from "../_sdk.ts";
import { parseSseEvents } from "../../lib/protocol/sse.ts";
import { savedConnection, serverWith } from "../_connections.ts";
import { type Fixture, needs, openFixture } from "../_db.ts";
import { modernRequest, postModern, type TestServer } from "../_server.ts";
import { requestId } from "../_tool_call.ts";
import postgres from "postgres";

const HEARTBEAT_MS = 150;

type Frame = {
  method?: string;
  params?: { progress: number; total: number; message: string };
  result?: { isError?: boolean; content: { text: string }[] };
};

async function callStreaming(
  server: TestServer,
  args: Record<string, unknown>,
): Promise<Frame[]> {
  const answer = await postModern(
    server.url,
    modernRequest(
      "tools/call",
      {
        name: "execute_query",
        arguments: args,
      },
      requestId(),
      { progressToken: "beat" },
    ),
  );
  return parseSseEvents(answer.text).events.map((data) => JSON.parse(data));
}

/** The heartbeat frames: advancing, below 1, each naming `what`. */
function heartbeats(frames: Frame[], what: RegExp): Frame[] {
  const progress = frames.filter((f) => f.method === "notifications/progress");
  let last = -Infinity;
  for (const frame of progress) {
    assert(frame.params!.progress > last, JSON.stringify(progress));
    last = frame.params!.progress;
  }
  const beats = progress.filter((f) => what.test(f.params!.message));
  for (const beat of beats) assert(beat.params!.progress < 1);
  return beats;
}

Deno.test("heartbeats arrive while an approval waits on the host", async () => {
  await using fixture = await openFixture("sqlite");
  const saved = savedConnection(fixture, "Ask", { aiPolicy: "askEachTime" });
  await using server = await serverWith([saved], {
    hostDialog: { command: ["sh", "-c", "cat >/dev/null; sleep 1.2; exit 0"] },
    approvalTimeoutSeconds: 40,
  }, { heartbeatMs: HEARTBEAT_MS });
  const frames = await callStreaming(server, {
    connection_id: saved.id,
    query: "select 1 as one",
  });
  assertEquals(frames.at(-1)!.result?.isError, undefined);
  const beats = heartbeats(frames, /^waiting for your approval/);
  assert(beats.length >= 4, JSON.stringify(frames));
  assertMatch(
    beats.at(-1)!.params!.message,
    /^waiting for your approval of a query on "Ask" on this machine, 1 s \(39 s left\)$/,
  );
});

/**
 * A statement that takes about 1.2 s whatever the machine's load: MariaDB's
 * SLEEP(); on PostgreSQL (pg_sleep is off the read allowlist) a read that
 * waits for another session's lock, released 1.2 s after it is seen waiting.
 */
async function slowRead(
  fixture: Fixture,
): Promise<[string, () => Promise<void>]> {
  if (fixture.engine !== "postgres") {
    return ["select sleep(1.2) as slept", () => Promise.resolve()];
  }
  const table = `"${fixture.schema}".authors`;
  const holder = postgres(fixture.url, { max: 1, onnotice: () => {} });
  const reserved = await holder.reserve();
  await reserved.unsafe(`begin; lock table ${table} in access exclusive mode`)
    .simple();
  // Released 1.2 s after the read is seen waiting for the lock: the time
  // it took to get there (the checks, more on a loaded machine: seen in CI)
  // is not taken from its wait.
  const watcher = postgres(fixture.url, { max: 1, onnotice: () => {} });
  const released = (async () => {
    try {
      for (let i = 0; i < 200; i++) {
        const [row] = await watcher`select count(*)::int as n
          from pg_stat_activity
          where wait_event_type = 'Lock' and query like ${`%${table}%`}`;
        if ((row?.n ?? 0) > 0) break;
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      await new Promise((resolve) => setTimeout(resolve, 1_200));
    } finally {
      await reserved.unsafe("commit").simple();
      reserved.release();
      await holder.end();
      await watcher.end();
    }
  })();
  return [`select count(*) as slept from ${table}`, () => released];
}

for (const engine of ["postgres", "mysql"] as const) {
  Deno.test(
    `${engine}: heartbeats arrive while a long statement runs`,
    needs(engine),
    async () => {
      await using fixture: Fixture = await openFixture(engine);
      const saved = savedConnection(fixture, "Slow");
      await using server = await serverWith([saved], {}, {
        heartbeatMs: HEARTBEAT_MS,
      });
      const [sleep, released] = await slowRead(fixture);
      const frames = await callStreaming(server, {
        connection_id: saved.id,
        query: sleep,
        timeout_seconds: 40,
      });
      await released();
      assertEquals(frames.at(-1)!.result?.isError, undefined);
      const beats = heartbeats(frames, /^waiting for the statement on "Slow"/);
      assert(beats.length >= 4, JSON.stringify(frames));
      assertMatch(beats.at(-1)!.params!.message, /, 1 s \(39 s left\)$/);
    },
  );
}

Deno.test("no heartbeat without a progressToken, and none when progress flows", async () => {
  await using fixture = await openFixture("sqlite");
  const saved = savedConnection(fixture, "Quick");
  await using server = await serverWith([saved], {}, {
    heartbeatMs: HEARTBEAT_MS,
  });
  // The file's worker is started by a first call: what is measured is a
  // quick statement, not the worker's start.
  await callStreaming(server, { connection_id: saved.id, query: "select 1" });
  const frames = await callStreaming(server, {
    connection_id: saved.id,
    query: "select 1",
  });
  assertEquals(
    frames.filter((f) => /waiting|still working/.test(f.params?.message ?? ""))
      .length,
    0,
  );
});

Deno.test("SDK v2 client: resetTimeoutOnProgress keeps waiting through an approval longer than its timeout; without it the call times out", async () => {
  await using fixture = await openFixture("sqlite");
  const saved = savedConnection(fixture, "Wait", { aiPolicy: "askEachTime" });
  await using server = await serverWith([saved], {
    hostDialog: { command: ["sh", "-c", "cat >/dev/null; sleep 1.5; exit 0"] },
  }, { heartbeatMs: HEARTBEAT_MS });
  const sdk = await sdkClient(server.url, server.token!);
  try {
    const beats: string[] = [];
    const result = await sdk.callTool({
      name: "execute_query",
      arguments: { connection_id: "wait", query: "select 1 as one" },
    }, {
      timeout: 600,
      resetTimeoutOnProgress: true,
      onprogress: (progress) => beats.push(progress.message ?? ""),
    });
    assertEquals((result.structuredContent as { rows?: unknown })?.rows, [[1]]);
    assert(beats.some((m) => m.startsWith("waiting for your approval")));
  } finally {
    await sdk.close();
  }
  // The same wait with the SDK's default behaviour: it gives up.
  const other = await sdkClient(
    server.url,
    (await server.mint("readOnly")).plaintext,
  );
  try {
    await assertRejects(() =>
      other.callTool({
        name: "execute_query",
        arguments: { connection_id: saved.id, query: "select 2 as two" },
      }, { timeout: 600, onprogress: () => {} })
    );
  } finally {
    await other.close();
  }
});
