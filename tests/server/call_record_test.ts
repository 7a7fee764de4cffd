/**
 * What a call resolved reaches its activity log entry through `ctx.record`,
 * whatever its arguments are called; one settings snapshot per call; one
 * signal for the handler, the engine's timeout held within the deadline.
 * Real tools over a fake driver, through the real dispatcher.
 */
import { assert, assertEquals, assertInstanceOf } from "@std/assert";
import { createHash } from "node:crypto";
import type { ActivityEntry } from "../../lib/app/activity_log.ts";
import { DEFAULT_SETTINGS, type Settings } from "../../lib/app/settings.ts";
import { silentLogger } from "../../lib/base/log.ts";
import { DbError } from "../../lib/db/errors.ts";
import type { QueryOptions } from "../../lib/db/types.ts";
import {
  Catalog,
  type PromptEntry,
  type ToolEntry,
} from "../../lib/features/catalog.ts";
import { explainSchemaPrompt } from "../../lib/features/prompts/explain_schema.ts";
import { lookupHandlers } from "../../lib/features/lookups.ts";
import { describeTableTool } from "../../lib/features/tools/describe_table.ts";
import { executeQueryTool } from "../../lib/features/tools/execute_query.ts";
import { savedQueryTool } from "../../lib/features/tools/saved_query.ts";
import type { JsonObject } from "../../lib/protocol/jsonrpc.ts";
import { Dispatcher } from "../../lib/server/dispatch.ts";
import { InFlightRegistry, RequestStopped } from "../../lib/server/inflight.ts";
import type { MethodSpec } from "../../lib/server/methods.ts";
import {
  fakeConnection,
  type FakeDeps,
  fakeDeps,
  FakeDriver,
  principalWith,
} from "../_fake_driver.ts";

const PRINCIPAL = principalWith([
  "tools:read",
  "resources:read",
  "tools:write",
]);

const sha256 = (text: string) =>
  createHash("sha256").update(text).digest("hex");

/** A dispatcher serving `tools` as `tools/call`, counting settings reads. */
function serving(
  tools: ToolEntry[],
  deps: FakeDeps,
  options: { deadlineMs?: number; prompts?: PromptEntry[] } = {},
) {
  const activity: ActivityEntry[] = [];
  const inflight = new InFlightRegistry();
  const reads = { count: 0 };
  const live: Settings = { ...DEFAULT_SETTINGS };
  // The features' own getter counts too: a call must not go around its snapshot.
  deps.settings = () => {
    reads.count++;
    return live;
  };
  const handlers = lookupHandlers(
    new Catalog({ tools, prompts: options.prompts ?? [] }),
  );
  const spec = (name: "tools/call" | "prompts/get"): MethodSpec => ({
    name,
    eras: ["modern"],
    scope: "tools:read",
    cache: null,
    deadline: true,
    streams: false,
    mayRequireInput: true,
    handler: handlers[name],
  });
  const dispatcher = new Dispatcher({
    inflight,
    shutdown: new AbortController().signal,
    log: silentLogger,
    activity: (entry) => activity.push(entry),
    settings: deps.settings,
    ...(options.deadlineMs === undefined
      ? {}
      : { deadlineMs: options.deadlineMs }),
  });
  let next = 0;
  const call = async (
    name: string,
    args: JsonObject,
    method: "tools/call" | "prompts/get" = "tools/call",
  ) => {
    const id = `c${next++}`;
    const response = dispatcher.run({
      spec: spec(method),
      id,
      era: "modern",
      protocolVersion: "2026-07-28",
      params: { name, arguments: args },
      clientCapabilities: {},
      clientInfo: { name: "probe" },
      trace: {},
      principal: PRINCIPAL,
      progressToken: undefined,
      session: null,
      connection: new AbortController().signal,
    });
    return { id, body: await (await response).json() as JsonObject };
  };
  return { call, activity, reads, inflight };
}

Deno.test("a saved query's tool, whose SQL is no argument, is logged with the digest of the statement it ran", async () => {
  const connection = fakeConnection();
  const deps = fakeDeps([connection]);
  const tool = savedQueryTool(deps, {
    name: "author_by_id",
    connectionId: connection.id,
    sql: "select name from authors where id = :id",
    params: [{ name: "id", type: "int" }],
    description: "",
  }, "sqlite");
  const t = serving([tool], deps);
  const { body } = await t.call("q_author_by_id", { id: 7 });
  assert(body.result !== undefined, JSON.stringify(body));
  const [ran] = deps.driver.calls;
  assert(ran?.method === "query");
  assertEquals(
    t.activity.map((e) => [e.target, e.connectionId, e.sqlDigest]),
    [["q_author_by_id", connection.id, sha256(ran.sql)]],
  );
});

Deno.test("a connection named by its name is logged by its id; a call that resolves none logs none", async () => {
  const connection = fakeConnection({ name: "Shop" });
  const deps = fakeDeps([connection]);
  const t = serving([executeQueryTool(deps)], deps);
  await t.call("execute_query", { connection_id: "shop", query: "select 1" });
  await t.call("execute_query", { connection_id: "nope", query: "select 2" });
  assertEquals(
    t.activity.map((e) => [e.connectionId, e.sqlDigest, e.outcome]),
    [
      [connection.id, sha256("select 1"), "success"],
      // The statement was read; no connection was found.
      [null, sha256("select 2"), "error"],
    ],
  );
});

