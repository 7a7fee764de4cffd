/**
 * The one method table against the wire reference's "JSON-RPC methods" and "Cache
 * hints" tables, row by row.
 */
import { assertEquals, assertRejects } from "@std/assert";
import { Catalog } from "../../lib/features/catalog.ts";
import type { CallContext } from "../../lib/features/context.ts";
import { WireError } from "../../lib/protocol/errors.ts";
import { CursorCodec } from "../../lib/protocol/cursor.ts";
import { buildMethodTable } from "../../lib/server/methods.ts";

const table = buildMethodTable({
  catalog: new Catalog(),
  cursors: new CursorCodec(),
  instanceId: "i",
});

Deno.test("buildMethodTable() gives each method the wire reference's scope and era", () => {
  const contract: [string, string | null, string[]][] = [
    ["server/discover", null, ["modern"]],
    ["tools/list", "tools:read", ["modern", "legacy"]],
    ["tools/call", "tools:read", ["modern", "legacy"]],
    ["resources/list", "resources:read", ["modern", "legacy"]],
    ["resources/read", "resources:read", ["modern", "legacy"]],
    ["resources/templates/list", "resources:read", ["modern", "legacy"]],
    ["prompts/list", "resources:read", ["modern", "legacy"]],
    ["prompts/get", "resources:read", ["modern", "legacy"]],
    ["completion/complete", "resources:read", ["modern", "legacy"]],
    ["subscriptions/listen", null, ["modern"]],
    ["initialize", null, ["legacy"]],
    ["ping", null, ["legacy"]],
    ["logging/setLevel", null, ["legacy"]],
  ];
  assertEquals([...table.keys()].sort(), contract.map(([name]) => name).sort());
  for (const [name, scope, eras] of contract) {
    const spec = table.get(name)!;
    assertEquals([spec.scope, [...spec.eras]], [scope, eras], name);
  }
});

Deno.test("buildMethodTable() gives cache hints to exactly the wire reference's methods", () => {
  const hinted = Object.fromEntries(
    [...table.values()].filter((spec) => spec.cache !== null).map((spec) => [
      spec.name,
      [spec.cache!.ttlMs, spec.cache!.cacheScope],
    ]),
  );
  assertEquals(hinted, {
    "server/discover": [3600000, "public"],
    "prompts/list": [3600000, "public"],
    "resources/templates/list": [3600000, "public"],
    "tools/list": [300000, "private"],
    "resources/list": [30000, "private"],
    // The per-URI default; each read picks 5 000 to 300 000.
    "resources/read": [60000, "private"],
  });
});

Deno.test("buildMethodTable() exempts only subscriptions/listen from the deadline", () => {
  const exempt = [...table.values()].filter((spec) => !spec.deadline).map((
    spec,
  ) => spec.name);
  assertEquals(exempt, ["subscriptions/listen"]);
});

Deno.test("buildMethodTable() lets only tools/call, resources/read and prompts/get ask for input", () => {
  const asking = [...table.values()].filter((spec) => spec.mayRequireInput).map(
    (spec) => spec.name,
  ).sort();
  assertEquals(asking, ["prompts/get", "resources/read", "tools/call"]);
});

Deno.test("buildMethodTable() over a loader makes the features at the first call that needs them, once for calls at once; a failed load fails that call with its own error and is tried again", async () => {
  let loads = 0;
  let failing = true;
  const lazy = buildMethodTable({
    catalog: () => {
      loads++;
      return failing
        ? Promise.reject(new Error("cannot load the features: disk gone"))
        : Promise.resolve({ catalog: new Catalog(), subscriptionSources: [] });
    },
    cursors: new CursorCodec(),
    instanceId: "i",
  });
  const ctx = (method: string) =>
    ({ method, params: { name: "nope" } }) as unknown as CallContext;
  // server/discover needs no features.
  await lazy.get("server/discover")!.handler(ctx("server/discover"));
  assertEquals(loads, 0);
  const call = lazy.get("tools/call")!.handler;
  await assertRejects(
    () => call(ctx("tools/call")),
    Error,
    "cannot load the features: disk gone",
  );
  assertEquals(loads, 1);
  failing = false;
  // Asked again by two calls at once: one load, then the catalog answers
  // both (it has no such tool or prompt).
  await Promise.all([
    assertRejects(
      () => call(ctx("tools/call")),
      WireError,
      'Unknown tool "nope"',
    ),
    assertRejects(
      () => lazy.get("prompts/get")!.handler(ctx("prompts/get")),
      WireError,
      'Unknown prompt "nope"',
    ),
  ]);
  assertEquals(loads, 2);
  await assertRejects(
    () => call(ctx("tools/call")),
    WireError,
    'Unknown tool "nope"',
  );
  assertEquals(loads, 2);
});
