/**
 * `dbport history`: the query history read back newest first, filtered by
 * connection and text, as lines, JSON lines and CSV a spreadsheet cannot
 * turn into formulas; and `activity` naming connections.
 */

import { assert, assertEquals, assertRejects } from "@std/assert";
import type { SavedConnection } from "../../lib/app/connections.ts";
import { ActivityLog } from "../../lib/app/activity_log.ts";
import {
  type HistoryEntry,
  QueryHistory,
} from "../../lib/app/query_history.ts";
import { openStateDb } from "../../lib/app/state_db.ts";
import { activityCommand, clientsCommand } from "../../lib/cli/activity.ts";
import { csvCell } from "../../lib/app/csv.ts";
import { historyCommand } from "../../lib/cli/history.ts";
import { UsageError } from "../../lib/cli/io.ts";

const SHOP: SavedConnection = {
  id: "7f0c1a52-9a55-4b43-8f0e-3a1f5c1a2b01",
  name: "Shop",
  engine: "sqlite",
  url: "/tmp/shop.db",
  externalAccess: "readOnly",
  aiPolicy: "alwaysAllow",
  safeMode: "alert",
};
const CRM = {
  ...SHOP,
  id: "7f0c1a52-9a55-4b43-8f0e-3a1f5c1a2b02",
  name: "CRM",
};

function entry(fields: Partial<HistoryEntry>): HistoryEntry {
  return {
    time: Date.parse("2026-11-24T10:00:00Z"),
    connectionId: SHOP.id,
    sql: "select 1",
    statementType: "read",
    durationMs: 3,
    rowCount: 1,
    rowsAffected: 0,
    outcome: "success",
    error: null,
    clientName: "Claude",
    tokenName: "laptop",
    ...fields,
  };
}

function capture() {
  const out: string[] = [];
  return { io: { out: (l: string) => out.push(l), err: () => {} }, out };
}

async function withHistory(
  entries: HistoryEntry[],
  run: (db: Awaited<ReturnType<typeof openStateDb>>) => Promise<void>,
) {
  const home = await Deno.makeTempDir();
  const db = await openStateDb(home);
  try {
    const history = new QueryHistory(db);
    for (const e of entries) history.record(e);
    await history.close();
    await run(db);
  } finally {
    db.close();
    await Deno.remove(home, { recursive: true });
  }
}

Deno.test("history lists newest first with names, and filters by connection and text", async () => {
  await withHistory([
    entry({ sql: "select * from orders" }),
    entry({ connectionId: CRM.id, sql: "select * from leads" }),
    entry({
      sql: "update orders\nset x = 1",
      statementType: "write",
      rowsAffected: 3,
    }),
  ], async (db) => {
    const all = capture();
    assertEquals(await historyCommand(db, [SHOP, CRM], [], all.io), 0);
    assertEquals(all.out.length, 3);
    assert(all.out[0]!.includes("Shop") && all.out[0]!.includes("3 affected"));
    assert(all.out[0]!.includes("update orders ⏎ set x = 1"));
    assert(all.out[1]!.includes("CRM"));
    // One row is "1 row", as a person writes it.
    assert(all.out[1]!.includes("  1 row  "), all.out[1]);
    const shop = capture();
    await historyCommand(db, [SHOP, CRM], ["--connection", "shop"], shop.io);
    assertEquals(shop.out.length, 2);
    const grep = capture();
    await historyCommand(db, [SHOP, CRM], [
      "--grep",
      "LEADS",
      "--json",
    ], grep.io);
    assertEquals(grep.out.length, 1);
    const row = JSON.parse(grep.out[0]!);
    assertEquals(row.connectionName, "CRM");
    assertEquals(row.time, "2026-11-24T10:00:00.000Z");
  });
});

Deno.test("history --grep takes % and _ literally", async () => {
  await withHistory([
    entry({ sql: "select 'a_b'" }),
    entry({ sql: "select 'axb'" }),
  ], async (db) => {
    const found = capture();
    await historyCommand(db, [SHOP], ["--grep", "a_b"], found.io);
    assertEquals(found.out.length, 1);
    assert(found.out[0]!.includes("a_b"));
  });
});

Deno.test("history --csv quotes what it must and disarms formulas", async () => {
  await withHistory([
    entry({ sql: '=HYPERLINK("http://x", "y"), 1' }),
  ], async (db) => {
    const csv = capture();
    await historyCommand(db, [SHOP], ["--csv"], csv.io);
    assertEquals(
      csv.out[0],
      "time,connection,outcome,statement_type,row_count,rows_affected,duration_ms,client,token,error,approved_at,sql",
    );
    assert(
      csv.out[1]!.endsWith(`,"'=HYPERLINK(""http://x"", ""y""), 1"`),
      csv.out[1],
    );
  });
  assertEquals(csvCell("plain"), "plain");
  assertEquals(csvCell("a,b"), '"a,b"');
  assertEquals(csvCell("line\nbreak"), '"line\nbreak"');
  assertEquals(csvCell("-- comment"), "'-- comment");
  assertEquals(csvCell(null), "");
  assertEquals(csvCell(42), "42");
});

