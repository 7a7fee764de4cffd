/**
 * Running a statement that the statement timeout or an abort must stop on the
 * server, not merely stop waiting for.
 *
 * @module
 */

import { DbError } from "./errors.ts";
import { type Alarm, alarm } from "../base/alarms.ts";

/** When and why a running statement is stopped. */
export interface StopOptions {
  timeoutMs: number;
  signal: AbortSignal;
}

/** Refuse to start work for a request that is already cancelled. */
export function throwIfAborted(
  signal: AbortSignal,
  message = NOT_STARTED,
): void {
  if (signal.aborted) throw new DbError("cancelled", message);
}

const NOT_STARTED = "the query was not started: the request was cancelled";

/** A statement's refusal when its request was cancelled before it began. */
export function notStarted(): DbError {
  return new DbError("cancelled", NOT_STARTED);
}

/**
 * A statement that got no session within its timeout, `ms`: it was not
 * started. A timeout, not a lost connection: sessions busy with other
 * calls are no reason to open a fresh driver (PostgreSQL: pg_reserve.ts
 * `reserveSession`; MySQL/MariaDB: mysql_session.ts `acquire`).
 */
export function noSession(ms: number): DbError {
  return new DbError(
    "timeout",
    `the statement timeout of ${
      formatSeconds(ms)
    } ran out while the query waited for a database session: it was not started`,
  );
}

/** How long a stopped statement may take to end before its session counts as lost. */
export const STOP_GRACE_MS = 5_000;

/** A session that did not answer within `ms`: treated as lost. */
export function sessionLost(ms: number): DbError {
  return new DbError(
    "connect",
    `the database did not answer within ${
      formatSeconds(ms)
    }: its session is treated as lost`,
  );
}

/**
 * The stop (`timeout`, `cancelled`) behind each `sessionLost` error that
 * `stoppable` raised because a stopped statement's session did not answer
 * within {@linkcode STOP_GRACE_MS}.
 */
const unansweredStops = new WeakMap<object, "timeout" | "cancelled">();

/**
 * Why the statement behind `error` was stopped, when `error` is
 * `stoppable`'s "did not answer" after a stop; null for any other error.
 */
export function unansweredStop(
  error: unknown,
): "timeout" | "cancelled" | null {
  return typeof error === "object" && error !== null
    ? unansweredStops.get(error) ?? null
    : null;
}

/** What a write stopped between its statement and its COMMIT says. */
export const ROLLED_BACK =
  "the statement was rolled back: the request was cancelled before it committed";

/**
 * Run `work`; on timeout or abort call `stop` (the engine's cancel) once. The
 * statement then fails on the server, and that failure is reported as a
 * timeout or a cancellation. A statement that finished anyway keeps its result.
 *
 * A session that died under the statement may never answer, not even the
 * cancel (its write was lost with the socket): `STOP_GRACE_MS` after the stop
 * the call ends as a lost connection instead of waiting for ever.
 * `keepLate` false: an answer that arrives once the stop was sent is the
 * timeout or the cancellation too (a read, which changed nothing).
 */
export async function stoppable<T>(
  work: () => Promise<T>,
  options: StopOptions,
  stop: () => unknown,
  keepLate = true,
): Promise<T> {
  throwIfAborted(options.signal);
  let why: "timeout" | "cancelled" | null = null;
  let giveUp: Alarm | undefined;
  let silent: (error: DbError) => void = () => {};
  const unanswered = new Promise<never>((_, reject) => {
    silent = reject;
  });
  unanswered.catch(() => {});
  const fire = (reason: "timeout" | "cancelled") => {
    if (why !== null) return;
    why = reason;
    Promise.resolve().then(stop).catch(() => {});
    giveUp = alarm(STOP_GRACE_MS, () => {
      const lost = sessionLost(STOP_GRACE_MS);
      unansweredStops.set(lost, reason);
      silent(lost);
    });
  };
  const timer = alarm(options.timeoutMs, () => fire("timeout"));
  const onAbort = () => fire("cancelled");
  options.signal.addEventListener("abort", onAbort, { once: true });
  try {
    const result = await Promise.race([work(), unanswered]);
    // A read's answer that came after its stop may be the stop's own
    // (MariaDB's SLEEP() answers 1 when killed): with `keepLate` false it
    // is the timeout or the cancellation.
    if (keepLate || why === null) return result;
    throw stopped(why, options.timeoutMs);
  } catch (error) {
    if (error instanceof DbError && error.kind === "connect") throw error;
    throw why === null ? error : stopped(why, options.timeoutMs);
  } finally {
    timer.clear();
    giveUp?.clear();
    options.signal.removeEventListener("abort", onAbort);
  }
}

/** What a statement stopped by its timeout or a cancellation says. */
function stopped(why: "timeout" | "cancelled", timeoutMs: number): DbError {
  return why === "timeout"
    ? new DbError(
      "timeout",
      `the statement timeout of ${
        formatSeconds(timeoutMs)
      } ran out and the query was stopped on the database`,
    )
    : new DbError(
      "cancelled",
      "the query was stopped on the database: the request was cancelled",
    );
}

/** `ms` as seconds for a message: `5 s`, `0.5 s`. */
export function formatSeconds(ms: number): string {
  const seconds = ms / 1000;
  return `${Number.isInteger(seconds) ? seconds : seconds.toFixed(1)} s`;
}
