/**
 * dbport's own statements on PostgreSQL — the catalog and vetting queries,
 * never a client's — run with the caller's limits and sent again when they
 * met a session the server had ended while it idled.
 *
 * @module
 */

import type postgres from "postgres";
import { thrown } from "../../base/thrown.ts";
import { DbError } from "../errors.ts";
import { stoppable } from "../stoppable.ts";
import { toDbError } from "./pg_errors.ts";
import type { OwnSession, PgPools } from "./pg_pools.ts";
import { type Cancelling, reusableAfterStop } from "./pg_cancel.ts";

type Row = Record<string, unknown>;

/**
 * How many times one of dbport's own statements is sent, at most: each of
 * the pool's two sessions may have been ended (and one it reopened ended
 * again: the server ending every session of dbport's at once, twice),
 * then a new one. Only while the call's time lasts.
 */
const OWN_TRIES = 5;

/**
 * How long after its call's deadline the server ends one of dbport's own
 * statements itself (`statement_timeout`, set on the session with the
 * statement, in the same write), whether or not a cancel request came
 * through: a call whose cancel request is slow or lost (a tunnel, a relay)
 * fails as a timeout then and leaves nothing running. Shorter than the
 * stop's grace (`STOP_GRACE_MS`), within which a late answer is kept.
 */
export const OWN_NET_MS = 1_000;

/**
 * Run one of our own metadata statements with the caller's limits: every
 * catalog and vetting statement goes through here. Each runs alone on a
 * session of the own pool reserved for it (`start` gets the session), so
 * postgres.js never queues or pipelines another statement behind it, and
 * with the server's `statement_timeout` as a net ({@linkcode OWN_NET_MS}).
 * A statement a cancel request was sent for never gives its session back:
 * the session is closed (`PgPools.endOwn`; pg_cancel.ts
 * `reusableAfterStop`). No statement waits for another
 * call's cancel request. One that met a session the server had ended while
 * it idled in dbport's own pool (an administrator, idle_session_timeout, a
 * restart: the close had not reached dbport yet) is sent again, on another
 * session, while the call's time lasts — never once the driver is closed
 * or the call was cancelled. These statements only read the catalog:
 * sending one again is harmless.
 */
export async function runOwn(
  start: (session: OwnSession) => postgres.PendingQuery<postgres.Row[]>,
  options: { signal: AbortSignal; timeoutMs: number },
  secrets: readonly string[],
  own: Pick<
    PgPools,
    | "closed"
    | "ownSessionsSettled"
    | "linger"
    | "cancelOwn"
    | "reserveOwn"
    | "endOwn"
  >,
  caller: AbortSignal,
): Promise<Row[]> {
  let pending: postgres.PendingQuery<postgres.Row[]> | null = null;
  /** The running statement's cancel requests, once it was stopped. */
  let cancelling: Cancelling | null = null;
  /** The running statement, settled (never failing) once it ended. */
  let ended: Promise<unknown> | null = null;
  const deadline = Date.now() + options.timeoutMs;
  // Aborted by the stop: a call still waiting for a session starts nothing.
  const stopped = new AbortController();
  // A call its caller cancelled fails at once; its statement is left to end
  // (below), and until it does the pools hold it (`linger`).
  let abandon: (error: unknown) => void = () => {};
  const abandoned = new Promise<never>((_, reject) => (abandon = reject));
  abandoned.catch(() => {});
  /** Whether the running statement ended (its session's fate decided). */
  let over = false;
  const cancel = () => {
    if (pending !== null && cancelling === null && !over) {
      cancelling = own.cancelOwn(pending);
    }
  };
  /**
   * The statement ended: no cancel request follows (those not yet sent are
   * not sent), and whether its session is reused is decided now.
   */
  const verdict = () => {
    over = true;
    cancelling?.end();
    return reusableAfterStop(cancelling);
  };
  try {
    return await stoppable(
      async () => {
        for (let tries = 1;; tries++) {
          const again = (error: unknown) =>
            tries < OWN_TRIES && idleSessionLost(error) && !own.closed &&
            !options.signal.aborted && Date.now() < deadline;
          let session: OwnSession;
          try {
            session = await own.reserveOwn(
              stopped.signal,
              Math.max(1, deadline - Date.now()),
            );
          } catch (error) {
            // A session postgres.js opened for it that the server ended at
            // once: nothing ran.
            if (!again(error)) throw error;
            await own.ownSessionsSettled();
            continue;
          }
          cancelling = null;
          over = false;
          // The server's own net, in the same write as the statement.
          session.unsafe(
            `SET statement_timeout = ${
              Math.max(1, Math.ceil(deadline - Date.now() + OWN_NET_MS))
            }`,
          ).simple().catch(() => {});
          const query = start(session);
          pending = query;
          // The session's end once the statement ended: given back when no
          // cancel request of it can land any more, closed otherwise.
          ended = query.then(
            () => own.endOwn(session, verdict()),
            (error: unknown) =>
              own.endOwn(
                session,
                verdict(),
                sessionDied(error),
              ),
          ).catch(() => {});
          try {
            return [...(await Promise.race([query, abandoned]))] as Row[];
          } catch (error) {
            if (!again(error)) throw error;
            // Once postgres.js has seen the lost session close: sent
            // before, the statement would go to it and never be answered.
            await own.ownSessionsSettled();
            if (!again(error)) throw error;
          }
        }
      },
      options,
      () => {
        stopped.abort();
        // Its timeout, or the driver closing (`options.signal` aborted, the
        // caller's not): stopped now.
        if (!caller.aborted) return cancel();
        // A cancelled call (its client left) lets its catalog statement end
        // (it ends at its deadline and the net at the latest); its session
        // is reused only if no cancel request was sent, so one sent after
        // it ended would have closed it. The pools hold it until it ends:
        // cancelled at its own timeout, so a client leaving cannot hold one
        // of this pool's two sessions for longer, or when the driver
        // closes. The call itself fails as cancelled at once — waiting for
        // the statement, it ended after the stop's grace as a lost session,
        // and the connection counted as lost (outsider stop48).
        if (ended !== null) own.linger(ended, deadline - Date.now(), cancel);
        abandon(new DbError("cancelled", "the request was cancelled"));
      },
    );
  } catch (error) {
    throw toDbError(error, secrets);
  }
}

/** Whether `error` says the statement's session is gone: never reused. */
function sessionDied(error: unknown): boolean {
  return /^(ECONNRESET|EPIPE|CONNECTION_(CLOSED|DESTROYED|ENDED)|57P0[125])$/
    .test(thrown(error).code);
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
