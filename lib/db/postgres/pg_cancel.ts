/**
 * A statement's stop on PostgreSQL: the protocol's cancel request, sent
 * again while the statement runs on.
 *
 * A backend drops a cancel request that finds it waiting for a command
 * (postgres.c: ProcessInterrupts ignores a query cancel while
 * `DoingCommandRead`) — before it has read the statement's batch, or
 * between the messages of an extended-protocol batch. A request that lands
 * within the first milliseconds of a statement (a client cancelling at
 * once, a short timeout, a slow link that delivers the statement after the
 * request) is lost that way, and the statement ran on to its end or its
 * server-side `statement_timeout` while its read waited: 5 s, then failed
 * as a lost session and replaced its pool (tests/db/cancel_resend_test.ts).
 *
 * So once a request was delivered (the server closed its socket, having
 * signalled the backend) and the statement has not ended after a short
 * pause, the request is sent again, the pauses growing
 * ({@linkcode RESEND_AFTER_MS}), a bounded number of times. Every request
 * sent is awaited: `delivered` settles only once the statement ended (or
 * the requests ran out) and the last request sent was delivered — the
 * session serves nothing else before (a late request would stop another
 * client's statement: outsider stop 49).
 *
 * @module
 */

import { type Alarm, alarm } from "../../base/alarms.ts";

/**
 * The pause after each delivered request, while the statement has not
 * ended, before the next: seven requests over about four seconds, within
 * the stop's grace (`STOP_GRACE_MS`, 5 s). After the last the server's own
 * `statement_timeout` remains.
 */
export const RESEND_AFTER_MS: readonly number[] = [
  50,
  100,
  250,
  500,
  1_000,
  2_000,
];

/** The cancel requests of one statement's stop. */
export interface Cancelling {
  /**
   * Settles once no request will be sent any more and every request sent
   * was delivered (or failed to be).
   */
  readonly delivered: Promise<void>;
  /** The statement ended (its answer came): no request follows. */
  end(): void;
  /** Requests sent so far. */
  readonly sent: number;
  /**
   * Whether the last request delivered settled true (the server took it;
   * a request that settles with no value counts as taken too).
   */
  readonly taken: boolean;
}

/**
 * Send `request` (one cancel request, settling once delivered; undefined
 * when none could be sent, e.g. the backend is not known yet) at once, and
 * again after each pause of `pauses` for as long as `end` was not called.
 */
export function cancelUntilEnded(
  request: () => Promise<unknown> | undefined,
  pauses: readonly number[] = RESEND_AFTER_MS,
): Cancelling {
  let ended = false;
  let sent = 0;
  let taken = false;
  let timer: Alarm | null = null;
  let wake: (() => void) | null = null;
  const delivered = (async () => {
    // Never sent from inside the caller's own call (a read's message loop).
    await Promise.resolve();
    for (let i = 0;; i++) {
      if (ended) return;
      const pending = request();
      if (pending === undefined) return;
      sent++;
      await pending.then(
        (ok) => void (taken = ok !== false),
        () => void (taken = false),
      );
      if (ended || i >= pauses.length) return;
      await new Promise<void>((resolve) => {
        wake = resolve;
        timer = alarm(pauses[i]!, resolve);
      });
      (timer as Alarm | null)?.clear();
      timer = null;
      wake = null;
    }
  })();
  return {
    delivered,
    end() {
      if (ended) return;
      ended = true;
      (timer as Alarm | null)?.clear();
      (wake as (() => void) | null)?.();
    },
    get sent() {
      return sent;
    },
    get taken() {
      return taken;
    },
  };
}

/**
 * `cancelUntilEnded` for a statement that settles `ended` once it is over
 * (its promise, resolved or failed).
 */
export function cancelWhileRunning(
  request: () => Promise<unknown> | undefined,
  ended: PromiseLike<unknown>,
): Cancelling {
  const cancelling = cancelUntilEnded(request);
  Promise.resolve(ended).then(() => cancelling.end(), () => cancelling.end());
  return cancelling;
}

/**
 * Whether a session whose statement was stopped by `cancelling` (null: no
 * stop) may serve another statement: only when no cancel request was sent
 * at all. A request, once sent, may land at any later time on whatever the
 * session runs then — a slow link, a relay that hung up on dbport and
 * passes it on later, a pooler that closes the request's socket at once and
 * forwards it afterwards ("delivered" can never be known through a hop) —
 * and even straight to the server one request can stop two statements:
 * PostgreSQL's postmaster signals the backend twice for it (`signal_child`:
 * the process, then its process group), and a second SIGINT that arrives
 * after the first already stopped the statement stays pending while the
 * backend reads the next statement's messages (cancels are held off then)
 * and stops that one (outsider stop 45b's test, 1 in 2 runs when a
 * stopped read's session was reused once its statement said 57014). So a
 * session a request was sent for is closed, never reused; a stop is rare,
 * a new session costs one connection's start.
 */
export function reusableAfterStop(cancelling: Cancelling | null): boolean {
  return cancelling === null || cancelling.sent === 0;
}
