/**
 * A reserved PostgreSQL session's end (docs/security.md "Bounded answers"):
 * cleaned and given back when it is alive, never when it died. postgres.js,
 * asked to write to a session that has closed, queues the write and later
 * writes to a socket it has dropped (an exception no caller can catch), and
 * `release()` would put the dead session in its open queue for the next
 * query (tests/db/session_gone_test.ts).
 *
 * @module
 */

import type postgres from "postgres";
import { thrown } from "../../base/thrown.ts";
import { alarm, settledWithin } from "../../base/alarms.ts";
import { DbError } from "../errors.ts";
import {
  noSession,
  notStarted,
  sessionLost,
  type StopOptions,
  stoppable,
  throwIfAborted,
} from "../stoppable.ts";
import { setApplicationName, type Signature } from "../signature.ts";
import { giveBackAll, giveBackOne } from "./pg_parked.ts";
import { cancelWhileRunning, reusableAfterStop } from "./pg_cancel.ts";
import { awaitWire, type Wire } from "./pg_wire.ts";

type Reserved = Awaited<ReturnType<ReturnType<typeof postgres>["reserve"]>>;

/** Pools replaced after losing a session (postgres.ts `lost`), by pool. */
const retiring = new WeakMap<object, AbortController>();

function retirementOf(sql: object): AbortSignal {
  let controller = retiring.get(sql);
  if (controller === undefined) {
    controller = new AbortController();
    retiring.set(sql, controller);
  }
  return controller.signal;
}

/** Why a pool was retired when a new one replaced it. */
const REPLACED_WHY = "the connection's pool was replaced";

/**
 * Mark `sql` as replaced (or, with `why`, closed): a session still awaited
 * from it fails at once — asked again of the pool that replaced it
 * (`askingAgain`: nothing ran), or lost when the driver closed. postgres.js
 * never settles a `reserve()` left waiting on a pool that is ending, so a
 * read queued behind the lost sessions would hang for good.
 */
export function retirePool(
  sql: object,
  why = REPLACED_WHY,
): Promise<void> {
  // Its parked sessions go back to it, to end with it: settles once they
  // are back (the pool is ended after).
  const returned = giveBackAll(sql);
  retiring.get(sql)?.abort(why);
  if (!retiring.has(sql)) {
    const controller = new AbortController();
    controller.abort(why);
    retiring.set(sql, controller);
  }
  return returned;
}

/** Whether `sql` was replaced (`retirePool`). */
export function poolRetired(sql: object): boolean {
  return retiring.get(sql)?.signal.aborted ?? false;
}

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

/** `reserve()`s still waiting, by pool: what `requeueWaiters` refuses. */
const waiting = new WeakMap<object, Set<(failure?: Error) => void>>();

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

/**
 * `attempt`, asked again when its session was refused before anything ran
 * because a session closed under waiting reads (pg_session.ts
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
  return Object.assign(
    new DbError(
      "connect",
      "the database session closed before the read began: it was ended while idle; try again",
    ),
    { [REPLACED]: true },
  );
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
  const gone = () => {
    const why = typeof retired.reason === "string"
      ? retired.reason
      : REPLACED_WHY;
    const error = new DbError(
      "connect",
      `the database session closed before the read began: ${why}; try again`,
    );
    // Replaced: the read is asked again of the new pool (an outsider saw a
    // quarter of the reads under ended sessions fail so, nothing run).
    return why === REPLACED_WHY
      ? Object.assign(error, { [REPLACED]: true })
      : error;
  };
  const requeued = () =>
    Object.assign(
      new DbError(
        "connect",
        "the database session closed before the read began: a session of the pool closed; try again",
      ),
      { [REPLACED]: true },
    );
  if (retired.aborted) return Promise.reject(gone());
  if (signal?.aborted) {
    return Promise.reject(notStarted());
  }
  if (withinMs !== undefined && waitMs !== undefined && waitMs <= 0) {
    return Promise.reject(noSession(withinMs));
  }
  // A session parked between wired reads is the pool's to hand out now
  // (pg_parked.ts): asked for once it is back, postgres.js hands out that
  // one rather than open another.
  const returned = giveBackOne(sql);
  const pending = returned === null
    ? sql.reserve()
    : returned.then(() => sql.reserve());
  let waiters = waiting.get(sql);
  if (waiters === undefined) {
    waiters = new Set();
    waiting.set(sql, waiters);
  }
  const all = waiters;
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
    const onRetired = () => refuse(gone());
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

/**
 * Run `work` on a reserved session inside `BEGIN READ ONLY` with the
 * statement timeout as a server-side net, then clean the session and give
 * it back (or drop it, when it died): every read's session, answered or
 * streamed.
 */
