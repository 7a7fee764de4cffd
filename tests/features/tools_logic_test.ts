/**
 * The tools' argument, statement and access logic against a fake driver:
 * what reaches the driver (and what never does), with which options, and
 * which refusal a caller gets. The engines themselves are tested on real
 * databases elsewhere.
 */

import { assert, assertEquals, assertRejects, assertThrows } from "@std/assert";
import { WireError } from "../../lib/protocol/errors.ts";
import type { JsonObject } from "../../lib/protocol/jsonrpc.ts";
import { confirmDestructiveTool } from "../../lib/features/tools/confirm_destructive.ts";
import { describeTableTool } from "../../lib/features/tools/describe_table.ts";
import { executeQueryTool } from "../../lib/features/tools/execute_query.ts";
import { listTablesTool } from "../../lib/features/tools/list_tables.ts";
import {
  callContext,
  fakeConnection,
  fakeDeps,
  principalWith,
} from "../_fake_driver.ts";

const READ_SCOPES = ["tools:read", "resources:read"] as const;
const WRITE_SCOPES = [...READ_SCOPES, "tools:write"] as const;
const ALL_SCOPES = [...WRITE_SCOPES, "admin"] as const;

/** The tool error text of a result, or null for a success. */
function toolError(result: JsonObject): string | null {
  if (result.isError !== true) return null;
  const [item] = result.content as { text: string }[];
  return item?.text ?? "";
}

Deno.test("execute_query runs a read in read mode with the user's default rows and timeout", async () => {
  const connection = fakeConnection();
  const deps = fakeDeps([connection], {
    settings: { defaultRowLimit: 7, queryTimeoutSeconds: 9 },
  });
  const ctx = callContext(principalWith(READ_SCOPES));
  const result = await executeQueryTool(deps).call({
    connection_id: connection.id,
    query: "select 1 as one",
  }, ctx);
  assertEquals(toolError(result), null);
  const [call] = deps.driver.calls;
  assert(call?.method === "query");
  assertEquals(call.sql, "select 1 as one");
  assertEquals(call.options.mode, "read");
  assertEquals(call.options.maxRows, 7);
  assertEquals(call.options.timeoutMs, 9_000);
  assertEquals(ctx.progressed, [0, 0.3, 1]);
});

Deno.test("execute_query takes max_rows and timeout_seconds as given, within the user's limits", async () => {
  const connection = fakeConnection();
  const deps = fakeDeps([connection], { settings: { maxRowLimit: 50 } });
  const tool = executeQueryTool(deps);
  const ctx = callContext(principalWith(READ_SCOPES));
  await tool.call({
    connection_id: connection.id,
    query: "select 1",
    max_rows: 50,
    timeout_seconds: 3,
  }, ctx);
  const [call] = deps.driver.calls;
  assert(call?.method === "query");
  assertEquals([call.options.maxRows, call.options.timeoutMs], [50, 3_000]);

  for (
    const [args, expected] of [
      [{ max_rows: 51 }, "invalid_argument: max_rows must be from 1 to 50"],
      [{ max_rows: 0 }, "invalid_argument: max_rows must be from 1 to 50"],
      [{ timeout_seconds: 301 }, "invalid_argument: timeout_seconds must be"],
      [{ query: "  \n " }, "invalid_argument: query must not be blank"],
      [{ query: "select 1; select 2" }, "invalid_argument: query holds 2"],
    ] as const
  ) {
    const result = await tool.call({
      connection_id: connection.id,
      query: "select 1",
      ...args,
    }, ctx);
    const text = toolError(result);
    assert(text?.startsWith(expected), `${JSON.stringify(args)}: ${text}`);
  }
  assertEquals(
    deps.driver.calls.length,
    1,
    "no refused call reached the driver",
  );
});

Deno.test("execute_query refuses a write before the driver: read-only connection, read-only token, DROP", async () => {
  const readOnly = fakeConnection({ name: "RO" });
  const open = fakeConnection({ name: "RW", externalAccess: "readWrite" });
  const deps = fakeDeps([readOnly, open]);
  const tool = executeQueryTool(deps);
  const write = "update t set a = 1 where id = 2";
  const cases = [
    [readOnly, WRITE_SCOPES, write, "denied: this connection is read only"],
    [open, WRITE_SCOPES, "drop table t", "denied: this statement drops"],
    [open, ALL_SCOPES, "truncate t", "denied: this statement drops"],
  ] as const;
  for (const [connection, scopes, query, expected] of cases) {
    const result = await tool.call(
      { connection_id: connection.id, query },
      callContext(principalWith(scopes)),
    );
    const text = toolError(result);
    assert(
      text?.startsWith(expected),
      `${query} on ${connection.name}: ${text}`,
    );
  }
  // A token without tools:write is refused on the envelope (scope).
  const scope = await assertRejects(() =>
    tool.call(
      { connection_id: open.id, query: write },
      callContext(principalWith(READ_SCOPES)),
    )
  );
  assert(scope instanceof WireError);
  assertEquals(scope.code, -33007);
  assert(scope.message.includes('"tools:write"'), scope.message);
  assertEquals(deps.driver.calls, [], "nothing reached the driver");
  assertEquals(deps.asked, [], "nobody was asked");
});

