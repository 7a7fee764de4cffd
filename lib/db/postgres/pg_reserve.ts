/**
 * A PostgreSQL session reserved for one call: handed out by postgres.js's
 * pool, or refused at once when the pool is retired (pg_retire.ts), the
 * caller cancels, the wait passes the statement's timeout, or a session of
 * the pool closed under the waiting `reserve()`s (`requeueWaiters`).
 *
 * @module
 */

import type postgres from "postgres";
import { alarm } from "../../base/alarms.ts";
import { DbError } from "../errors.ts";
import { noSession, notStarted } from "../stoppable.ts";
import { askAgain } from "./pg_ask_again.ts";
import { giveBackOne } from "./pg_parked.ts";
import { retiredRefusal, retirementOf } from "./pg_retire.ts";

/** A session postgres.js reserved. */
export type Reserved = Awaited<
  ReturnType<ReturnType<typeof postgres>["reserve"]>
>;

/** `reserve()`s still waiting, by pool: what `requeueWaiters` refuses. */
const waiting = new WeakMap<object, Set<(failure?: Error) => void>>();

function waitersOf(sql: object): Set<(failure?: Error) => void> {
  let waiters = waiting.get(sql);
  if (waiters === undefined) {
    waiters = new Set();
    waiting.set(sql, waiters);
  }
  return waiters;
}

/** Whether a `reserve()` of `sql` waits for a session now. */
export function reserveWaiting(sql: object): boolean {
  return (waiting.get(sql)?.size ?? 0) > 0;
}

/**
 * Refuse every `reserve()` now waiting on `sql` (`poolReplaced`: the caller
 * asks the same pool again). Called once any session of the pool has
 * closed in postgres.js too — dbport closed it, or the server did
 * (pg_pools.ts, on the socket's close): postgres.js reopens such a session
 * for the first `reserve()` waiting and then forgets that `reserve()` — it
 * would never settle (issue 38: reads left unanswered after a value too
 * large was stopped mid-stream; stop 49b: an administrator ended a session
 * held for its cancel's delivery). Asked again, a waiting `reserve()` is
 * served by the reopened session. With `failure` (no host of a
 * several-host URL could be used: pg_hosts.ts), they fail with it instead:
 * asked again, each would only meet it again until its timeout.
 */
export function requeueWaiters(sql: object, failure?: Error): void {
  for (const refuse of [...(waiting.get(sql) ?? [])]) refuse(failure);
}

/** A waiting `reserve()`'s refusal by `requeueWaiters`: asked again. */
function requeued(): DbError {
  return askAgain(
    new DbError(
      "connect",
      "the database session closed before the read began: a session of the pool closed; try again",
    ),
  );
}

/**
 * The pool's `reserve()`: a session parked between wired reads is the
 * pool's to hand out now (pg_parked.ts): asked for once it is back,
 * postgres.js hands out that one rather than open another.
 */
function poolReserve(sql: ReturnType<typeof postgres>): Promise<Reserved> {
  const returned = giveBackOne(sql);
  return returned === null ? sql.reserve() : returned.then(() => sql.reserve());
}

/**
 * A session of `sql`, or a lost-session error once the pool is replaced, or
 * the caller's cancel once `signal` aborts (a read cancelled while it waited
 * for a session held its caller until one freed: outsider stop47).
 * `waitMs` (at most `withinMs`, the statement's timeout the refusal names):
 * what is left of the call's wait when it is asked again (`askingAgain`).
 */
export function reserveSession(
  sql: ReturnType<typeof postgres>,
  signal?: AbortSignal,
  withinMs?: number,
  waitMs = withinMs,
): Promise<Reserved> {
  const retired = retirementOf(sql);
  if (retired.aborted) return Promise.reject(retiredRefusal(retired));
  if (signal?.aborted) {
    return Promise.reject(notStarted());
  }
  if (withinMs !== undefined && waitMs !== undefined && waitMs <= 0) {
    return Promise.reject(noSession(withinMs));
  }
  const pending = poolReserve(sql);
  const all = waitersOf(sql);
  return new Promise<Reserved>((resolve, reject) => {
    // A wait past the statement's own timeout is a pool that gives out no
    // session (postgres.js reconnecting with a growing backoff after its
    // sessions were ended): the call fails then rather than wait for its
    // handler's deadline (outsider stop48: a read waited 330 s).
    const timer = withinMs === undefined ? undefined : alarm(
      Math.min(withinMs, waitMs ?? withinMs),
      () => refuse(noSession(withinMs)),
    );
    const done = () => {
      timer?.clear();
      retired.removeEventListener("abort", onRetired);
      signal?.removeEventListener("abort", onCancelled);
      all.delete(onRequeued);
    };
    const refuse = (error: Error) => {
      done();
      // Should it still come, the session goes back unused.
      pending.then((reserved) => reserved.release(), () => {});
      reject(error);
    };
    const onRetired = () => refuse(retiredRefusal(retired));
    const onRequeued = (failure?: Error) => refuse(failure ?? requeued());
    const onCancelled = () => refuse(notStarted());
    retired.addEventListener("abort", onRetired, { once: true });
    signal?.addEventListener("abort", onCancelled, { once: true });
    all.add(onRequeued);
    pending.then(
      (reserved) => {
        done();
        resolve(reserved);
      },
      (error) => {
        done();
        reject(error);
      },
    );
  });
}