export async function inReadTransaction<T>(
  sql: ReturnType<typeof postgres>,
  options: {
    signal: AbortSignal;
    timeoutMs: number;
    sessionWaitMs?: number;
    sign?: Signature;
  },
  lost: () => void,
  work: (reserved: Reserved) => Promise<T>,
): Promise<T> {
  throwIfAborted(options.signal);
  const reserved = await reserveSession(
    sql,
    options.signal,
    options.timeoutMs,
    options.sessionWaitMs,
  );
  let gone = false;
  try {
    // Sent with the statement in one write rather than a round trip ahead of
    // it (a third of the driver's CPU per read, bench W1): the session's
    // read-only default covers the statement should BEGIN fail. SET LOCAL is
    // a server-side net under our own timer, should a cancel request be lost.
    const begin = reserved.unsafe(
      `BEGIN READ ONLY; SET LOCAL statement_timeout = ${
        options.timeoutMs + 5_000
      }${setApplicationName(options.sign)}`,
    ).simple();
    begin.catch(() => {});
    const result = await work(reserved).catch((error: unknown) => {
      gone = sessionGone(error);
      throw error;
    });
    await begin;
    return result;
  } finally {
    // Pipelined: advisory locks, prepared statements, LISTEN and settings a
    // read left on the session never reach the next request.
    await giveBack(reserved, gone, ["ROLLBACK", "DISCARD ALL"], lost);
  }
}

/**
 * A statement of dbport's own (BEGIN, COMMIT) that must be answered within
 * `ms`: on a session that died, postgres.js's write is lost and no answer
 * ever comes.
 */
export async function answered<T>(work: Promise<T>, ms: number): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(sessionLost(ms)), ms);
  });
  try {
    return await Promise.race([work, late]);
  } finally {
    clearTimeout(timer);
  }
}

/** How long a session's clean-up may take before it counts as lost. */
const CLEAN_UP_MS = 5_000;

/**
 * Clean a reserved session and give it back to the pool, unless it is gone:
 * postgres.js would hand a dead session, released, to the next query, and a
 * write to it is lost without an answer. A session that died (or whose
 * clean-up failed or did not finish in time) is never released; the whole
 * postgres.js pool is replaced instead (`lost`), which other calls do not
 * notice but for a new connection.
 */
export async function giveBack(
  reserved: Reserved,
  gone: boolean,
  statements: readonly string[],
  lost: () => void,
): Promise<void> {
  // A cancel request still on its way would stop the clean-up, or the next
  // caller's statement on this session: a session for which one was sent
  // is cleaned and reused only when it is known to have landed
  // (`reusable`); otherwise it is closed.
  if (!gone && !(await reusable(reserved))) {
    if (!(await closeSession(reserved))) lost();
    return;
  }
  if (!gone) {
    // Pipelined in one write.
    const done = Promise.all(statements.map((text) => reserved.unsafe(text)))
      .then(() => true, () => false);
    let timer: ReturnType<typeof setTimeout> | undefined;
    const late = new Promise<false>((resolve) => {
      timer = setTimeout(() => resolve(false), CLEAN_UP_MS);
    });
    const clean = await Promise.race([done, late]);
    clearTimeout(timer);
    if (clean) return reserved.release();
  }
  lost();
}

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
      if (session === undefined) return;
      cancels.set(session, cancelling.delivered);
      // Asked once the statement ended (`cancelWhileRunning` ends the
      // requests first: its handler was added before this one).
      const verdict = () => {
        // No request follows once it ended: the count is final.
        cancelling.end();
        return reusableAfterStop(cancelling);
      };
      verdicts.set(session, running.then(verdict, verdict));
    },
  );
}

/** A statement postgres.js runs, as far as stopping it goes. */
export type Cancellable = {
  cancel(): unknown;
  canceller?: ((query: unknown) => unknown) | null;
};

/**
 * The cancel requests sent for statements of each reserved session: until
 * one is delivered, the session serves nothing else (outsider stop 49: a
 * bound read's, a write's or an export's request that arrived after its
 * statement had ended stopped another client's next statement on the
 * session, "canceling statement due to user request").
 */
