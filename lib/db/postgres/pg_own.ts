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
  start: (session: OwnSession) => PendingRows,
  options: { signal: AbortSignal; timeoutMs: number },
  secrets: readonly string[],
  own: OwnPools,
  caller: AbortSignal,
): Promise<Row[]> {
  const run = new OwnRun(start, options, own);
  try {
    return await stoppable(() => run.rows(), options, () => run.stop(caller));
  } catch (error) {
    throw toDbError(error, secrets);
  }
}

type PendingRows = postgres.PendingQuery<postgres.Row[]>;

/** What `runOwn` asks of the pools. */
type OwnPools = Pick<
  PgPools,
  | "closed"
  | "ownSessionsSettled"
  | "linger"
  | "cancelOwn"
  | "reserveOwn"
  | "endOwn"
>;

/** One call of `runOwn`: its statement, each time it is sent, and its stop. */
class OwnRun {
  readonly #start: (session: OwnSession) => PendingRows;
  readonly #options: { signal: AbortSignal; timeoutMs: number };
  readonly #own: OwnPools;
  readonly #deadline: number;
  /** The running statement. */
  #pending: PendingRows | null = null;
  /** The running statement's cancel requests, once it was stopped. */
  #cancelling: Cancelling | null = null;
  /** The running statement, settled (never failing) once it ended. */
  #ended: Promise<unknown> | null = null;
  /** Whether the running statement ended (its session's fate decided). */
  #over = false;
  /** Aborted by the stop: a call still waiting for a session starts nothing. */
  readonly #stopped = new AbortController();
  // A call its caller cancelled fails at once; its statement is left to end
  // (`stop`), and until it does the pools hold it (`linger`).
  #abandon: (error: unknown) => void = () => {};
  readonly #abandoned: Promise<never>;

  constructor(
    start: (session: OwnSession) => PendingRows,
    options: { signal: AbortSignal; timeoutMs: number },
    own: OwnPools,
  ) {
    this.#start = start;
    this.#options = options;
    this.#own = own;
    this.#deadline = Date.now() + options.timeoutMs;
    this.#abandoned = new Promise<never>((_, reject) => this.#abandon = reject);
    this.#abandoned.catch(() => {});
  }

  /** The statement's rows, sent again while `#again` allows. */
  async rows(): Promise<Row[]> {
    for (let tries = 1;; tries++) {
      const session = await this.#reserve(tries);
      if (session === null) continue;
      try {
        return [
          ...(await Promise.race([this.#send(session), this.#abandoned])),
        ] as Row[];
      } catch (error) {
        if (!this.#again(error, tries)) throw error;
        // Once postgres.js has seen the lost session close: sent
        // before, the statement would go to it and never be answered.
        await this.#own.ownSessionsSettled();
        if (!this.#again(error, tries)) throw error;
      }
    }
  }

  /** Whether the statement is sent again after `error`, its `tries`th. */
  #again(error: unknown, tries: number): boolean {
    return tries < OWN_TRIES && idleSessionLost(error) && !this.#own.closed &&
      !this.#options.signal.aborted && Date.now() < this.#deadline;
  }

  /**
   * A session of the own pool, or null when the one postgres.js opened for
   * it was ended by the server at once (nothing ran): then ask again.
   */
  async #reserve(tries: number): Promise<OwnSession | null> {
    try {
      return await this.#own.reserveOwn(
        this.#stopped.signal,
        Math.max(1, this.#deadline - Date.now()),
      );
    } catch (error) {
      if (!this.#again(error, tries)) throw error;
      await this.#own.ownSessionsSettled();
      return null;
    }
  }

  /** Send the statement on `session`, whose end follows the statement's. */
  #send(session: OwnSession): PendingRows {
    this.#cancelling = null;
    this.#over = false;
    // The server's own net, in the same write as the statement.
    session.unsafe(
      `SET statement_timeout = ${
        Math.max(1, Math.ceil(this.#deadline - Date.now() + OWN_NET_MS))
      }`,
    ).simple().catch(() => {});
    const query = this.#start(session);
    this.#pending = query;
    // The session's end once the statement ended: given back when no
    // cancel request of it can land any more, closed otherwise.
    this.#ended = query.then(
      () => this.#own.endOwn(session, this.#verdict()),
      (error: unknown) =>
        this.#own.endOwn(session, this.#verdict(), sessionDied(error)),
    ).catch(() => {});
    return query;
  }

  #cancel(): void {
    if (this.#pending !== null && this.#cancelling === null && !this.#over) {
      this.#cancelling = this.#own.cancelOwn(this.#pending);
    }
  }

  /**
   * The statement ended: no cancel request follows (those not yet sent are
   * not sent), and whether its session is reused is decided now.
   */
  #verdict(): boolean {
    this.#over = true;
    this.#cancelling?.end();
    return reusableAfterStop(this.#cancelling);
  }

  /** The call's stop: its timeout, the driver closing, or `caller`'s cancel. */
  stop(caller: AbortSignal): void {
    this.#stopped.abort();
    // Its timeout, or the driver closing (`options.signal` aborted, the
    // caller's not): stopped now.
    if (!caller.aborted) return this.#cancel();
    // A cancelled call (its client left) lets its catalog statement end
    // (it ends at its deadline and the net at the latest); its session
    // is reused only if no cancel request was sent, so one sent after
    // it ended would have closed it. The pools hold it until it ends:
    // cancelled at its own timeout, so a client leaving cannot hold one
    // of this pool's two sessions for longer, or when the driver
    // closes. The call itself fails as cancelled at once — waiting for
    // the statement, it ended after the stop's grace as a lost session,
    // and the connection counted as lost (outsider stop48).
    if (this.#ended !== null) {
      this.#own.linger(
        this.#ended,
        this.#deadline - Date.now(),
        () => this.#cancel(),
      );
    }
    this.#abandon(new DbError("cancelled", "the request was cancelled"));
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
