/**
 * The stop of a statement postgres.js runs on a reserved PostgreSQL
 * session: its cancel requests, sent again while it runs on (pg_cancel.ts),
 * noted for the session's reuse (pg_stopped_sessions.ts).
 *
 * @module
 */

import { DbError } from "../errors.ts";
import { type StopOptions, stoppable } from "../stoppable.ts";
import { cancelWhileRunning } from "./pg_cancel.ts";
import { sessionGone } from "./pg_session.ts";
import { noteStop } from "./pg_stopped_sessions.ts";

/** A statement postgres.js runs, as far as stopping it goes. */
export type Cancellable = {
  cancel(): unknown;
  canceller?: ((query: unknown) => unknown) | null;
};

/**
 * `stoppable` for a statement postgres.js runs on a reserved session
 * (`start` hands over its query for the stop to cancel). A statement whose
 * session was destroyed after the stop, before the server confirmed it —
 * no cancel request could get out (an SSH tunnel gone down) and the pool
 * was ended under it — is not "stopped on the database": it may run on
 * there until its statement timeout (outsider stop48).
 */
export function stoppableStatement<T>(
  start: (
    hold: (query: Cancellable) => void,
    stopping: () => boolean,
  ) => Promise<T>,
  options: StopOptions,
  session?: object,
): Promise<T> {
  let pending: Cancellable | null = null;
  let running: Promise<T> | null = null;
  let stopping = false;
  return stoppable(
    async () => {
      try {
        running = start((query) => (pending = query), () => stopping);
        return await running;
      } catch (error) {
        if (stopping && !(error instanceof DbError) && sessionGone(error)) {
          throw new DbError(
            "connect",
            "the database session closed before the database confirmed that the statement stopped: it may run on there until its statement timeout",
          );
        }
        throw error;
      }
    },
    options,
    () => {
      stopping = true;
      if (pending === null || running === null) return;
      // Sent again while the statement runs on (pg_cancel.ts: a backend
      // drops a request that finds it reading a command).
      const cancelling = cancelWhileRunning(cancelRequests(pending), running);
      if (session !== undefined) noteStop(session, cancelling, running);
    },
  );
}

/**
 * postgres.js's cancel request for `query`, to be sent as often as asked
 * (`cancelUntilEnded`), each settling once delivered; its own `cancel()`
 * sends none after. Without a canceller to hold (not postgres.js's), its
 * `cancel()`, once.
 */
export function cancelRequests(
  query: Cancellable,
): () => Promise<void> | undefined {
  const canceller = query.canceller;
  if (typeof canceller !== "function") {
    let sent = false;
    return () => {
      if (sent) return undefined;
      sent = true;
      query.cancel();
      return Promise.resolve();
    };
  }
  query.canceller = null;
  // postgres.js sends a request for a statement the session runs; one not
  // yet sent it takes out of its queue and fails, and one queued behind
  // another waits to be sent until it runs (3.4.9 `cancel`): each call's
  // promise settles once that request was delivered.
  return () => Promise.resolve(canceller(query)).then(() => {}, () => {});
}
