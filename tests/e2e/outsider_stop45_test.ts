/**
 * Outsider attack of stop 45 (branch attack45): the alarms of commit 34f5d7b
 * (one runtime timer for every request deadline, statement timeout, session
 * wait and idle watch), node:http's socket timeouts replaced by the slots'
 * idle watch, log batches committed without a sync, and the PostgreSQL
 * reader's exchange written into one buffer.
 */

import { assert, assertEquals } from "@std/assert";
import { AlarmClock } from "../../lib/base/alarms.ts";
import { savedConnection, serverWith } from "../_connections.ts";
import { needs, openFixture } from "../_db.ts";
import { callTool } from "../_tool_call.ts";
import { textOf } from "../_outsider.ts";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

// ------------------------------------------------------------ alarms

// What I did: two alarms due at the same time; the first one's fire clears
// the second (as an abort listener clears its own alarm when a deadline
// aborts: session_share's waiter, say).
// What happened: the cleared alarm fired anyway: #fired took every due
// entry out of the set before calling any, so clear() found nothing to
// delete and the entry was still in the list being fired. A setTimeout
// cleared by another timer's callback never runs; lib/base/alarms.ts says
// "It no longer fires".
// What should happen: a cleared alarm never fires, even when it was due in
// the same tick. Fixed: an entry is marked cleared, and a cleared entry is
// skipped when the due ones are fired.
Deno.test("an alarm cleared by another alarm due in the same tick does not fire", async () => {
  const clock = new AlarmClock();
  let fired = 0;
  let second: { clear(): void } | undefined;
  clock.set(20, () => second?.clear());
  second = clock.set(20, () => fired++);
  await sleep(200);
  assertEquals(fired, 0, "a cleared alarm fired");
  assertEquals(clock.size, 0);
  assertEquals(clock.armed, false);
});
