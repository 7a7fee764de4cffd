import { assert, assertEquals, assertRejects } from "@std/assert";
import type { SavedConnection } from "../../lib/app/connections.ts";
import type { Dialog, DialogAnswer } from "../../lib/app/host_dialog.ts";
import { type ConsentAsk, NeedsInput } from "../../lib/features/consent.ts";
import type { CallContext } from "../../lib/features/context.ts";
import { ToolFailure } from "../../lib/features/tools/failure.ts";
import type { JsonObject } from "../../lib/protocol/jsonrpc.ts";
import { WireError } from "../../lib/protocol/errors.ts";
import { LEVEL_SCOPES } from "../../lib/server/auth/principals.ts";
import { Approvals, paramsDigest } from "../../lib/server/approvals.ts";
import { callContext, principalWith } from "../_fake_driver.ts";

const connection: SavedConnection = {
  id: crypto.randomUUID(),
  name: "Shop",
  engine: "sqlite",
  url: "/tmp/shop.db",
  externalAccess: "readWrite",
  aiPolicy: "alwaysAllow",
  safeMode: "alert",
};

const ask: ConsentAsk = {
  kind: "write",
  tier: "write",
  connection,
  statement: "delete from orders where id = 1",
  operation: "a query",
  reasons: ['the connection\'s Safe Mode is "alert"'],
  grantsConnection: false,
  preview: null,
};

function ctx(
  params: JsonObject,
  capabilities: JsonObject = {},
  era: "modern" | "legacy" = "modern",
): CallContext {
  return callContext(
    principalWith([...LEVEL_SCOPES.readWrite]),
    {
      era,
      protocolVersion: era === "modern" ? "2026-07-28" : "2025-11-25",
      params,
      clientCapabilities: capabilities,
    },
  );
}

function dialog(answer: DialogAnswer): Dialog & { asked: number } {
  const d = {
    asked: 0,
    ask() {
      d.asked++;
      return Promise.resolve(answer);
    },
  };
  return d;
}

const PARAMS = { name: "execute_query", arguments: { query: "x" } };

Deno.test("Approvals.obtain() turns a dismissed host dialog into user_cancelled", async () => {
  const approvals = new Approvals({
    dialog: () => dialog({ answer: "dismissed" }),
  });
  const error = await assertRejects(
    () => approvals.obtain(ctx(PARAMS), ask),
    ToolFailure,
  );
  assertEquals(error.code, "user_cancelled");
});

Deno.test("Approvals.obtain() never takes a missing dialog for an approval", async () => {
  const approvals = new Approvals({
    dialog: () => dialog({ answer: "unavailable", why: "no way to ask" }),
  });
  const error = await assertRejects(
    () => approvals.obtain(ctx(PARAMS), ask),
    ToolFailure,
  );
  assertEquals(error.code, "denied");
  assertEquals(
    error.message,
    'a query on "Shop" needs the user\'s approval, and no way to ask',
  );
});

Deno.test("Approvals.obtain() asks by form only when form elicitation is declared in a modern request", async () => {
  const host = dialog({ answer: "approve" });
  const approvals = new Approvals({ dialog: () => host });
  for (
    const capabilities of [{ elicitation: {} }, { elicitation: { form: {} } }]
  ) {
    const error = await assertRejects(
      () => approvals.obtain(ctx(PARAMS, capabilities), ask),
      NeedsInput,
    );
    assertEquals(error.result.resultType, "input_required");
  }
  // URL mode only, no elicitation, or a legacy request: the host dialog.
  await approvals.obtain(ctx(PARAMS, { elicitation: { url: {} } }), ask);
  await approvals.obtain(ctx(PARAMS), ask);
  await approvals.obtain(ctx(PARAMS, { elicitation: {} }, "legacy"), ask);
  assertEquals(host.asked, 3);
});

Deno.test("Approvals.obtain() cuts the form's description at 2,000 characters", async () => {
  const approvals = new Approvals({ dialog: () => dialog({ answer: "deny" }) });
  const long = `select 1 -- ${"x".repeat(3000)}\n`;
  const error = await assertRejects(
    () =>
      approvals.obtain(ctx(PARAMS, { elicitation: {} }), {
        ...ask,
        statement: long,
      }),
    NeedsInput,
  );
  // deno-lint-ignore no-explicit-any
  const form = (error.result.inputRequests as any).approve_statement;
  const description: string = form.params.requestedSchema.properties.approved
    .description;
  assertEquals(description.length, 2000);
  assert(description.endsWith("…"));
});

Deno.test("Approvals.obtain() refuses a requestState at the 5-minute mark, not before", async () => {
  let now = 1_000_000;
  const approvals = new Approvals({
    dialog: () => dialog({ answer: "approve" }),
    now: () => now,
  });
  const first = await assertRejects(
    () => approvals.obtain(ctx(PARAMS, { elicitation: {} }), ask),
    NeedsInput,
  );
  const retry = {
    ...PARAMS,
    requestState: first.result.requestState as string,
    inputResponses: {
      approve_statement: { action: "accept", content: { approved: true } },
    },
  };
  now += 5 * 60_000;
  const error = await assertRejects(
    () => approvals.obtain(ctx(retry, { elicitation: {} }), ask),
    WireError,
  );
  assertEquals(error.code, -32602);
  now -= 1;
  await approvals.obtain(ctx(retry, { elicitation: {} }), ask);
});

Deno.test("Approvals.forget() drops a revoked principal's connection grants", async () => {
  const approvals = new Approvals({
    dialog: () => dialog({ answer: "approve" }),
  });
  const call = ctx(PARAMS);
  await approvals.obtain(call, { ...ask, grantsConnection: true });
  assertEquals(approvals.granted(call.principal, connection.id), true);
  approvals.forget(call.principal.key);
  assertEquals(approvals.granted(call.principal, connection.id), false);
});

Deno.test("paramsDigest() ignores key order and the retry's own fields", () => {
  const a = paramsDigest({ name: "t", arguments: { a: 1, b: [1, { c: 2 }] } });
  const b = paramsDigest({
    arguments: { b: [1, { c: 2 }], a: 1 },
    name: "t",
    _meta: { x: 1 },
    requestState: "s",
    inputResponses: {},
  });
  assertEquals(a, b);
  assert(a !== paramsDigest({ name: "t", arguments: { a: 2 } }));
});

Deno.test("Approvals.obtain() withdraws a host question no one answers within approvalTimeoutSeconds: user_cancelled", async () => {
  let withdrawn = false;
  const silent: Dialog = {
    ask: (_request, signal) =>
      new Promise((resolve) => {
        signal.addEventListener("abort", () => {
          withdrawn = true;
          // A killed command dialog exits non-zero, which reads as Deny:
          // the timeout still says no one answered.
          resolve({ answer: "deny" });
        });
      }),
  };
  const approvals = new Approvals({
    dialog: () => silent,
    timeoutMs: () => 30,
  });
  const error = await assertRejects(
    () => approvals.obtain(ctx(PARAMS, {}, "legacy"), ask),
    ToolFailure,
  );
  assertEquals(error.code, "user_cancelled");
  assertEquals(withdrawn, true);
  assertEquals(
    error.message.includes("(approvalTimeoutSeconds); nothing was run"),
    true,
    error.message,
  );
});

Deno.test("Approvals.obtain() an answer before the timeout stands, and the timer is cleared", async () => {
  const approvals = new Approvals({
    dialog: () => dialog({ answer: "approve" }),
    timeoutMs: () => 60_000,
  });
  // The test's sanitizer fails it if a 60 s timer were left running.
  await approvals.obtain(ctx(PARAMS, {}, "legacy"), ask);
});
