/**
 * The sessions of a PostgreSQL driver's own pool (dbport's catalog
 * statements and vetting: pg_pools.ts `reserveOwn`), counted by dbport: at
 * most {@linkcode OWN_SESSIONS} held at once, the calls past them waiting
 * here in their order, each until its timeout or its stop.
 *
 * @module
 */

import { DbError } from "../errors.ts";
import { formatSeconds, notStarted } from "../stoppable.ts";
import { alarm } from "../../base/alarms.ts";

/** The own pool's sessions (postgres.js's `max` for it). */
export const OWN_SESSIONS = 2;

/** A catalog call that got no own session within its timeout. */
const OWN_WAIT_TIMEOUT = (ms: number) =>
  `the statement timeout of ${
    formatSeconds(ms)
  } ran out while dbport's catalog statement waited for a database session: it was not started`;

/** The own pool's sessions held, and the calls waiting for one. */
export class OwnSlots {
  /** Sessions of the own pool held by statements. */
  #held = 0;
  /** Calls waiting for one (`take`), first first. */
  readonly #waiting: (() => void)[] = [];

  /**
   * One of the own pool's sessions for a statement, counted by dbport: a
   * call waits here, not in postgres.js, when both are held. postgres.js
   * then has a session open or to open for each `reserve()`, which it
   * serves at once: one left waiting in postgres.js when a session closes
   * is refused and asked again (pg_reserve.ts `requeueWaiters`), and the
   * refused one, still in postgres.js's queue, reopened a session later
   * for nobody (a session of dbport's back right after an administrator
   * ended them all: outsider stop 47's test).
   */
  take(signal: AbortSignal, withinMs: number): Promise<void> {
    if (signal.aborted) return Promise.reject(notStarted());
    if (this.#held < OWN_SESSIONS) {
      this.#held++;
      return Promise.resolve();
    }
    return new Promise((resolve, reject) => {
      const take = () => {
        done();
        this.#held++;
        resolve();
      };
      const refuse = (error: DbError) => {
        done();
        reject(error);
      };
      const timer = alarm(
        withinMs,
        () => refuse(new DbError("timeout", OWN_WAIT_TIMEOUT(withinMs))),
      );
      const onAbort = () => refuse(notStarted());
      const done = () => {
        timer.clear();
        signal.removeEventListener("abort", onAbort);
        const at = this.#waiting.indexOf(take);
        if (at >= 0) this.#waiting.splice(at, 1);
      };
      signal.addEventListener("abort", onAbort, { once: true });
      this.#waiting.push(take);
    });
  }

  /** A session of the own pool given back or closed: the next call's. */
  free(): void {
    this.#held--;
    this.#waiting[0]?.();
  }
}
