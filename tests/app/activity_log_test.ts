import { assertEquals } from "@std/assert";
import { waitUntil } from "../_wait.ts";
import {
  ACTIVITY_RETENTION_MS,
  type ActivityEntry,
  ActivityLog,
} from "../../lib/app/activity_log.ts";
import { windowStats } from "../../lib/app/activity_stats.ts";
import { openStateDb, type StateDb } from "../../lib/app/state_db.ts";
import {
  BRIDGE_EXECUTABLE,
  BRIDGE_ITSELF,
  BRIDGE_TOKEN_NAME,
} from "../../lib/base/identity.ts";

function entry(overrides: Partial<ActivityEntry> = {}): ActivityEntry {
  return {
    time: 1_000,
    principalKind: "token",
    tokenId: "t1",
    tokenName: "laptop",
    clientName: "claude-code",
    clientVersion: "1.0",
    method: "tools/list",
    target: null,
    connectionId: null,
    outcome: "success",
    errorCode: null,
    durationMs: 3,
    sqlDigest: null,
    traceparent: null,
    tracestate: null,
    baggage: null,
    detail: null,
    ...overrides,
  };
}

async function withLog(run: (log: ActivityLog, db: StateDb) => Promise<void>) {
  const home = await Deno.makeTempDir({ prefix: "dbport-activity-" });
  const db = await openStateDb(home);
  const log = new ActivityLog(db);
  try {
    await run(log, db);
  } finally {
    await log.close();
    db.close();
    await Deno.remove(home, { recursive: true });
  }
}

Deno.test("ActivityLog writes queued entries in order and reads them back", async () => {
  await withLog(async (log) => {
    for (let i = 0; i < 5; i++) log.record(entry({ durationMs: i }));
    assertEquals(await log.recent(10), []);
    await log.flush();
    const rows = await log.recent(10);
    assertEquals(rows.map((r) => r.durationMs), [0, 1, 2, 3, 4]);
    assertEquals(rows[0]!.tokenName, "laptop");
    assertEquals((await log.recent(2)).map((r) => r.durationMs), [3, 4]);
    assertEquals(
      (await log.recent(10, rows[2]!.id)).map((r) => r.durationMs),
      [3, 4],
    );
  });
});

Deno.test("ActivityLog.record() flushes by itself within a moment", async () => {
  await withLog(async (log) => {
    log.record(entry());
    await waitUntil(
      "the entry to be flushed without a flush() call",
      async () => (await log.recent(10)).length === 1,
    );
  });
});

Deno.test("ActivityLog.clients() groups recent clients and skips failed authentications", async () => {
  await withLog(async (log) => {
    const now = 10 * 60_000;
    log.record(entry({ time: now - 9 * 60_000, clientName: "old" }));
    log.record(entry({ time: now - 4 * 60_000 }));
    log.record(entry({ time: now - 60_000 }));
    log.record(
      entry({
        time: now - 1_000,
        clientName: "cursor",
        tokenName: null,
        principalKind: "anonymous",
      }),
    );
    log.record(
      entry({
        time: now - 1_000,
        clientName: "intruder",
        principalKind: "unauthenticated",
      }),
    );
    await log.flush();
    assertEquals(await log.clients(now), [
      {
        name: "cursor",
        version: "1.0",
        tokenName: null,
        firstSeen: now - 1_000,
        lastSeen: now - 1_000,
        requests: 1,
      },
      {
        name: "claude-code",
        version: "1.0",
        tokenName: "laptop",
        firstSeen: now - 4 * 60_000,
        lastSeen: now - 60_000,
        requests: 2,
      },
    ]);
  });
});

Deno.test("ActivityLog.prune() drops rows past the retention period", async () => {
  await withLog(async (log) => {
    const now = ACTIVITY_RETENTION_MS + 10_000;
    log.record(entry({ time: 9_999 }));
    log.record(entry({ time: 10_000 }));
    await log.flush();
    await log.prune(now);
    assertEquals((await log.recent(10)).map((r) => r.time), [10_000]);
  });
});

Deno.test("the stdio bridge's own checks are no client: left out of clients() and the filter's names, named as the bridge in the Overview's figures", async () => {
  await withLog(async (log) => {
    const now = 10 * 60_000;
    const bridge = { tokenId: "b1", tokenName: BRIDGE_TOKEN_NAME };
    // What the bridge sends as itself (server/discover at start and at each
    // client's initialize), and a client's call through it.
    log.record(entry({
      ...bridge,
      time: now - 2_000,
      clientName: BRIDGE_EXECUTABLE,
      clientVersion: "0.1.0",
      method: "server/discover",
    }));
    log.record(entry({
      ...bridge,
      time: now - 1_000,
      clientName: "claude-desktop",
      method: "tools/list",
    }));
    // Another token's client that happens to use the same name is a client.
    log.record(entry({
      time: now - 500,
      clientName: BRIDGE_EXECUTABLE,
      tokenName: "laptop",
    }));
    // A row with no token name is kept (SQL NULL is not lost to the rule).
    log.record(entry({
      time: now - 400,
      clientName: "cursor",
      tokenName: null,
      principalKind: "anonymous",
    }));
    await log.flush();
    assertEquals(
      (await log.clients(now)).map((c) => `${c.name}/${c.tokenName}`),
      [
        "cursor/null",
        "dbport-mcp/laptop",
        `claude-desktop/${BRIDGE_TOKEN_NAME}`,
      ],
    );
    assertEquals(await log.clientNames(), [
      "claude-desktop",
      "cursor",
      "dbport-mcp",
    ]);
    const rows = await log.since(0);
    assertEquals(rows.map((row) => row.bridgeItself === true), [
      false,
      false,
      false,
      true,
    ]);
    const stats = windowStats(rows, 0, now, 10);
    assertEquals(
      stats.byClient.map((c) => c.name).sort(),
      [BRIDGE_ITSELF, "claude-desktop", "cursor", "dbport-mcp"].sort(),
    );
    assertEquals(stats.total.calls, 4);
  });
});