Deno.test("execute_query asks under Safe Mode alert, runs the write in write mode, and records it", async () => {
  const connection = fakeConnection({ externalAccess: "readWrite" });
  const deps = fakeDeps([connection]);
  const result = await executeQueryTool(deps).call({
    connection_id: connection.id,
    query: "insert into t values (1)",
  }, callContext(principalWith(WRITE_SCOPES)));
  assertEquals(toolError(result), null);
  assertEquals(deps.asked.length, 1);
  assertEquals(deps.asked[0]?.statement, "insert into t values (1)");
  const [call] = deps.driver.calls;
  assert(call?.method === "query");
  assertEquals(call.options.mode, "write");
  assertEquals(deps.recorded.map((entry) => entry.sql), [
    "insert into t values (1)",
  ]);
});

Deno.test("execute_query: a user who says no means nothing runs", async () => {
  const connection = fakeConnection({ externalAccess: "readWrite" });
  const deps = fakeDeps([connection], { answer: "deny" });
  const result = await executeQueryTool(deps).call({
    connection_id: connection.id,
    query: "delete from t where id = 1",
  }, callContext(principalWith(WRITE_SCOPES)));
  assert(toolError(result)?.startsWith("denied: the user said no"));
  // Only the preview's dry run reached the driver, and it was held back
  // before COMMIT.
  assertEquals(deps.driver.calls.length, 1);
  const [dryRun] = deps.driver.calls;
  assert(dryRun?.method === "query");
  // The driver makes it return its changed rows (QueryOptions.track).
  assertEquals(dryRun.sql, "delete from t where id = 1");
  assertEquals(dryRun.options.track, { sampleRows: 5 });
  assertThrows(() => dryRun.options.beforeCommit?.(deps.driver.result));
});

Deno.test("a hidden connection is -33007 for every tool, and the driver is never opened", async () => {
  const blocked = fakeConnection({ externalAccess: "blocked" });
  const never = fakeConnection({ name: "Never", aiPolicy: "never" });
  const elsewhere = fakeConnection({ name: "Elsewhere" });
  const deps = fakeDeps([blocked, never, elsewhere]);
  const allowlisted = principalWith(
    ALL_SCOPES,
    new Set([blocked.id, never.id]),
  );
  for (const connection of [blocked, never, elsewhere]) {
    for (
      const [tool, args] of [
        [executeQueryTool(deps), { query: "select 1" }],
        [listTablesTool(deps), {}],
        [describeTableTool(deps), { table: "t" }],
        [confirmDestructiveTool(deps), { query: "drop table t" }],
      ] as const
    ) {
      const error = await assertRejects(() =>
        tool.call(
          { connection_id: connection.id, ...args },
          callContext(allowlisted),
        )
      );
      assert(error instanceof WireError, String(error));
      assertEquals(error.code, -33007);
    }
  }
  assertEquals(deps.driver.calls, []);
});

Deno.test("list_tables and describe_table pass the schema and options through, and name a missing table", async () => {
  const connection = fakeConnection();
  const deps = fakeDeps([connection]);
  const ctx = callContext(principalWith(READ_SCOPES));
  deps.driver.tables = [{
    name: "t",
    schema: "main",
    type: "table",
    rowCount: 3,
  }];
  const listed = await listTablesTool(deps).call({
    connection_id: connection.id,
    schema: "main",
    include_row_counts: true,
  }, ctx);
  assertEquals(listed.structuredContent, {
    tables: [{ name: "t", schema: "main", type: "table", row_count: 3 }],
    schema: "main",
    schema_is_default: false,
    total: 1,
    is_truncated: false,
    row_counts_included: true,
    // SQLite's counts are COUNT(*)s (ENGINES.sqlite.rowCountsAreEstimates).
    row_counts_are_approximate: false,
  });
  const missing = await describeTableTool(deps).call({
    connection_id: connection.id,
    table: "nope",
  }, ctx);
  assert(
    toolError(missing)?.startsWith("not_found:"),
    toolError(missing) ?? "",
  );
  assert(toolError(missing)?.includes('"nope"'));
  assertEquals(deps.driver.calls, [
    { method: "listTables", schema: "main", rowCounts: true },
    { method: "describeTable", table: "nope", schema: undefined },
    // The not_found's suggestions: the tables the login sees.
    { method: "listTables", schema: undefined, rowCounts: false },
  ]);
});

Deno.test("confirm_destructive_operation needs admin, always asks, and refuses what is not destructive", async () => {
  const connection = fakeConnection({
    externalAccess: "readWrite",
    safeMode: "silent",
  });
  const deps = fakeDeps([connection]);
  const tool = confirmDestructiveTool(deps);
  const notDestructive = await tool.call({
    connection_id: connection.id,
    query: "select 1",
  }, callContext(principalWith(ALL_SCOPES)));
  assert(toolError(notDestructive)?.startsWith("invalid_argument:"));
  const dropped = await tool.call({
    connection_id: connection.id,
    query: "drop table t",
  }, callContext(principalWith(ALL_SCOPES)));
  assertEquals(toolError(dropped), null);
  assertEquals(deps.asked.length, 1, "asked even under Safe Mode silent");
  // The table's row count for the preview, then the statement itself.
  const [count, call] = deps.driver.calls;
  assert(count?.method === "query" && count.options.mode === "read");
  assertEquals(count.sql, "SELECT count(*) FROM t");
  assert(call?.method === "query" && call.options.mode === "write");
  assertEquals(call.sql, "drop table t");
});
