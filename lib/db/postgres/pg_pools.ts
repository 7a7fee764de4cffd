/**
 * A PostgreSQL driver's two pools: the reads' (wired where it can be, and
 * replaced whole when one of its sessions is lost while reserved) and
 * dbport's own statements' (the catalog, a statement's vetting), whose
 * reads are never wired — each own statement runs on a session reserved
 * for it alone (pg_own.ts); their sockets are `wired` only so that dbport
 * can close one session (pg_session.ts `closeSession`) for which a cancel
 * request may still land.
 *
 * @module
 */

import { Buffer } from "node:buffer";
import { connect as tcpConnect } from "node:net";
import { connectReading } from "./pg_socket_reads.ts";
import postgres from "postgres";
import {
  CONNECT_TIMEOUT_SECONDS,
  type PostgresConfig,
  postgresOptions,
  reopenDelay,
} from "./pg_options.ts";
import { sessionAttrs } from "./pg_session_attrs.ts";
import { urlForPostgresJs, urlQuery } from "../pg_url_params.ts";
import { startupOptionsRefusal } from "../pg_settings.ts";
import { toDbError } from "./pg_errors.ts";
import {
  askingAgain,
  type Cancellable,
  cancelRequests,
  closeSession,
  poolRetired,
  requeueWaiters,
  reserveSession,
  retirePool,
} from "./pg_session.ts";
import { DbError } from "../errors.ts";
import { formatSeconds, notStarted } from "../stoppable.ts";
import { type Alarm, alarm } from "../../base/alarms.ts";
import { thrown } from "../../base/thrown.ts";
import { wired } from "./pg_wire.ts";
import { type Cancelling, cancelWhileRunning } from "./pg_cancel.ts";
import { wireTarget } from "./pg_wired.ts";
import {
  checkedRole,
  followStartup,
  HostPicker,
  severalHosts,
} from "./pg_hosts.ts";
import {
  clientCertRefusal,
  openingSafely,
  secured,
  tlsPlan,
  uncheckedCa,
  withoutOwnTlsParams,
} from "./pg_tls.ts";
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
  /** Sessions of the own pool held by statements (`reserveOwn`). */
  #ownHeld = 0;
  /** Who waits for a socket of the own pool to close (`reserveOwn`). */
  readonly #ownClosing: ((opened: number) => void)[] = [];
  /** Sockets of the own pool opened so far (`#nextOwnClose`). */
  #ownOpened = 0;
  /** Calls waiting for one (`#ownSlot`), first first. */
  readonly #ownWaiting: (() => void)[] = [];
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
    // target_session_attrs is dbport's to read (pg_session_attrs.ts).
    const attrs = sessionAttrs(given.url);
    const config: PostgresConfig = {
      ...given,
      url: attrs.url,
      targetSessionAttrs: attrs.attrs,
    };
    const options = postgres(config.url, postgresOptions(config))
      .options as never;
    // A plain TCP socket, or the tunnel's: null for a Unix socket, which
    // postgres.js opens itself. Under TLS dbport negotiates on it itself
    // (pg_tls.ts) and gives postgres.js the clear side.
    const tlsNeeds = tlsPlan(config.url, options);
    // Several hosts: dbport tries them (pg_hosts.ts) and gives postgres.js
    // the first that connects as its only host — its own rotation ignores
    // every connect error while a next host exists, and never stops. TLS
    // there is still postgres.js's to negotiate, over that socket
    // (`tlsPlan`: undefined), whose bytes dbport then cannot read.
    const hosts = severalHosts(config.socket, options, config.url);
    const picker = hosts === null
      ? null
      : new HostPicker(hosts, attrs.hosts, tlsNeeds !== undefined);
    const target = tlsNeeds === undefined || picker !== null
      ? null
      : wireTarget(config.socket, options);
    // A tunnel's socket that cannot be opened fails as a socket, never as
    // a throw (pg_tls.ts `openingSafely`); so does a list of hosts none of
    // which connects.
    const raw = picker !== null
      ? openingSafely(picker.open)
      : target === null
      ? null
      : config.socket === undefined
      ? () =>
        Promise.resolve(
          // In clear, read into a buffer of the socket's own
          // (pg_socket_reads.ts); under TLS the TLS socket reads it.
          tlsNeeds === null
            ? connectReading(target.port, target.host)
            : tcpConnect(target.port, target.host).setNoDelay(true),
        )
      : openingSafely(config.socket);
    const ownTls = raw !== null && tlsNeeds !== null &&
      tlsNeeds !== undefined;
    const clear = raw === null || !ownTls
      ? raw
      : secured(raw, tlsNeeds!, this.#stopping.signal);
    // One host and a target_session_attrs: checked on the clear bytes, so
    // that a server of the other role is named (pg_hosts.ts `checkedRole`).
    const open = picker === null && clear !== null && attrs.attrs != null
      ? checkedRole(clear, attrs.attrs)
      : clear;
    // postgres.js negotiates TLS on the socket dbport gave it: its bytes
    // are not clear, and it replaces the socket's listeners with its TLS
    // socket's (connection.js `secure`): neither wired nor watched.
    const opaque = picker !== null && tlsNeeds === undefined;
    // postgres.js's URL: without what it would pass on as a startup
    // parameter, and told not to negotiate TLS on a socket that has it.
    // Where postgres.js would negotiate TLS itself, a CA the URL names
    // would go unchecked: refused (pg_tls.ts `uncheckedCa`).
    // So would a client certificate (or TLS turned off under it): refused,
    // never a session without it (pg_tls.ts `clientCertRefusal`).
    const unchecked = tlsNeeds === undefined ? uncheckedCa(config.url) : null;
    // Thrown as the connect errors they are (an Error of no kind was an
    // internal error to a client), redacted.
    if (unchecked !== null) throw toDbError(unchecked, config.secrets);
    const noCert = clientCertRefusal(config.url, ownTls);
    if (noCert !== null) throw toDbError(noCert, config.secrets);
    // The URL's `options` may set only what a statement may (pg_settings.ts).
    const startup = urlQuery(config.url).get("options");
    const switches = startup === null ? null : startupOptionsRefusal(startup);
    if (switches !== null) throw toDbError(switches, config.secrets);
    // Only what postgres.js reads as its own options: any other parameter
    // would reach the server as a start-up setting over dbport's
    // (pg_url_params.ts; outsider stop 56).
    const url = urlForPostgresJs(
      ownTls ? withoutOwnTlsParams(config.url) : config.url,
    );
    const optionsOf = (socket?: () => Promise<Duplex>) => ({
      ...postgresOptions(config, socket),
      ...(ownTls ? { ssl: false as const } : {}),
      // One host: postgres.js's error suppression needs a next one. (The
      // typings say string; postgres.js takes a list: pg_options.ts.)
      ...(picker === null ? {} : {
        host: [picker.first.host] as unknown as string,
        port: [picker.first.port] as unknown as number,
        // The picker bounds each host's connect and startup itself
        // (pg_hosts.ts `HostPicker#bound`), naming the hosts; postgres.js's
        // own timeout, which names none, is only a backstop behind it.
        connect_timeout: CONNECT_TIMEOUT_SECONDS + 1,
      }),
    });
    // Reads speak the protocol themselves on a wired socket (pg_read.ts),
    // which needs the session's bytes in clear: TLS's clear side.
    const wiredReads = config.wiredReads ?? Deno.env.get(WIRE_ENV) !== "0";
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
        backoff: noWaitOnceRefused(() => poolRetired(pool) || ended.has(pool)),
      });
      return pool;
    };
    this.sql = this.#create();
    this.#unwatched = open === null || opaque;
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
      backoff: noWaitOnceRefused(() => this.#closed || ended.has(meta)),
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
    this.meta = meta;
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
   * the wait (pg_session.ts `requeueWaiters`).
   */
  async reserveOwn(
    signal: AbortSignal,
    withinMs: number,
  ): Promise<OwnSession> {
    await this.#ownSlot(signal, withinMs);
    try {
      return await askingAgain(
        (leftMs) => reserveSession(this.meta, signal, withinMs, leftMs),
        withinMs,
      );
    } catch (error) {
      this.#freeOwnSlot();
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
   * One of the own pool's sessions for a statement, counted by dbport: a
   * call waits here, not in postgres.js, when both are held. postgres.js
   * then has a session open or to open for each `reserve()`, which it
   * serves at once: one left waiting in postgres.js when a session closes
   * is refused and asked again (pg_session.ts `requeueWaiters`), and the
   * refused one, still in postgres.js's queue, reopened a session later
   * for nobody (a session of dbport's back right after an administrator
   * ended them all: outsider stop 47's test).
   */
  #ownSlot(signal: AbortSignal, withinMs: number): Promise<void> {
    if (signal.aborted) return Promise.reject(notStarted());
    if (this.#ownHeld < OWN_SESSIONS) {
      this.#ownHeld++;
      return Promise.resolve();
    }
    return new Promise((resolve, reject) => {
      const take = () => {
        done();
        this.#ownHeld++;
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
        const at = this.#ownWaiting.indexOf(take);
        if (at >= 0) this.#ownWaiting.splice(at, 1);
      };
      signal.addEventListener("abort", onAbort, { once: true });
      this.#ownWaiting.push(take);
    });
  }

  /** A session of the own pool given back or closed: the next call's. */
  #freeOwnSlot(): void {
    this.#ownHeld--;
    this.#ownWaiting[0]?.();
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
      this.#freeOwnSlot();
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

/** The own pool's sessions (postgres.js's `max` for it). */
const OWN_SESSIONS = 2;

/** A catalog call that got no own session within its timeout. */
const OWN_WAIT_TIMEOUT = (ms: number) =>
  `the statement timeout of ${
    formatSeconds(ms)
  } ran out while dbport's catalog statement waited for a database session: it was not started`;

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

/** Pools being ended or ended: they open no session more. */
const ended = new WeakSet<object>();

/**
 * End `pool`, giving its statements `seconds`; settles once it ended. From
 * the start it opens no socket: its calls were stopped (and their cancel
 * requests sent) before, and postgres.js, reopening a session for a queued
 * item while it ends, otherwise left that session's timers running after
 * the driver closed.
 */
function endPool(pool: Sql, seconds: number): Promise<void> {
  ended.add(pool);
  return pool.end({ timeout: seconds }).catch(() => {});
}

/** The sockets `untilEnded` opens and opened for one pool. */
interface PoolSockets {
  /** Opened and not closed yet. */
  readonly live: Set<Duplex>;
  /** Being opened. */
  opening: number;
  /** Who waits for none to be open or opening (`socketsGone`). */
  readonly waiting: (() => void)[];
  /** Wake who waits, once none is open or opening. */
  settle(): void;
}

const poolSockets = new WeakMap<object, PoolSockets>();

function socketsOf(pool: object): PoolSockets {
  let sockets = poolSockets.get(pool);
  if (sockets === undefined) {
    const made: PoolSockets = {
      live: new Set(),
      opening: 0,
      waiting: [],
      settle() {
        if (made.live.size > 0 || made.opening > 0) return;
        for (const resolve of made.waiting.splice(0)) resolve();
      },
    };
    sockets = made;
    poolSockets.set(pool, sockets);
  }
  return sockets;
}

/**
 * Settles once no socket of `pool` is open or being opened (or after
 * `ms`), and the turn after: a session postgres.js opened as its pool was
 * replaced is refused at its first write (`cancelsOnly`) and closes a tick
 * later, its connect and lifetime timers running until then; its close
 * schedules the next queued `reserve()`'s reconnection, at once
 * (`noWaitOnceRefused`), which an ended pool refuses without a socket.
 */
async function socketsGone(pool: object, ms: number): Promise<void> {
  const sockets = socketsOf(pool);
  if (sockets.live.size > 0 || sockets.opening > 0) {
    let timer: ReturnType<typeof setTimeout> | undefined;
    await new Promise<void>((resolve) => {
      sockets.waiting.push(resolve);
      timer = setTimeout(resolve, ms);
    });
    clearTimeout(timer);
  }
  await new Promise((resolve) => setTimeout(resolve, 0));
}

/**
 * postgres.js's backoff (pg_options.ts `reopenDelay`), none once
 * `refusing()` (the pool replaced, or the driver closing): every session it
 * opens then is refused at its first write (`untilEnded`), so it waits for
 * nothing. postgres.js reopens a closed session for the next `reserve()`
 * queued in the pool after its backoff — up to 1 s after sessions closed
 * with errors — on a timer that the pool's `end()` does not clear: reads
 * asked again while a lost session replaced the pool had queued
 * `reserve()`s in it, and those timers ran on past the driver's close
 * (session_gone_test's replaced pool on a loaded CI machine: "a timer was
 * started in this test, but never completed"). Without the wait, what the
 * pool still holds is refused within a few turns of the event loop.
 */
function noWaitOnceRefused(
  refusing: () => boolean,
): (retries: number) => number {
  return (retries) => refusing() ? 0 : reopenDelay(retries);
}

/**
 * `open`, refused once the pool `pool()` names starts ending (`endPool`), and from when
 * `refusing()` says (its reads' pool retired, the driver closing) good for a
 * cancel request alone. postgres.js reconnects an ending or ended pool's
 * session for a statement or a `reserve()` it still holds — one dbport
 * refused (pg_session.ts `retirePool`), or a catalog statement queued as
 * the driver closed — and that session then idled for the idle timeout
 * after the driver was closed (tests/db/outsider_stop46_test.ts). A cancel
 * request, which postgres.js sends on a socket of its own, still goes out
 * until the pool starts ending. Undefined where postgres.js opens its own
 * sockets (a Unix socket).
 */
function untilEnded(
  pool: () => Sql,
  open: (() => Promise<Duplex>) | undefined,
  refusing: () => boolean,
  failure?: () => Error | null,
): (() => Promise<Duplex>) | undefined {
  if (open === undefined) return undefined;
  return async () => {
    if (ended.has(pool())) throw poolEnded();
    const sockets = socketsOf(pool());
    sockets.opening++;
    let socket: Duplex;
    try {
      socket = await open();
    } finally {
      sockets.opening--;
    }
    sockets.live.add(socket);
    socket.once("close", () => {
      sockets.live.delete(socket);
      sockets.settle();
    });
    sockets.settle();
    // Opened while the pool started ending (several hosts tried in turn,
    // a tunnel): refused, and closed, never handed to it.
    if (ended.has(pool())) {
      socket.destroy();
      throw poolEnded();
    }
    // A session that closes while reads wait for one — the server or an
    // administrator ended it, even one dbport held for its cancel request's
    // delivery — is reopened by postgres.js for the first waiting
    // `reserve()`, which it then forgets (pg_session.ts `requeueWaiters`):
    // once postgres.js has seen the close, every waiting read asks again
    // (outsider stop 49b: a read waited its whole timeout with three of
    // the pool's sessions idle).
    // (A microtask: it runs once the close event's other listeners —
    // postgres.js's own — have run; a timer would outlive a closed driver.)
    // Where the socket's hosts could not be used at all (every host of a
    // several-host URL down, or none matching), the waiting reads fail
    // with that rather than ask again until their timeout.
    socket.once("close", () => {
      queueMicrotask(() => requeueWaiters(pool(), failure?.() ?? undefined));
    });
    return refusing() ? cancelsOnly(socket) : socket;
  };
}

type Write = (chunk: unknown, ...rest: unknown[]) => boolean;
type Emit = (event: string | symbol, ...args: unknown[]) => boolean;

/** ReadyForQuery, idle: what postgres.js takes as a session ready. */
const READY_IDLE = Uint8Array.of(0x5a, 0, 0, 0, 5, 0x49);

/**
 * `socket`, a session of the own pool opened without postgres.js's array
 * types' query, on which postgres.js is told once more that the session is
 * ready right after the server's own first ReadyForQuery. postgres.js
 * 3.4.9 opening a session for a `reserve()` with `fetch_types` off drops
 * the `reserve()` at that first ReadyForQuery and leaves the session
 * connecting for good (connection.js `ReadyForQuery`: `initial = null`,
 * and nothing calls `onopen`); its second ReadyForQuery hands the session
 * to the first waiting `reserve()` (`onopen`). The own pool's sessions are
 * only ever opened for a `reserve()` (pg_own.ts), never for a statement
 * that the extra message would answer.
 */
function openedForReserve(
  socket: Duplex,
  typesSkipped: () => boolean,
): Duplex {
  // The socket's own emit: the injected message goes past the framing below.
  const emit = socket.emit.bind(socket) as Emit;
  // Decided as postgres.js starts the session: it reads `fetch_types` and
  // then, in the same turn, listens to the socket's data.
  let inject: boolean | null = null;
  type On = (event: string, listener: (...args: unknown[]) => void) => Duplex;
  const on = socket.on.bind(socket) as On;
  (socket as unknown as { on: On }).on = (event, listener) => {
    if (event === "data" && inject === null) inject = typesSkipped();
    return on(event, listener);
  };
  followStartup(socket, (type) => {
    if (type !== 0x5a) return false;
    // After postgres.js has read the server's own ReadyForQuery: the chunk
    // carrying it reaches postgres.js before this microtask runs.
    if (inject === true) {
      queueMicrotask(() => {
        if (!socket.destroyed) emit("data", Buffer.from(READY_IDLE));
      });
    }
    return true;
  });
  return socket;
}

/**
 * `socket`, closed with an error unless the first thing written on it is
 * the protocol's cancel request (postgres.js writes a session's startup
 * message, or a cancel request, first and alone).
 */
function cancelsOnly(socket: Duplex): Duplex {
  const write = socket.write.bind(socket) as Write;
  let first = true;
  (socket as unknown as { write: Write }).write = (chunk, ...rest) => {
    if (first) {
      first = false;
      if (!isCancelRequest(chunk)) {
        socket.destroy(poolEnded());
        return false;
      }
    }
    return write(chunk, ...rest);
  };
  return socket;
}

/** Whether `chunk` is a cancel request: length 16, code 80877102. */
function isCancelRequest(chunk: unknown): boolean {
  if (!(chunk instanceof Uint8Array) || chunk.length !== 16) return false;
  const view = new DataView(chunk.buffer, chunk.byteOffset, 16);
  return view.getInt32(0) === 16 && view.getInt32(4) === 80877102;
}

function poolEnded(): Error {
  return Object.assign(
    new Error("the connection's pool was replaced or closed"),
    { code: "CONNECTION_ENDED" },
  );
}
