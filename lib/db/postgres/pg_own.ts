/**
 * dbport's own statements on PostgreSQL — the catalog and vetting queries,
 * never a client's — run with the caller's limits and sent again when they
 * met a session the server had ended while it idled.
 *
 * @module
 */

import postgres from "postgres";
import { thrown } from "../../base/thrown.ts";
import { DbError } from "../errors.ts";
import { stoppable } from "../stoppable.ts";
import { toDbError } from "./pg_errors.ts";
import type { PgPools } from "./pg_pools.ts";

type Row = Record<string, unknown>;

/**
 * How many times one of dbport's own statements is sent, at most: each of
 * the pool's two sessions may have been ended (and one it reopened ended
 * again: the server ending every session of dbport's at once, twice),
 * then a new one. Only while the call's time lasts.
 */
const OWN_TRIES = 5;

/**
 * Run one of our own metadata statements with the caller's limits: every
 * catalog and vetting statement goes through here. One that met a session
 * the server had ended while it idled in dbport's own pool (an
 * administrator, idle_session_timeout, a restart: the close had not reached
 * dbport yet) is sent again, on another session, while the call's time
 * lasts — never once the driver is closed or the call was cancelled.
 * These statements only read the catalog: sending one again is harmless.
 */
export async function runOwn(
  start: () => postgres.PendingQuery<postgres.Row[]>,
  options: { signal: AbortSignal; timeoutMs: number },
  secrets: readonly string[],
  own: Pick<
    PgPools,
    | "closed"
    | "ownSessionsSettled"
    | "linger"
    | "cancelOwn"
    | "ownCancelsDelivered"
  >,
  caller: AbortSignal,
): Promise<Row[]> {
  let pending: postgres.PendingQuery<postgres.Row[]> | null = null;
  const deadline = Date.now() + options.timeoutMs;
  // A call its caller cancelled fails at once; its statement is left to end
  // (below), and until it does the pools hold it (`linger`).
  let abandon: (error: unknown) => void = () => {};
  const abandoned = new Promise<never>((_, reject) => (abandon = reject));
  abandoned.catch(() => {});
  try {
    return await stoppable(
      async () => {
        for (let tries = 1;; tries++) {
          // A cancel request of an earlier own statement still on its way
          // would stop this one.
          await own.ownCancelsDelivered();
          pending = start();
          try {
            return [...(await Promise.race([pending, abandoned]))] as Row[];
          } catch (error) {
            const again = () =>
              tries < OWN_TRIES && idleSessionLost(error) && !own.closed &&
              !options.signal.aborted && Date.now() < deadline;
            if (!again()) throw error;
            // Once postgres.js has seen the lost session close: sent
            // before, the statement would go to it and never be answered.
            await own.ownSessionsSettled();
            if (!again()) throw error;
          }
        }
      },
      options,
      () => {
        // Its timeout, or the driver closing (`options.signal` aborted, the
        // caller's not): stopped now.
        if (!caller.aborted) {
          if (pending !== null) own.cancelOwn(pending);
          return;
        }
        // A cancelled call (its client left) lets its catalog statement end:
        // postgres.js sends its cancel request without waiting for it, and
        // one landing after the statement ended stopped the next statement
        // on the session — another caller's vetting (an outsider saw a read
        // answer "canceling statement due to user request"). The pools hold
        // it until it ends: cancelled at its own timeout, so a client
        // leaving cannot hold one of this pool's two sessions for longer,
        // or when the driver closes. The call itself fails as cancelled at
        // once — waiting for the statement, it ended after the stop's
        // grace as a lost session, and the connection counted as lost
        // (outsider stop48).
        if (pending !== null) own.linger(pending, deadline - Date.now());
        abandon(new DbError("cancelled", "the request was cancelled"));
      },
    );
  } catch (error) {
    throw toDbError(error, secrets);
  }
}

/**
 * Whether `error` says the session was gone when the statement reached it:
 * reset or a broken pipe under the write, closed by the server with the
 * statement unanswered, ended for idling (57P05, said only to an idle
 * session) or by an administrator or a shutdown (57P01: what a statement
 * written to a session ended while idle meets when the server says why;
 * these statements only read the catalog, so one ended while it ran is
 * sent again harmlessly). Not CONNECTION_ENDED or CONNECTION_DESTROYED: the pool is
 * ending (the driver closes).
 */
function idleSessionLost(error: unknown): boolean {
  return /^(ECONNRESET|EPIPE|CONNECTION_CLOSED|57P01|57P05)$/.test(
    thrown(error).code,
  );
}
