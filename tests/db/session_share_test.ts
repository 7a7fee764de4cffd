import { assertEquals, assertRejects } from "@std/assert";
import { DbError } from "../../lib/db/errors.ts";
import { SessionShare } from "../../lib/db/session_share.ts";

/** A call that holds its session until `release` is called. */
function held() {
  let release = () => {};
  const done = new Promise<void>((resolve) => (release = resolve));
  return { done, release: () => release() };
}

const options = () => ({
  signal: new AbortController().signal,
  timeoutMs: 60_000,
});

Deno.test("SessionShare: one owner never holds the last session while another's call waits", async () => {
  const share = new SessionShare(4);
  const calls = Array.from({ length: 6 }, () => held());
  const started: number[] = [];
  const flood = calls.map((call, i) =>
    share.run("A", options(), () => {
      started.push(i);
      return call.done;
    })
  );
  await Promise.resolve();
  assertEquals(started, [0, 1, 2]);
  // B's call runs at once beside A's three.
  assertEquals(await share.run("B", options(), () => Promise.resolve(1)), 1);
  calls[0]!.release();
  await flood[0];
  await new Promise((resolve) => setTimeout(resolve, 0));
  assertEquals(started, [0, 1, 2, 3]);
  for (const call of calls) call.release();
  await Promise.all(flood);
  assertEquals(started, [0, 1, 2, 3, 4, 5]);
});

Deno.test("SessionShare: a waiting call ends with the request's cancellation or its timeout", async () => {
  const share = new SessionShare(2);
  const block = held();
  const first = share.run("A", options(), () => block.done);
  const controller = new AbortController();
  const cancelled = share.run(
    "A",
    { signal: controller.signal, timeoutMs: 60_000 },
    () => Promise.resolve(),
  );
  controller.abort();
  const error = await assertRejects(() => cancelled, DbError);
  assertEquals(error.kind, "cancelled");
  const late = share.run(
    "A",
    { ...options(), timeoutMs: 1 },
    () => Promise.resolve(),
  );
  assertEquals((await assertRejects(() => late, DbError)).kind, "timeout");
  block.release();
  await first;
  // Nothing is held after: both sessions are free to one owner's share.
  assertEquals(await share.run("A", options(), () => Promise.resolve(2)), 2);
});
