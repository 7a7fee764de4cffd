/**
 * The cancel requests of one statement's stop (lib/db/postgres/pg_cancel.ts):
 * sent again while it runs on, never after it ended, a bounded number of
 * times, each awaited. No database: the requests are counted.
 */

import { assertEquals } from "@std/assert";
import { cancelUntilEnded } from "../../lib/db/postgres/pg_cancel.ts";

Deno.test("cancel requests: sent again after each pause until the list runs out, each awaited", async () => {
  let inFlight = 0;
  let most = 0;
  const cancelling = cancelUntilEnded(() => {
    inFlight++;
    most = Math.max(most, inFlight);
    return Promise.resolve().then(() => void inFlight--);
  }, [1, 1, 1]);
  await cancelling.delivered;
  assertEquals(cancelling.sent, 4);
  assertEquals(most, 1);
});

Deno.test("cancel requests: none after the statement ended, and the one on its way is awaited", async () => {
  let deliver = () => {};
  const cancelling = cancelUntilEnded(
    () => new Promise<void>((resolve) => (deliver = resolve)),
    [1_000],
  );
  let settled = false;
  void cancelling.delivered.then(() => (settled = true));
  await Promise.resolve();
  await Promise.resolve();
  assertEquals(cancelling.sent, 1);
  cancelling.end();
  await Promise.resolve();
  assertEquals(settled, false);
  deliver();
  await cancelling.delivered;
  assertEquals(cancelling.sent, 1);
});

Deno.test("cancel requests: ended during a pause, the pause's timer is cleared and nothing follows", async () => {
  const cancelling = cancelUntilEnded(() => Promise.resolve(), [60_000]);
  while (cancelling.sent === 0) await Promise.resolve();
  // Let the first request's delivery start the pause.
  for (let i = 0; i < 5; i++) await Promise.resolve();
  cancelling.end();
  await cancelling.delivered;
  assertEquals(cancelling.sent, 1);
});

Deno.test("cancel requests: none sent when the backend is not known", async () => {
  const cancelling = cancelUntilEnded(() => undefined);
  await cancelling.delivered;
  assertEquals(cancelling.sent, 0);
});
