import { assert, assertEquals, assertMatch } from "@std/assert";
import type { DialogRequest } from "../../lib/app/host_dialog.ts";
import { ConsoleEvents, MERGE_MS } from "../../lib/console/events.ts";
import { ConsoleKeys, sameSecret } from "../../lib/console/keys.ts";
import { PendingApprovals } from "../../lib/console/pending.ts";
import { waitUntil } from "../_wait.ts";

const request: DialogRequest = {
  kind: "write",
  tier: "write",
  connection: { id: "c1", name: "Shop" },
  client: "Claude",
  token: "laptop",
  statement: "UPDATE orders SET paid = true",
  safeMode: "alert",
  message: 'Allow a query on "Shop"?',
  reasons: [],
};

Deno.test("PendingApprovals: a click answers the approval it names, once", async () => {
  let changes = 0;
  const asked: string[] = [];
  const pending = new PendingApprovals({
    onChange: () => changes++,
    onAsk: (approval) => asked.push(approval.id),
  });
  const answer = pending.dialog.ask(request, new AbortController().signal);
  const [approval] = pending.list();
  assertEquals(approval?.request, request);
  assertEquals(asked, [approval!.id]);
  assertEquals(pending.answer("not-an-id", true), false);
  assertEquals(pending.answer(approval!.id, true), true);
  assertEquals(await answer, { answer: "approve" });
  // Answered elsewhere already: a second click changes nothing.
  assertEquals(pending.answer(approval!.id, false), false);
  assertEquals(pending.size, 0);
  assertEquals(changes, 2);
});

Deno.test("PendingApprovals: Deny denies; a request that ends withdraws its approval", async () => {
  const pending = new PendingApprovals();
  const denied = pending.dialog.ask(request, new AbortController().signal);
  pending.answer(pending.list()[0]!.id, false);
  assertEquals(await denied, { answer: "deny" });
  const ended = new AbortController();
  const withdrawn = pending.dialog.ask(request, ended.signal);
  assertEquals(pending.size, 1);
  ended.abort();
  assertEquals(await withdrawn, { answer: "dismissed" });
  assertEquals(pending.size, 0);
  const already = new AbortController();
  already.abort();
  assertEquals(await pending.dialog.ask(request, already.signal), {
    answer: "dismissed",
  });
  assertEquals(pending.size, 0);
});

Deno.test("PendingApprovals.dismissAll() ends every waiting approval unanswered", async () => {
  const pending = new PendingApprovals();
  const signal = new AbortController().signal;
  const a = pending.dialog.ask(request, signal);
  const b = pending.dialog.ask(request, signal);
  pending.dismissAll();
  assertEquals(await Promise.all([a, b]), [
    { answer: "dismissed" },
    { answer: "dismissed" },
  ]);
});

Deno.test("ConsoleEvents: approvals are told at once, other topics merged per quarter second", async () => {
  const events = new ConsoleEvents();
  events.changed("activity"); // no listener: nothing is kept
  const told: string[] = [];
  const stop = events.listen((topic) => told.push(topic));
  assertEquals(events.listeners, 1);
  events.changed("approvals");
  for (let i = 0; i < 100; i++) events.changed("activity");
  assertEquals(told, ["approvals"]);
  await waitUntil(
    `the merged activity, told within a ${MERGE_MS} ms merge`,
    () => told.length > 1,
    { timeoutMs: MERGE_MS + 10_000 },
  );
  assertEquals(told, ["approvals", "activity"]);
  stop();
  assertEquals(events.listeners, 0);
});

Deno.test("ConsoleKeys: only the key opens a session; a session is found by its id on its own port", () => {
  const keys = new ConsoleKeys();
  assertEquals(keys.key.length, 64);
  assertMatch(keys.prefix, /^\/c\/[0-9a-f]{32}$/);
  assert(new ConsoleKeys().prefix !== keys.prefix, "a prefix per start");
  assertEquals(keys.exchange("x".repeat(64), 4001), null);
  assertEquals(keys.exchange("", 4001), null);
  const session = keys.exchange(keys.key, 4001)!;
  assertEquals(keys.session(session.id, 4001), session);
  assertEquals(keys.session(session.id, 4002), null, "another listener's port");
  assertEquals(keys.session(undefined, 4001), null);
  assertEquals(
    keys.session(keys.key, 4001),
    null,
    "the key is not a session id",
  );
  assertEquals(session.csrf === session.id, false);
  assertEquals(sameSecret("abc", "abc"), true);
  assertEquals(sameSecret("abc", "abd"), false);
  assertEquals(sameSecret("ab", "abc"), false);
});
