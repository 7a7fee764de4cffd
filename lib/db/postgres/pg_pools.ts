/**
 * A PostgreSQL driver's two pools: the reads' (wired where it can be, and
 * replaced whole when one of its sessions is lost while reserved) and
 * dbport's own statements' (the catalog, a statement's vetting), whose
 * reads are never wired — each own statement runs on a session reserved
 * for it alone (pg_own.ts); their sockets are `wired` only so that dbport
 * can close one session (pg_session.ts `closeSession`) for which a cancel
 * request may still land.
 *
 * The route their sessions take to the server is decided in pg_route.ts;
 * the sockets they hand postgres.js are counted and refused in
 * pg_pool_sockets.ts.
 *
 * @module
 */

import postgres from "postgres";
import type { PostgresConfig } from "./pg_options.ts";
import { askingAgain } from "./pg_ask_again.ts";
import { type Cancellable, cancelRequests } from "./pg_stop_statement.ts";
import { closeSession } from "./pg_session.ts";
import { reserveSession } from "./pg_reserve.ts";
import { poolRetired, retirePool } from "./pg_retire.ts";
import { DbError } from "../errors.ts";
import { type Alarm, alarm } from "../../base/alarms.ts";
import { thrown } from "../../base/thrown.ts";
import { wired } from "./pg_wire.ts";
import { type Cancelling, cancelWhileRunning } from "./pg_cancel.ts";
import { OWN_SESSIONS, OwnSlots } from "./pg_own_slots.ts";
import { type PgRoute, pgRoute } from "./pg_route.ts";
import {
  endPool,
  hasEnded,
  noWaitOnceRefused,
  openedForReserve,
  socketsGone,
  untilEnded,
} from "./pg_pool_sockets.ts";
import type { Duplex } from "node:stream";

type Sql = ReturnType<typeof postgres>;

/** A session of the own pool, reserved for one statement (pg_own.ts). */
export type OwnSession = Awaited<ReturnType<Sql["reserve"]>>;

/** The environment variable that turns the wired reader off (`0`). */
export const WIRE_ENV = "DBPORT_PG_WIRE";

/** The pools of one PostgreSQL database. */
export class PgPools {
  /** The reads' pool now: callers read it at each call. */
  sql: Sql;
  /** dbport's own statements' pool (at most 2 sessions, never wired). */
  readonly meta: Sql;
  /**
   * A socket to the server in clear (TCP, the tunnel's channel, or TLS's
   * clear side: pg_tls.ts) for the protocol's cancel request; null when
   * reads take postgres.js's path (a Unix socket, several hosts under TLS
   * postgres.js negotiates, or the wired reader turned off).
   */
  readonly plainSocket: (() => Promise<Duplex>) | null;
  readonly #create: () => Sql;
  /** Pools replaced after a lost session, until they have ended. */
  readonly #retired = new Set<Sql>();
  /**
   * dbport's calls now running on each pool (`track`), each with the
   * controller `close` stops it by; a pool leaves the map once none runs.
   */
  readonly #calls = new Map<Sql, Set<AbortController>>();
  /** Sockets of dbport's own pool between their error and close. */
  readonly #dying = new Set<Duplex>();
  /** Who waits for `#dying` to empty (`ownSessionsSettled`). */
  readonly #ownQuiet: (() => void)[] = [];
  /** Whether postgres.js opens the own pool's sockets (not `#watch`ed). */
  readonly #unwatched: boolean;
  /** Who waits for a pool's calls to have settled (`#settled`). */
  readonly #quiet = new Map<Sql, (() => void)[]>();
  /**
   * Catalog statements of calls their callers cancelled, left to end
   * (`linger`): `close` cancels them.
   */
  readonly #lingering = new Set<
    { ended: Promise<unknown>; stop: () => void }
  >();
  /** The own pool's sessions held by statements (`reserveOwn`). */
  readonly #ownSlots = new OwnSlots();
  /** Who waits for a socket of the own pool to close (`reserveOwn`). */
  readonly #ownClosing: ((opened: number) => void)[] = [];
  /** Sockets of the own pool opened so far (`#nextOwnClose`). */
  #ownOpened = 0;
  /**
   * The sockets of cancel requests now out (pg_wired.ts `cancelRequest`):
   * `close` ends those still open once its calls settled.
   */
  readonly cancelSockets = new Set<Duplex>();
  /** Set by `close`: a pool lost after it is not replaced. */
  #closed = false;
  /**
   * Aborted by `close` before the pools end: what the TLS socket factory
   * still negotiates or reads (pg_tls.ts `secured`) ends with it.
   */
  readonly #stopping = new AbortController();
  /** The own pool's `fetch_types` as postgres.js last read it. */
  #typesRead = true;
  /** Whether `close` was called. */
  get closed(): boolean {
    return this.#closed;
  }

