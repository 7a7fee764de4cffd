/**
 * The dispatcher's method scope check (docs/wire.md "JSON-RPC methods"): no
 * level lacks the read scopes, so a principal without them is built here.
 */
import { assertEquals } from "@std/assert";
import type { ActivityEntry } from "../../lib/app/activity_log.ts";
import type { Principal } from "../../lib/features/context.ts";
import { silentLogger } from "../../lib/base/log.ts";
import { ANONYMOUS } from "../../lib/server/auth/principals.ts";
import { Dispatcher } from "../../lib/server/dispatch.ts";
import { InFlightRegistry } from "../../lib/server/inflight.ts";
import type { MethodSpec } from "../../lib/server/methods.ts";

function run(principal: Principal, activity: ActivityEntry[]) {
  let called = false;
  const spec: MethodSpec = {
    name: "resources/list",
    eras: ["modern"],
    scope: "resources:read",
    cache: null,
    deadline: true,
    streams: false,
    mayRequireInput: false,
    handler: () => {
      called = true;
      return Promise.resolve({ resources: [] });
    },
  };
  const dispatcher = new Dispatcher({
    inflight: new InFlightRegistry(),
    shutdown: new AbortController().signal,
    log: silentLogger,
    activity: (entry) => activity.push(entry),
  });
  const response = dispatcher.run({
    spec,
    id: "s",
    era: "modern",
    protocolVersion: "2026-07-28",
    params: {},
    clientCapabilities: {},
    clientInfo: { name: "probe" },
    trace: {},
    principal,
    progressToken: undefined,
    session: null,
    connection: new AbortController().signal,
  });
  return { response, called: () => called };
}

Deno.test("Dispatcher refuses a method outside the principal's scopes with -33007 before running it", async () => {
  const activity: ActivityEntry[] = [];
  const { response, called } = run(
    { ...ANONYMOUS, scopes: new Set(["tools:read"]) },
    activity,
  );
  const answer = await response;
  assertEquals(answer.status, 403);
  assertEquals(
    answer.headers.get("www-authenticate"),
    'Bearer error="insufficient_scope"',
  );
  const body = await answer.json();
  assertEquals(body.id, "s");
  assertEquals(body.error.code, -33007);
  assertEquals(body.error.data, { requiredScopes: ["resources:read"] });
  assertEquals(called(), false);
  assertEquals(
    activity.map((e) => [e.method, e.outcome, e.clientName]),
    [["resources/list", "denied", "probe"]],
  );
});

Deno.test("Dispatcher runs a method the principal holds the scope for", async () => {
  const activity: ActivityEntry[] = [];
  const { response, called } = run(ANONYMOUS, activity);
  assertEquals((await response).status, 200);
  assertEquals(called(), true);
  assertEquals(activity[0]!.outcome, "success");
  assertEquals(activity[0]!.principalKind, "anonymous");
});
