/**
 * A PostgreSQL call refused before anything ran, and asked again: its
 * session was refused because the pool was replaced (pg_retire.ts), a
 * session closed under waiting reads (pg_reserve.ts `requeueWaiters`), the
 * parked session it took had died (`diedParked`), or a host of a
 * several-host URL did not match (pg_hosts.ts).
 *
 * @module
 */

import { DbError } from "../errors.ts";
import { noSession } from "../stoppable.ts";

const REPLACED = Symbol("pool replaced");

/**
 * Whether `error` is `reserveSession`'s refusal by `requeueWaiters`: nothing
 * ran, so the call may ask the same pool again.
 */
export function poolReplaced(error: unknown): boolean {
  return typeof error === "object" && error !== null && REPLACED in error;
}

/**
 * `error`, marked as a refusal before anything ran (`poolReplaced`): the
 * call asks again (`askingAgain`) — a session of a several-host URL ended
 * at its startup because its host did not match (pg_hosts.ts).
 */
export function askAgain<T extends object>(error: T): T {
  return Object.assign(error, { [REPLACED]: true });
}

/**
 * `attempt`, asked again when its session was refused before anything ran
 * because a session closed under waiting reads (pg_reserve.ts
 * `requeueWaiters`) or died parked (`diedParked`): three times in all, and
 * after that for as long as `withinMs` from the first attempt allows (the
 * statement's timeout: reads queued behind more closes than that were
 * failed with "try again" while their time was not up). Refused past that
 * time, it failed as "try again" too: it is the timeout it is.
 *
 * `attempt` gets what is left of `withinMs` (all of it the first time): its
 * wait for a session is bounded by that, never `withinMs` anew. Each
 * attempt waited its whole timeout again: with silent hosts before the
 * answering one (pg_hosts.ts, each ended after its 4 s, refusing the
 * waiting reads), a 5 s call failed at ~8 s (outsider stop 55).
 */
export async function askingAgain<T>(
  attempt: (leftMs: number) => Promise<T>,
  withinMs = 0,
): Promise<T> {
  const until = performance.now() + withinMs;
  for (let tries = 1;; tries++) {
    try {
      return await attempt(
        tries === 1 ? withinMs : Math.max(0, until - performance.now()),
      );
    } catch (error) {
      if (!poolReplaced(error)) throw error;
      if (tries >= 3 && performance.now() >= until) {
        // Its time ran out while it waited for a session: a timeout, as a
        // read that waited in postgres.js's queue says (`reserveSession`).
        throw withinMs > 0 ? noSession(withinMs) : error;
      }
    }
  }
}

/**
 * A read's refusal when the parked session it took had died while parked
 * (ended by the server before the read's statement reached it): nothing
 * ran, and the call is asked again (`askingAgain`) on a live session.
 */
export function diedParked(): DbError {
  return askAgain(
    new DbError(
      "connect",
      "the database session closed before the read began: it was ended while idle; try again",
    ),
  );
}
