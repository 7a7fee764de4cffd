import { assertEquals } from "@std/assert";
import {
  HISTORY_RETENTION_MS,
  type HistoryEntry,
  QueryHistory,
} from "../../lib/app/query_history.ts";
import { openStateDb } from "../../lib/app/state_db.ts";

function entry(
  connectionId: string,
  sql: string,
  time = Date.now(),
): HistoryEntry {
  return {
    time,
    connectionId,
    sql,
    statementType: "read",
    durationMs: 1.5,
    rowCount: 1,
    rowsAffected: 0,
    outcome: "success",
    error: null,
    clientName: "test",
    tokenName: "t",
  };
}

async function withHistory(run: (history: QueryHistory) => Promise<void>) {
  const home = await Deno.makeTempDir({ prefix: "dbport-history-" });
  const db = await openStateDb(home);
  const history = new QueryHistory(db);
  try {
    await run(history);
  } finally {
    await history.close();
    db.close();
    await Deno.remove(home, { recursive: true });
  }
}

Deno.test("QueryHistory.recent() sees what was just recorded, newest first, per connection", async () => {
  await withHistory(async (history) => {
    history.record(entry("a", "select 1"));
    history.record(entry("b", "select 2"));
    history.record(entry("a", "select 3"));
    const rows = await history.recent("a", 10);
    assertEquals(rows.map((row) => row.sql), ["select 3", "select 1"]);
    assertEquals(rows[0]!.clientName, "test");
    assertEquals(rows[0]!.durationMs, 1.5);
    assertEquals((await history.recent("a", 1)).length, 1);
  });
});

Deno.test("QueryHistory.prune() drops rows past 90 days", async () => {
  await withHistory(async (history) => {
    const now = Date.now();
    history.record(entry("a", "old", now - HISTORY_RETENTION_MS - 1));
    history.record(entry("a", "new", now));
    await history.flush();
    await history.prune(now);
    assertEquals((await history.recent("a", 10)).map((r) => r.sql), ["new"]);
  });
});