Deno.test("a prompt's connection, an argument of another name, is logged by its id", async () => {
  const connection = fakeConnection({ name: "Shop" });
  const deps = fakeDeps([connection]);
  const t = serving([], deps, { prompts: [explainSchemaPrompt(deps)] });
  const { body } = await t.call(
    "explain_schema",
    { connection: "Shop" },
    "prompts/get",
  );
  assert(body.result !== undefined, JSON.stringify(body));
  assertEquals(
    t.activity.map((e) => [e.method, e.target, e.connectionId]),
    [["prompts/get", "explain_schema", connection.id]],
  );
});

Deno.test("describe_table's table is in its entry's detail", async () => {
  const connection = fakeConnection();
  const deps = fakeDeps([connection]);
  deps.driver.detail = {
    name: "authors",
    schema: "main",
    type: "table",
    columns: [{
      name: "id",
      dataType: "integer",
      nullable: false,
      defaultValue: null,
      primaryKey: true,
      comment: null,
      enumValues: null,
    }],
    indexes: [],
    foreignKeys: [],
    comment: null,
    ddl: null,
  };
  const t = serving([describeTableTool(deps)], deps);
  await t.call("describe_table", {
    connection_id: connection.id,
    table: "authors",
  });
  assertEquals(
    t.activity.map((e) => [e.connectionId, e.outcome, e.detail]),
    [[connection.id, "success", "on main.authors"]],
  );
});

Deno.test("arguments a tool does not record are not logged, whatever they are called", async () => {
  const deps = fakeDeps([]);
  const silent: ToolEntry = {
    definition: { name: "silent", inputSchema: { type: "object" } },
    scope: null,
    call: () => Promise.resolve({ content: [] }),
  };
  const t = serving([silent], deps);
  await t.call("silent", { connection_id: "conn-1", query: "select 1" });
  assertEquals(
    t.activity.map((e) => [e.target, e.connectionId, e.sqlDigest]),
    [["silent", null, null]],
  );
});

Deno.test("each call reads the settings once, at its start", async () => {
  const connection = fakeConnection({ externalAccess: "readWrite" });
  const deps = fakeDeps([connection]);
  const tools = [
    executeQueryTool(deps),
    savedQueryTool(deps, {
      name: "one",
      connectionId: connection.id,
      sql: "select 1",
      params: [],
      description: "",
    }, "sqlite"),
  ];
  const t = serving(tools, deps);
  await t.call("execute_query", {
    connection_id: connection.id,
    query: "select 2",
  });
  assertEquals(t.reads.count, 1);
  await t.call("q_one", {});
  assertEquals(t.reads.count, 2);
  // A write is previewed and asked about (Safe Mode "alert"; the fake
  // consent approves): still one read.
  await t.call("execute_query", {
    connection_id: connection.id,
    query: "update t set a = 1 where id = 2",
  });
  assertEquals(deps.asked.map((a) => a.kind), ["write"]);
  assertEquals(t.reads.count, 3);
  // Everything ran: two reads, the write's dry run and the write.
  assertEquals(deps.driver.calls.length, 4);
});

/**
 * A driver whose query waits until its signal aborts, keeping the options;
 * it then fails as the real drivers do, with a cancellation.
 */
class WaitingDriver extends FakeDriver {
  options: QueryOptions | null = null;
  /** The options of the query it holds. */
  held(): QueryOptions {
    assert(this.options !== null, "no query was sent");
    return this.options;
  }
  override query(_sql: string, options: QueryOptions) {
    this.options = options;
    return new Promise<never>((_, reject) =>
      options.signal.addEventListener(
        "abort",
        () => reject(new DbError("cancelled", "the query was cancelled")),
        { once: true },
      )
    );
  }
}

Deno.test("the engine's timeout is held within the deadline, and the one signal tells a deadline from a cancel", async () => {
  const connection = fakeConnection();
  const driver = new WaitingDriver();
  const deps = fakeDeps([connection], { driver });
  const query = { connection_id: connection.id, timeout_seconds: 300 };

  const timed = serving([executeQueryTool(deps)], deps, { deadlineMs: 200 });
  const { body } = await timed.call("execute_query", {
    ...query,
    query: "select 1",
  });
  assertEquals((body.error as JsonObject).code, -33003);
  const options = driver.options!;
  // 300 s asked, 0.2 s left: the engine gets what the deadline leaves.
  assert(options.timeoutMs >= 1 && options.timeoutMs <= 200);
  assertInstanceOf(options.signal.reason, RequestStopped);
  assertEquals(options.signal.reason.reason, "deadline");
  // The history says so: the deadline's stop is a timeout.
  await until(() => deps.recorded.length === 1);
  assertEquals(deps.recorded[0]!.outcome, "timeout");

  const t = serving([executeQueryTool(deps)], deps);
  driver.options = null;
  const pending = t.call("execute_query", { ...query, query: "select 2" });
  await until(() => driver.options !== null);
  const held = driver.held();
  assertEquals(held.timeoutMs, 300_000);
  assertEquals(t.inflight.cancel(PRINCIPAL.key, "c0"), true);
  assertEquals(((await pending).body.error as JsonObject).code, -33002);
  assertEquals(held.signal.reason.reason, "cancelled");
  await until(() => deps.recorded.length === 2);
  assertEquals(deps.recorded[1]!.outcome, "cancelled");
});

/** Poll `done` (no time is asserted: the test's own limit bounds it). */
async function until(done: () => boolean): Promise<void> {
  while (!done()) await new Promise((r) => setTimeout(r, 5));
}
