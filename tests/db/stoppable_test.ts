/**
 * `stoppable` (lib/db/stoppable.ts): a statement stopped by its timeout is
 * told as a timeout; one that answers anyway keeps its answer, unless the
 * caller is a read (`keepLate` false): MariaDB's `SELECT SLEEP(20)` answers
 * 1 when its KILL QUERY lands, and that answer is the timeout.
 */
import { assertEquals, assertRejects } from "@std/assert";
import { stoppable } from "../../lib/db/stoppable.ts";
import { DbError } from "../../lib/db/errors.ts";

/** Work that answers `value` only once stopped (as SLEEP() when killed). */
function answersWhenStopped(value: number) {
  let answer!: (value: number) => void;
  const work = new Promise<number>((resolve) => answer = resolve);
  let stops = 0;
  return {
    work: () => work,
    stop: () => {
      stops++;
      answer(value);
    },
    stops: () => stops,
  };
}

const options = () => ({
  timeoutMs: 20,
  signal: new AbortController().signal,
});

Deno.test("stoppable() keeps an answer that came after the stop by default (a write that committed)", async () => {
  const killed = answersWhenStopped(1);
  assertEquals(await stoppable(killed.work, options(), killed.stop), 1);
  assertEquals(killed.stops(), 1);
});

Deno.test("stoppable() with keepLate false tells an answer after the timeout's stop as the timeout", async () => {
  const killed = answersWhenStopped(1);
  const error = await assertRejects(
    () => stoppable(killed.work, options(), killed.stop, false),
    DbError,
    "the statement timeout of 0.0 s ran out",
  );
  assertEquals(error.kind, "timeout");
  assertEquals(killed.stops(), 1);
});

Deno.test("stoppable() with keepLate false tells an answer after a cancel as the cancellation", async () => {
  const killed = answersWhenStopped(1);
  const control = new AbortController();
  const running = stoppable(
    killed.work,
    { timeoutMs: 60_000, signal: control.signal },
    killed.stop,
    false,
  );
  control.abort();
  const error = await assertRejects(() => running, DbError, "cancelled");
  assertEquals(error.kind, "cancelled");
});

Deno.test("stoppable() with keepLate false keeps an answer that came before any stop", async () => {
  assertEquals(
    await stoppable(() => Promise.resolve(7), options(), () => {}, false),
    7,
  );
});