const cancels = new WeakMap<object, Promise<void>>();

/**
 * Whether each reserved session whose statement was stopped may serve
 * another statement once that statement ended (pg_cancel.ts
 * `reusableAfterStop`): only when no cancel request was sent for it.
 */
const verdicts = new WeakMap<object, Promise<boolean>>();

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
 * Close one reserved session under postgres.js, where dbport opened its
 * socket (pg_pools.ts: plain TCP, TLS's clear side, an SSH channel — all
 * `wired`): a marker written through postgres.js names the socket, which is
 * destroyed instead of written to; postgres.js sees it close and the marker
 * fail. Settles true once closed; false where the socket is postgres.js's
 * own (a Unix socket, several hosts): the marker, an empty query, was
 * answered, and the caller must close the session otherwise.
 */
export async function closeSession(reserved: Reserved): Promise<boolean> {
  const { marker, forget } = awaitWire({
    start: (wire: Wire) => queueMicrotask(() => wire.destroy()),
    data: () => {},
    closed: () => {},
  });
  try {
    await reserved.unsafe(marker).simple();
    return false;
  } catch {
    return true;
  } finally {
    forget();
  }
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

/**
 * Whether the session itself is gone (the server or the tunnel closed it):
 * then nothing more may be sent on it. postgres.js, asked to write to a
 * reserved session that has closed, queues the write and later writes to a
 * socket it has dropped: an exception no caller can catch, which ended the
 * whole server (tests/e2e/ssh_tunnel_test.ts: sshd killed mid-session).
 */
export function sessionGone(error: unknown): boolean {
  const code = thrown(error).code;
  return /^CONNECTION_(CLOSED|DESTROYED|ENDED)$/.test(code) ||
    /^E(CONNRESET|PIPE|CONNREFUSED)$/.test(code) ||
    (error instanceof DbError && error.kind === "connect");
}

/**
 * The same postgres.js write after close, where dbport cannot see it coming
 * (a session that closes between two of its statements, or one the
 * administrator ends with pg_terminate_backend: the soak, bench/soak.ts):
 * raised from postgres.js's own write timer — a TypeError on the dropped
 * socket, or Deno's "ended by the other party" on one the server closed,
 * which arrives as an unhandled rejection — it is not allowed to end the
 * process. Its statement fails as the session's loss instead.
 */
export function isWriteAfterClose(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  const stack = error.stack ?? "";
  return (
    (error instanceof TypeError &&
      error.message === "Cannot read properties of null (reading 'write')") ||
    error.message === "This socket has been ended by the other party"
  ) && /postgres[\\/][^\n]*connection\.js/.test(stack) &&
    /nextWrite/.test(stack);
}

/**
 * postgres.js's own note that a connection closed under it, or the server's
 * word that it is closing it (an
 * administrator's pg_terminate_backend of an idle pooled session, a server
 * restart): raised from its socket's close handler on a promise of its own
 * that no caller holds, so it would arrive as an unhandled rejection and end
 * the process. Every statement dbport sends has its own handler; this one
 * carries no statement and is only the session's loss, which the next call
 * on that session meets as its own error.
 */
export function isOrphanedClose(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  const code = thrown(error).code;
  // 57P01 admin_shutdown (pg_terminate_backend), 57P02 crash_shutdown,
  // 57P05 idle_session_timeout: said to an idle session before it closes.
  if (
    /^(CONNECTION_(CLOSED|DESTROYED|ENDED)|57P0[125])$/.test(code) &&
    /postgres[\\/][^\n]*connection\.js/.test(error.stack ?? "")
  ) return true;
  // The socket reset under postgres.js's own type query, which a new
  // session of a new pool sends first (fetch_types) and no caller holds:
  // the socket's error, with no postgres.js frame, that postgres.js named
  // the query on (an outsider ended sessions under reads: the process
  // would have ended).
  const query = (error as { query?: unknown }).query;
  return /^(ECONNRESET|EPIPE)$/.test(code) && typeof query === "string" &&
    /\bpg_catalog\.pg_type\b/.test(query) && /\btyparray\b/.test(query);
}

globalThis.addEventListener("error", (event) => {
  if (isWriteAfterClose(event.error)) event.preventDefault();
});
globalThis.addEventListener("unhandledrejection", (event) => {
  if (isWriteAfterClose(event.reason) || isOrphanedClose(event.reason)) {
    event.preventDefault();
  }
});
