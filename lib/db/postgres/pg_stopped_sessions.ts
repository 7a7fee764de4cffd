/**
 * The reserved PostgreSQL sessions whose statement was stopped: the cancel
 * requests sent for each, and whether it may serve another statement. Until
 * a request is delivered the session serves nothing else (outsider stop 49:
 * a bound read's, a write's or an export's request that arrived after its
 * statement had ended stopped another client's next statement on the
 * session, "canceling statement due to user request").
 *
 * @module
 */

import { alarm, settledWithin } from "../../base/alarms.ts";
import { type Cancelling, reusableAfterStop } from "./pg_cancel.ts";

/** How long a session's clean-up may take before it counts as lost. */
export const CLEAN_UP_MS = 5_000;

/** The cancel requests sent for statements of each reserved session. */
const cancels = new WeakMap<object, Promise<void>>();

/**
 * Whether each reserved session whose statement was stopped may serve
 * another statement once that statement ended (pg_cancel.ts
 * `reusableAfterStop`): only when no cancel request was sent for it.
 */
const verdicts = new WeakMap<object, Promise<boolean>>();

/**
 * Note the stop of `session`'s statement, `running`, by `cancelling`: its
 * requests' delivery (`cancelDelivered`) and, once the statement ended,
 * whether the session may serve again (`reusable`). Called after
 * `cancelWhileRunning`, whose handler ends the requests first.
 */
export function noteStop(
  session: object,
  cancelling: Cancelling,
  running: Promise<unknown>,
): void {
  cancels.set(session, cancelling.delivered);
  const verdict = () => {
    // No request follows once it ended: the count is final.
    cancelling.end();
    return reusableAfterStop(cancelling);
  };
  verdicts.set(session, running.then(verdict, verdict));
}

/**
 * Whether `session` may be cleaned and given back: no cancel request was
 * sent for its statements, or the only one sent is known to have landed
 * (`verdicts`). False: one may still land, at any later time.
 */
export async function reusable(session: object): Promise<boolean> {
  const verdict = verdicts.get(session);
  if (verdict === undefined) return true;
  // A statement still unanswered after the clean-up's time: not reused.
  let timer: ReturnType<typeof alarm> | undefined;
  const late = new Promise<false>((resolve) => {
    timer = alarm(CLEAN_UP_MS, () => resolve(false));
  });
  try {
    return await Promise.race([verdict, late]);
  } finally {
    timer?.clear();
  }
}

/**
 * Whether the cancel request sent for a statement of `session`, if any, was
 * delivered within {@linkcode CLEAN_UP_MS}, as far as its socket tells: a
 * write's COMMIT waits for it (postgres.ts `writeQuery`). It says nothing
 * about reuse — through a hop "delivered" is never known for sure — which
 * `reusable` decides.
 */
export async function cancelDelivered(session: object): Promise<boolean> {
  const delivered = cancels.get(session);
  if (delivered === undefined) return true;
  const landed = await settledWithin(delivered, CLEAN_UP_MS);
  // Not delivered: the session stays marked, and is never given back.
  if (landed) cancels.delete(session);
  return landed;
}