  constructor(given: PostgresConfig) {
    const route = pgRoute(given, this.#stopping.signal);
    const { open, opaque, picker, url, optionsOf } = route;
    // Reads speak the protocol themselves on a wired socket (pg_read.ts),
    // which needs the session's bytes in clear: TLS's clear side.
    const wiredReads = route.config.wiredReads ??
      Deno.env.get(WIRE_ENV) !== "0";
    this.plainSocket = wiredReads && !opaque ? open : null;
    const plain = this.plainSocket;
    const socket = plain === null
      ? open ?? undefined
      : async () => wired(await plain());
    this.#create = () => {
      const pool: Sql = postgres(url, {
        ...optionsOf(
          untilEnded(
            () => pool,
            socket,
            () => poolRetired(pool),
            picker?.failure,
          ),
        ),
        backoff: noWaitOnceRefused(() => poolRetired(pool) || hasEnded(pool)),
      });
      return pool;
    };
    this.sql = this.#create();
    this.#unwatched = open === null || opaque;
    this.meta = this.#ownPool(route);
  }

  /**
   * dbport's own statements' pool, on the route's sockets: each one watched
   * (`#watch`), counted as it opens and closes (`#nextOwnClose`), and told
   * it is ready when postgres.js skipped its array types' query
   * (`openedForReserve`).
   */
  #ownPool(route: PgRoute): Sql {
    const { open, opaque, picker, url, optionsOf } = route;
    // Wired (not counted as postgres.js's writes) so that one session can
    // be closed (`endOwn`); no read is ever lent one of them.
    const watched = open === null ? undefined : opaque ? open : async () => {
      const socket = this.#watch(wired(await open(), false));
      const opened = ++this.#ownOpened;
      socket.once("close", () => {
        for (const done of this.#ownClosing.slice()) done(opened);
      });
      // Whether postgres.js skips the array types' query on this session
      // is what it read as it started the session (`typesSkipped`), not
      // what the flag was when the socket was asked for: the first call's
      // end may turn it off in between (a slow TLS handshake or tunnel:
      // outsider stop 51).
      return openedForReserve(socket, () => this.#typesRead === false);
    };
    const meta: Sql = postgres(url, {
      ...optionsOf(
        untilEnded(() => meta, watched, () => this.#closed, picker?.failure),
      ),
      backoff: noWaitOnceRefused(() => this.#closed || hasEnded(meta)),
      max: OWN_SESSIONS,
    });
    // postgres.js reads `fetch_types` once per session it starts
    // (connection.js `connected`), then at once listens to its socket's
    // data: the value it read is kept for that socket (`openedForReserve`).
    let fetchTypes = true;
    Object.defineProperty(meta.options, "fetch_types", {
      configurable: true,
      enumerable: true,
      get: () => (this.#typesRead = fetchTypes),
      set: (value: boolean) => void (fetchTypes = value),
    });
    return meta;
  }

  /**
   * Watch a socket of dbport's own pool: from its error (or the peer's end)
   * to its close, postgres.js still hands its session out, and a statement
   * written to it then is never answered (postgres.js fails the statements
   * of a session closed with an error only when it saw the error first).
   */
  #watch(socket: Duplex): Duplex {
    const dying = () => this.#dying.add(socket);
    socket.once("error", dying);
    socket.once("end", dying);
    socket.once("close", () => {
      this.#dying.delete(socket);
      if (this.#dying.size > 0) return;
      for (const resolve of this.#ownQuiet.splice(0)) resolve();
    });
    return socket;
  }

  /**
   * Settles once no session of dbport's own pool is between its error and
   * its close in postgres.js (`#watch`): a statement sent again after a
   * session was found lost goes to another session then, or opens a new
   * one. Where postgres.js opens its own sockets (a Unix socket) or
   * negotiates TLS on them (several hosts) dbport cannot watch them: it waits
   * {@linkcode UNWATCHED_CLOSE_MS}, for the socket's close to come first.
   */
  async ownSessionsSettled(): Promise<void> {
    if (this.#unwatched) {
      return new Promise((resolve) => setTimeout(resolve, UNWATCHED_CLOSE_MS));
    }
    // The socket events already queued first: a session the server ended
    // with a message (57P01) failed the statement before its socket's end
    // was read (outsider stop48).
    await new Promise((resolve) => setTimeout(resolve, 0));
    if (this.#dying.size === 0) return;
    return new Promise((resolve) => this.#ownQuiet.push(resolve));
  }

  /**
   * Run one call of dbport's (a read, a write, an export; a catalog
   * statement on `meta`) on `pool`, counted as running on it until it
   * settles: a replaced pool is ended only once its calls settled
   * (`lostFrom`), and `close` stops them on the server. `work` gets the caller's options with a signal
   * that also aborts when the driver closes, so the call's own cancel path
   * runs — postgres.js's cancel request for a statement on its path, the
   * wired read's own (pg_read.ts `stop`) — and its error then says the
   * connection was closed.
   */
  async track<T, O extends { signal: AbortSignal }>(
    pool: Sql,
    options: O,
    work: (options: O) => Promise<T>,
  ): Promise<T> {
    // The caller's signal followed by hand: AbortSignal.any would tie a
    // signal to the caller's through weak references, for every read.
    const controller = new AbortController();
    const follow = () => controller.abort(options.signal.reason);
    if (options.signal.aborted) follow();
    else options.signal.addEventListener("abort", follow, { once: true });
    let calls = this.#calls.get(pool);
    if (calls === undefined) {
      calls = new Set();
      this.#calls.set(pool, calls);
    }
    calls.add(controller);
    // Begun while the driver closes: refused (the pools end without it).
    if (this.#closed) controller.abort(CLOSED_WHY);
    try {
      return await work({ ...options, signal: controller.signal });
    } catch (error) {
      if (!controller.signal.aborted || options.signal.aborted) throw error;
      throw closedUnder(error);
    } finally {
      options.signal.removeEventListener("abort", follow);
      calls.delete(controller);
      if (calls.size === 0) {
        this.#calls.delete(pool);
        for (const resolve of this.#quiet.get(pool) ?? []) resolve();
        this.#quiet.delete(pool);
      }
    }
  }

  /**
   * Hold a statement of dbport's own whose call its caller cancelled: it is
   * left to end rather than cancelled at once (postgres.ts `run`), is
   * cancelled when `ms` run out — its call's own deadline — and by `close`,
   * which waits for it as for a running call.
   */
  linger(ended: Promise<unknown>, ms: number, stop: () => void): void {
    if (this.#closed) {
      stop();
      return;
    }
    const lingering = { ended, stop };
    this.#lingering.add(lingering);
    const timer = alarm(Math.max(0, ms), stop);
    void ended.finally(() => {
      timer.clear();
      this.#lingering.delete(lingering);
    });
  }

  /**
   * Stop a statement of dbport's own (`meta`) by its cancel request, sent
   * again while the statement has not ended (pg_cancel.ts). Its session is
   * reused only if the requests are known to be spent (`endOwn`): a request
   * that arrived after the statement ended would stop whatever the session
   * ran next — another client's catalog call or vetting (outsider stops
   * 49b, 50).
   */
  cancelOwn(query: Lingering): Cancelling {
    return cancelWhileRunning(cancelRequests(query), query);
  }

  /**
   * A session of the own pool for one statement alone: postgres.js queues
   * and pipelines nothing else on a reserved session. Refused when `signal`
   * aborts (the call's stop) or `withinMs` runs out waiting (a timeout that
   * started nothing); asked again when a session of the pool closed under
   * the wait (pg_reserve.ts `requeueWaiters`).
   */
  async reserveOwn(
    signal: AbortSignal,
    withinMs: number,
  ): Promise<OwnSession> {
    await this.#ownSlots.take(signal, withinMs);
    try {
      return await askingAgain(
        (leftMs) => reserveSession(this.meta, signal, withinMs, leftMs),
        withinMs,
      );
    } catch (error) {
      this.#ownSlots.free();
      // A session that could not be opened: postgres.js keeps the failed
      // `reserve()` in its queue and opens a session for it once more
      // (index.js `reserve` queues it as well as connecting for it). The
      // call fails once that attempt's socket closed too, not before: its
      // reconnect timer would otherwise outlive a driver closed meanwhile.
      if (!(error instanceof DbError) && !this.#unwatched) {
        await this.#nextOwnClose(OWN_REOPEN_WAIT_MS);
      }
      throw error;
    }
  }

  /**
   * Settles once a socket of the own pool opened from now on closes, or
   * after `ms`.
   */
  #nextOwnClose(ms: number): Promise<void> {
    const after = this.#ownOpened;
    return new Promise((resolve) => {
      const done = (opened: number) => {
        if (opened <= after) return;
        end();
      };
      const end = () => {
        timer.clear();
        const at = this.#ownClosing.indexOf(done);
        if (at >= 0) this.#ownClosing.splice(at, 1);
        resolve();
      };
      const timer = alarm(ms, end);
      this.#ownClosing.push(done);
    });
  }

  /**
   * The end of an own statement's session once the statement ended: given
   * back when `reusable` (no cancel request was sent for it:
   * pg_cancel.ts `reusableAfterStop`), closed otherwise — its socket
   * destroyed under postgres.js (pg_session.ts `closeSession`), or where
   * postgres.js opened it itself (a Unix socket; several hosts under TLS) the backend
   * ended from within (`pg_terminate_backend` of its own pid, sent again
   * should a late request stop it: each request stops at most once). A
   * session that `died` is neither: postgres.js saw it close.
   */
  async endOwn(
    session: OwnSession,
    reusable: boolean,
    died = false,
  ): Promise<void> {
    try {
      await this.#endOwn(session, reusable, died);
    } finally {
      this.#ownSlots.free();
    }
  }

  async #endOwn(
    session: OwnSession,
    reusable: boolean,
    died: boolean,
  ): Promise<void> {
    if (died) return;
    // The session answered: postgres.js learnt the array types on it
    // (`fetch_types`, into the pool's shared parsers). A session it opens
    // again (one closed here) does not ask again: that query names
    // pg_catalog, and while another session held a lock on pg_namespace
    // (a catalog DDL, VACUUM FULL) the reopened session waited behind it
    // before its statement could start — or be stopped.
    // Not where postgres.js opens the own sessions itself (a Unix socket,
    // several hosts under its TLS): no `openedForReserve` on them, and a `reserve()` it
    // opens a session for with the flag off is dropped (outsider stop 51).
    if (!this.#unwatched) {
      (this.meta.options as { fetch_types?: boolean }).fetch_types = false;
    }
    if (reusable) return session.release();
    if (await closeSession(session)) return;
    for (let tries = 0; tries < OWN_END_TRIES; tries++) {
      const code = await session.unsafe(
        "select pg_terminate_backend(pg_backend_pid())",
      ).then(() => "", (error: unknown) => thrown(error).code);
      if (code !== "57014") return;
    }
  }

  /** Settles once no call of dbport's runs on `pool` (`track`). */
  #settled(pool: Sql): Promise<void> {
    if (!this.#calls.has(pool)) return Promise.resolve();
    return new Promise((resolve) => {
      const waiting = this.#quiet.get(pool) ?? [];
      waiting.push(resolve);
      this.#quiet.set(pool, waiting);
    });
  }

  /**
   * What replaces `pool` after it lost a session while reserved; a session
   * of a pool already replaced changes nothing (it would end the healthy
   * one).
   */
  lostFrom(pool: Sql): () => void {
    return () => {
      // Once closed, nothing replaces it: a read that lost its session
      // while the driver closed put a fresh pool in its place, which then
      // answered reads of the closed driver and was never ended (its
      // sessions idled for the idle timeout).
      if (pool !== this.sql || this.#closed) return;
      this.sql = this.#create();
      this.#retired.add(pool);
      // Reads still waiting for one of its sessions fail now, not never
      // (asked again of the new pool); its parked sessions are back before
      // it ends. Reads running on its healthy sessions run to their own
      // end — their timeout and cancel still stop them — and the pool is
      // ended once they settled: postgres.js's `end({ timeout })` would
      // destroy a session whose statement still runs, with no cancel
      // request (the pool has ended: `untilEnded`), and the statement ran
      // on on the server (outsider stop47). What is still reserved then is
      // a lost session nobody holds: destroyed at once.
      // It stays retired (`close` waits for it) until its sockets closed:
      // postgres.js may still open one for a reserve() queued in it.
      void retirePool(pool).then(() => this.#settled(pool)).then(() =>
        endPool(pool, 0)
      ).then(() => socketsGone(pool, CLOSE_GRACE_MS))
        .finally(() => this.#retired.delete(pool));
    };
  }

  /**
   * Stop every call of dbport's still running on the server and end the
   * pools. A read still waiting for a session of the reads' pool fails at
   * once: postgres.js never settles a `reserve()` left waiting on a pool
   * that is ending (a driver closed after one call lost its session, while
   * another asked again: that read waited for ever). A running call is
   * aborted (`track`): its statement is cancelled on the server — the
   * cancel request goes out on a socket of its own, which `untilEnded`
   * allows until the pool starts ending — and given {@linkcode CLOSE_GRACE_MS}
   * to settle before the pools end; postgres.js's `end({ timeout })` alone
   * destroyed its session and left its statement running (outsider
   * stop47).
   */
  async close(): Promise<void> {
    this.#closed = true;
    // A parked session is reserved: postgres.js would wait for it to end.
    await retirePool(this.sql, "the connection was closed");
    const running = [
      ...[...this.#calls.keys()].map((pool) => this.#settled(pool)),
      ...[...this.#lingering].map((lingering) => lingering.ended),
    ];
    for (const calls of this.#calls.values()) {
      for (const call of calls) call.abort(CLOSED_WHY);
    }
    for (const lingering of this.#lingering) lingering.stop();
    let timer: Alarm | undefined;
    await Promise.race([
      Promise.all(running),
      new Promise<void>((resolve) => {
        timer = alarm(CLOSE_GRACE_MS, resolve);
      }),
    ]);
    timer?.clear();
    this.#stopping.abort();
    const pools = [this.sql, this.meta, ...this.#retired];
    await Promise.all(pools.map((pool) => endPool(pool, 1)));
    // Nothing of the pools outlives the close: their sockets closed, and
    // no reconnection of postgres.js's still waits on a timer.
    await Promise.all(
      pools.map((pool) => socketsGone(pool, CLOSE_GRACE_MS)),
    );
    for (const socket of this.cancelSockets) socket.destroy();
    this.cancelSockets.clear();
  }
}

/** A statement postgres.js runs: awaited, or cancelled on the server. */
type Lingering = PromiseLike<unknown> & Cancellable;

/**
 * How long a call whose own session could not be opened waits, at most,
 * for postgres.js's second attempt at it to close (`reserveOwn`).
 */
const OWN_REOPEN_WAIT_MS = 2_000;

/**
 * How many times a session of the own pool that must be closed but whose
 * socket postgres.js opened is asked to end its backend (`endOwn`): one
 * more than the cancel requests a stop sends at most (pg_cancel.ts).
 */
const OWN_END_TRIES = 8;

/** Why `close` stopped a call. */
const CLOSED_WHY = "the connection was closed";

/**
 * How long a statement of dbport's own is held before it is sent again when
 * the socket it met closed could not be watched (`ownSessionsSettled`).
 */
const UNWATCHED_CLOSE_MS = 50;

/** How long `close` waits for the calls it stopped to settle. */
const CLOSE_GRACE_MS = 2_000;

/**
 * A call's failure once `close` stopped it: it says the connection was
 * closed rather than that its request was cancelled.
 */
function closedUnder(error: unknown): unknown {
  if (!(error instanceof DbError) || error.kind !== "cancelled") return error;
  return new DbError(
    "connect",
    error.message.replace("the request was cancelled", CLOSED_WHY),
  );
}