Deno.test("history refuses an unknown connection and --json with --csv", async () => {
  await withHistory([], async (db) => {
    const none = capture();
    await historyCommand(db, [SHOP], [], none.io);
    assertEquals(none.out, ["No statements recorded yet."]);
    await assertRejects(
      () => historyCommand(db, [SHOP], ["--connection", "Nope"], none.io),
      UsageError,
      'no saved connection is named or has the id "Nope"',
    );
    await assertRejects(
      () => historyCommand(db, [SHOP], ["--json", "--csv"], none.io),
      UsageError,
    );
  });
});

Deno.test("activity names the connection a call used", async () => {
  await withHistory([], async (db) => {
    const log = new ActivityLog(db);
    log.record({
      time: Date.now(),
      principalKind: "token",
      tokenId: "t1",
      tokenName: "laptop",
      clientName: "Claude",
      clientVersion: "1.0",
      method: "tools/call",
      target: "execute_query",
      connectionId: SHOP.id,
      outcome: "success",
      errorCode: null,
      durationMs: 4,
      sqlDigest: null,
      traceparent: null,
      tracestate: null,
      baggage: null,
      detail: null,
    });
    await log.flush();
    const lines = capture();
    await activityCommand(db, [], lines.io, {
      connectionName: (id) => id === SHOP.id ? "Shop" : undefined,
    });
    assert(lines.out[0]!.includes("connection=Shop"), lines.out[0]);
    const json = capture();
    await activityCommand(db, ["--json"], json.io, {
      connectionName: (id) => id === SHOP.id ? "Shop" : undefined,
    });
    assertEquals(JSON.parse(json.out[0]!).connectionName, "Shop");
  });
});

Deno.test("activity is for people: local time, the bridge's client by name, the approval's time (exports stay UTC)", async () => {
  await withHistory([], async (db) => {
    const log = new ActivityLog(db);
    const time = Date.parse("2026-11-24T10:00:00Z");
    log.record({
      time,
      principalKind: "token",
      tokenId: "bridge",
      tokenName: "__stdio_bridge__",
      clientName: "claude-code",
      clientVersion: "2.1",
      method: "tools/call",
      target: "execute_query",
      connectionId: SHOP.id,
      outcome: "success",
      errorCode: null,
      durationMs: 4,
      sqlDigest: null,
      traceparent: null,
      tracestate: null,
      baggage: null,
      detail: "approved by you at 2026-11-24T09:59:58.123Z; previewed 1 row",
    });
    await log.flush();
    const lines = capture();
    await activityCommand(db, [], lines.io);
    const line = lines.out[0]!;
    const local = new Date(time);
    const two = (n: number) => String(n).padStart(2, "0");
    assert(
      line.startsWith(
        `${local.getFullYear()}-${two(local.getMonth() + 1)}-${
          two(local.getDate())
        } ${two(local.getHours())}:00:00  `,
      ),
      line,
    );
    assert(line.includes("claude-code (via dbport-mcp)"), line);
    assert(!line.includes("__stdio_bridge__"), line);
    assert(line.includes("(approved by you at 2026-11-24 "), line);
    const json = capture();
    await activityCommand(db, ["--json"], json.io);
    assertEquals(JSON.parse(json.out[0]!).time, "2026-11-24T10:00:00.000Z");
    // `clients` says how the bridge's client came in, not the token's
    // internal name.
    const clients = capture();
    assertEquals(await clientsCommand(db, [], clients.io, time + 1_000), 0);
    const row = clients.out.find((l) => l.startsWith("claude-code"));
    assert(row?.includes("(via dbport-mcp)"), clients.out.join("\n"));
    assert(!clients.out.join("\n").includes("__stdio_bridge__"));
  });
});

Deno.test("history marks a write the user approved, as the console does", async () => {
  await withHistory([
    entry({
      sql: "update orders set x = 1",
      statementType: "write",
      approvedAt: Date.parse("2026-11-24T10:00:05Z"),
    }),
    entry({ sql: "select 2" }),
  ], async (db) => {
    const found = capture();
    await historyCommand(db, [SHOP], [], found.io);
    assertEquals(found.out.length, 2);
    assert(found.out[1]!.includes("approved by you at "), found.out[1]);
    assert(!found.out[0]!.includes("approved"), found.out[0]);
  });
});
