/**
 * The sockets of a URL that names several hosts (`h1:5432,h2:5432`), opened
 * by dbport rather than by postgres.js. postgres.js 3.4.9 rotates such a
 * list itself and ignores every connect error while a next host exists
 * (connection.js `error`: its `retries` never grows): with every host down a
 * call waited out its whole timeout and, once the driver was closed,
 * postgres.js went on connecting ~117 times a second for ever; a
 * `target_session_attrs` no host matched opened and ended sessions in a
 * loop (421 in one 30 s call, ~16 a second after the driver closed).
 *
 * Here postgres.js is given one host and this factory (pg_pools.ts, through
 * its `untilEnded` and `openingSafely` wrappers): the hosts are tried in the
 * URL's order (libpq's default), and the first that connects is the
 * session's. A host with another left to try has {@linkcode HOST_READY_MS}
 * to connect and become ready (libpq's `connect_timeout` is per host), the
 * last the connect timeout (`#bound`): a host that took the connection and
 * never answered held every call for the whole connect timeout, naming no
 * host, and the next host was never tried (outsider stop 54). Every host
 * down or silent fails the session, naming what each host said, and the
 * calls waiting for a session with it (pg_pool_sockets.ts `untilEnded`). A host
 * whose session ended, or did not become ready in time, is tried last for
 * {@linkcode DOWN_MS}: libpq moves on to the next host then too.
 *
 * `target_session_attrs` (pg_session_attrs.ts) is checked here on a socket
 * in clear: the server's `in_hot_standby` (ParameterStatus, PostgreSQL 14+)
 * is read as it passes; a host that does not match ends that session before
 * postgres.js sees it ready, is remembered as not matching for
 * {@linkcode UNFIT_MS}, and the failed call is asked again (pg_ask_again.ts
 * `askingAgain`) — the next attempt starts at the next host. No host left
 * that matches fails the call at once ("no host of the URL is a primary");
 * `prefer-standby` then takes the first host that connects (libpq's
 * fallback). Under TLS that postgres.js negotiates itself over the socket
 * (several hosts: pg_tls_plan.ts `tlsPlan`) the bytes are not readable: `primary`
 * and `standby` are then postgres.js's own check, which with one host fails
 * a mismatched session (bounded) without moving to the next host.
 *
 * A cancel request goes to the host whose session it names: the factory
 * knows each backend's host from its BackendKeyData (in clear).
 *
 * A URL of one host is checked on its startup by pg_startup.ts
 * `checkedRole`, whose reader (`followStartup`) the picker follows its
 * sessions with too.
 *
 * @module
 */

import { connect as tcpConnect, type Socket } from "node:net";
import { connectReading } from "./pg_socket_reads.ts";
import type { Duplex } from "node:stream";
import { alarm } from "../../base/alarms.ts";
import { CONNECT_TIMEOUT_SECONDS } from "./pg_options.ts";
import type { HostAttrs } from "./pg_session_attrs.ts";
import { askAgain } from "./pg_ask_again.ts";
import { hostList } from "../target.ts";
import { followStartup } from "./pg_startup.ts";

/** One host of the URL. */
export interface Host {
  host: string;
  port: number;
}

/**
 * How long a host whose session did not match `target_session_attrs` is
 * passed over: longer than one call's attempts, short enough that a
 * failover is seen within seconds.
 */
export const UNFIT_MS = 5_000;

/**
 * How long a host whose session ended, or did not become ready, before it
 * was ready is tried after the others: longer than a call's timeout, so
 * that two hosts that failed do not take turns being first (outsider stop
 * 54: with two silent hosts before the answering one, no call answered).
 */
export const DOWN_MS = 30_000;

/**
 * How long a host that is not the last left to try has to connect and
 * become ready (TCP, TLS's first byte or the startup through
 * ReadyForQuery) before the next host is tried in the same call: libpq's
 * `connect_timeout` is per host, and a host that takes the connection and
 * never answers held every call for the whole connect timeout (outsider
 * stop 54). The last host left has the connect timeout.
 */
export const HOST_READY_MS = 4_000;

/**
 * How long a failed attempt (`failure`) fails the calls waiting for a
 * session: the sockets it fails close within a turn or two.
 */
const FAILURE_FRESH_MS = 1_000;

/**
 * The URL's hosts when they are several and TCP (no SSH tunnel, no Unix
 * socket), from the options postgres.js read; null otherwise.
 */
export function severalHosts(
  tunnel: unknown,
  options: { path?: unknown; host?: string[]; port?: number[] },
  url?: string,
): Host[] | null {
  if (tunnel !== undefined || options.path) return null;
  const hosts = options.host ?? [];
  if (hosts.length < 2) return null;
  // Read from the URL where it can be (target.ts `hostList`): postgres.js
  // splits each entry at its first ":", which breaks an IPv6 literal
  // (`[::1]:5432,h2:5433`).
  const listed = url === undefined ? null : hostList(url, 5432);
  if (listed !== null && listed.hosts.length === hosts.length) {
    return listed.hosts.map(({ host, port }) => ({ host, port }));
  }
  return hosts.map((host, i) => ({ host, port: options.port?.[i] ?? 5432 }));
}

type Emit = (event: string | symbol, ...args: unknown[]) => boolean;
type Write = (chunk: unknown, ...rest: unknown[]) => boolean;

/** The factory of one connection's sockets over several hosts. */
export class HostPicker {
  readonly #hosts: readonly Host[];
  readonly #want: HostAttrs;
  /** Whether the session's bytes pass in clear (no postgres.js TLS). */
  readonly #clear: boolean;
  /** Hosts found not matching, until when (performance.now()). */
  readonly #unfit = new Map<number, number>();
  /**
   * Hosts whose session closed before it was ready (the server refused it,
   * or something that is no server took the connection), until when:
   * tried after the others, as libpq moves on to the next host.
   */
  readonly #down = new Map<number, number>();
  /** Each open session's host, by its backend's pid (cancel requests). */
  readonly #backends = new Map<number, number>();
  /** Why the latest `open` failed; null once one succeeded. */
  #failed: Error | null = null;
  /** When `#failed` was set (performance.now()). */
  #failedAt = 0;
  /**
   * Hosts that failed in the current round of attempts, by when: tried
   * again once every host was (or a session was ready).
   */
  readonly #tried = new Map<number, number>();
  /** Sockets ended for not becoming ready in time (`#bound`). */
  readonly #timedOut = new WeakSet<Socket>();
  /** Why each host last failed (the failure naming every host). */
  readonly #why = new Map<number, string>();
  /** Connect timeout of the last host left to try, in ms. */
  readonly #connectMs: number;
  /** Connect timeout of a host with another left to try, in ms. */
  readonly #hostMs: number;

  constructor(
    hosts: readonly Host[],
    want: HostAttrs,
    clear: boolean,
    connectMs = CONNECT_TIMEOUT_SECONDS * 1000,
    hostMs = Math.min(HOST_READY_MS, connectMs),
  ) {
    this.#hosts = hosts;
    this.#want = clear ? want : null;
    this.#clear = clear;
    this.#connectMs = connectMs;
    this.#hostMs = hostMs;
  }

  /** The host postgres.js is told of (its messages, its TLS's defaults). */
  get first(): Host {
    return this.#hosts[0]!;
  }

  /**
   * Why the latest attempt found no host to use (every host down, or none
   * matching), or null: what the calls waiting for a session then fail with
   * (pg_pool_sockets.ts `untilEnded`).
   */
  failure = (): Error | null =>
    performance.now() - this.#failedAt < FAILURE_FRESH_MS ? this.#failed : null;

  /**
   * A socket to the first host that connects, in the URL's order, passing
   * over those found not matching; throws when none connects (or none is
   * left that may match), naming each host and why.
   */
  open = async (): Promise<Duplex> => {
    try {
      const socket = await this.#open();
      this.#failed = null;
      return socket;
    } catch (error) {
      this.#failed = error as Error;
      this.#failedAt = performance.now();
      throw error;
    }
  };

  async #open(): Promise<Duplex> {
    // Every host just failed: what postgres.js still has queued (reads
    // asked again, their first `reserve()`s) fails with that at once rather
    // than start another round on hosts that do not answer.
    const fresh = this.failure();
    if (fresh !== null) throw fresh;
    const now = performance.now();
    const fit = this.#hosts.map((_, i) => i).filter((i) =>
      (this.#unfit.get(i) ?? 0) <= now
    );
    const down = (i: number) => (this.#down.get(i) ?? 0) > now;
    // Hosts that failed lately go last, the one that failed longest ago
    // first among them: two that failed do not keep the same order.
    let order = [
      ...fit.filter((i) => !down(i)),
      ...fit.filter((i) => down(i)).sort((a, b) =>
        this.#down.get(a)! - this.#down.get(b)!
      ),
    ];
    let check = this.#want !== null;
    if (order.length === 0) {
      if (this.#want !== "prefer-standby") throw this.#noMatch([]);
      // libpq's prefer-standby: no standby answered, any host will do.
      order = this.#hosts.map((_, i) => i);
      check = false;
    }
    // A host that failed in this round of attempts (a session that timed
    // out or ended before it was ready, postgres.js then opening it again)
    // is not tried again until every host was: libpq's round of the hosts.
    const tried = this.#triedNow();
    const untried = order.filter((i) => !tried.has(i));
    if (untried.length === 0) this.#tried.clear();
    else order = untried;
    const failures: string[] = [];
    const allDown = order.every(down);
    for (const [k, i] of order.entries()) {
      const host = this.#hosts[i]!;
      // Another host left to try that has not failed lately: this one has
      // `#hostMs` to become ready (libpq's per-host connect_timeout), then
      // the next is tried in the same call. The last has the whole connect
      // timeout. (Every host failed lately: each is tried again, in turn.)
      const last = k === order.length - 1 ||
        (!allDown && !order.slice(k + 1).some((j) => !down(j)));
      const ms = last ? this.#connectMs : this.#hostMs;
      const deadline = performance.now() + ms;
      try {
        const socket = await connectTo(host, ms, this.#clear);
        // As postgres.js sets them on a socket it opens: its own TLS takes
        // the server name from `socket.host` (connection.js `secure`).
        Object.assign(socket, { host: host.host, port: host.port });
        this.#bound(socket, i, deadline, ms, last);
        if (this.#clear) this.#follow(socket, i, check);
        return socket;
      } catch (error) {
        this.#why.set(i, reason(error));
        this.#tried.set(i, performance.now());
        failures.push(`${named(host)} (${reason(error)})`);
      }
    }
    // Hosts that failed earlier in this round are named too.
    const earlier = [...tried.keys()].filter((i) => !order.includes(i))
      .map((i) =>
        `${named(this.#hosts[i]!)} (${this.#why.get(i) ?? "failed"})`
      );
    this.#tried.clear();
    failures.unshift(...earlier);
    if (check && order.length < this.#hosts.length) {
      throw this.#noMatch(failures);
    }
    throw Object.assign(
      new Error(
        `no host of the URL accepted a connection: ${failures.join(", ")}`,
      ),
      { code: "ECONNREFUSED" },
    );
  }

  /** The hosts tried in the current round (`#tried`), by when. */
  #triedNow(): Map<number, number> {
    const since = performance.now() -
      (this.#hosts.length * this.#hostMs + this.#connectMs);
    for (const [i, at] of this.#tried) {
      if (at < since) this.#tried.delete(i);
    }
    return new Map(this.#tried);
  }

  /**
   * End `socket` (host `i`) unless its session is ready by `deadline`: the
   * host goes last for {@linkcode DOWN_MS}, and the session closes before
   * it was ready — postgres.js then opens the call's session again, on the
   * next host. When `last`, no other host is left to try: the session fails
   * with every host named and why (and so do the calls waiting for one).
   * In clear, ready is the server's first ReadyForQuery; under
   * postgres.js's own TLS (bytes dbport cannot read) the server's first
   * byte.
   */
  #bound(
    socket: Socket,
    i: number,
    deadline: number,
    ms: number,
    last: boolean,
  ): void {
    let ready = false;
    const timer = alarm(Math.max(0, deadline - performance.now()), () => {
      if (ready || socket.destroyed) return;
      const why = `no answer within ${Math.round(ms / 1000)} s`;
      this.#timedOut.add(socket);
      this.#why.set(i, why);
      this.#down.set(i, performance.now() + DOWN_MS);
      if (!last) {
        this.#tried.set(i, performance.now());
        // Closed before it was ready: postgres.js opens the call's session
        // again (connection.js `closed`: its `initial`), on the next host.
        socket.destroy();
        return;
      }
      this.#tried.clear();
      const error = Object.assign(
        new Error(
          `no host of the URL answered: ${
            this.#hosts.map((host, j) =>
              `${named(host)} (${
                j === i ? why : this.#why.get(j) ?? "not tried"
              })`
            ).join(", ")
          }`,
        ),
        { code: "ETIMEDOUT" },
      );
      this.#failed = error;
      this.#failedAt = performance.now();
      socket.destroy(error);
    });
    socket.once("close", () => timer.clear());
    const isReady = () => {
      ready = true;
      timer.clear();
    };
    // A cancel request's socket: the server answers it with nothing.
    const write = socket.write.bind(socket) as Write;
    let first = true;
    (socket as unknown as { write: Write }).write = (chunk, ...rest) => {
      if (first) {
        first = false;
        if (cancelPid(chunk) !== null) isReady();
      }
      return write(chunk, ...rest);
    };
    if (this.#clear) {
      followStartup(socket, (type) => {
        if (type !== 0x5a) return false; // ReadyForQuery
        isReady();
        return true;
      });
      return;
    }
    const emit = socket.emit.bind(socket) as Emit;
    (socket as unknown as { emit: Emit }).emit = (event, ...args) => {
      if (!ready && event === "data") isReady();
      return emit(event, ...args);
    };
  }

  /** No host that may match is left: the call's failure. */
  #noMatch(failures: string[]): Error {
    const now = performance.now();
    const unfit = this.#hosts.filter((_, i) => (this.#unfit.get(i) ?? 0) > now)
      .map(named);
    const kind = this.#want === "primary" ? "primary" : "standby";
    const parts = [
      ...(unfit.length > 0
        ? [
          `${unfit.join(", ")} ${
            unfit.length === 1 ? `is not a ${kind}` : `are not ${kind}s`
          }`,
        ]
        : []),
      ...failures,
    ];
    return Object.assign(
      new Error(
        `no host of the URL is a ${kind} (target_session_attrs=${
          this.#want === "primary" ? "primary/read-write" : "standby/read-only"
        })${parts.length > 0 ? `: ${parts.join("; ")}` : ""}`,
      ),
      { code: "ENOTARGET" },
    );
  }

  /**
   * Read the server's startup messages on `socket` (host `i`) up to its
   * first ReadyForQuery: the backend's key, and — when `check` — whether
   * `in_hot_standby` matches; a mismatch ends the session before
   * postgres.js reads it ready. Also routes a cancel request written first
   * on `socket` to the host of the backend it names.
   */
  #follow(socket: Socket, i: number, check: boolean): void {
    let done = false;
    let pid: number | null = null;
    let cancel = false;
    socket.once("close", () => {
      if (pid !== null && this.#backends.get(pid) === i) {
        this.#backends.delete(pid);
      }
      // A session that ended before it was ready, for any reason but its
      // host's role: that host goes last for a while.
      if (!done && !cancel) {
        this.#down.set(
          i,
          Math.max(this.#down.get(i) ?? 0, performance.now() + DOWN_MS),
        );
        if (!this.#timedOut.has(socket)) {
          this.#why.set(i, "closed before it was ready");
          this.#tried.set(i, performance.now());
        }
      }
    });
    const message = (type: number, bytes: Uint8Array): boolean => {
      if (type === 0x4b && bytes.length >= 8) { // BackendKeyData
        pid = new DataView(bytes.buffer, bytes.byteOffset, 8).getInt32(0);
        this.#backends.set(pid, i);
      } else if (type === 0x53 && check) { // ParameterStatus
        const [name, value] = new TextDecoder().decode(bytes).split("\0");
        if (name === "in_hot_standby") {
          const standby = value === "on";
          const fits = this.#want === "primary" ? !standby : standby;
          if (!fits) {
            this.#unfit.set(i, performance.now() + UNFIT_MS);
            return false;
          }
          this.#unfit.delete(i);
        }
      } else if (type === 0x5a) { // ReadyForQuery
        done = true;
        this.#down.delete(i);
        this.#why.delete(i);
        this.#tried.clear();
      }
      return true;
    };
    followStartup(socket, (type, bytes) => {
      if (!message(type, bytes)) {
        done = true;
        // Before postgres.js reads the session ready: its startup fails,
        // and the call asks again (the next host first).
        return askAgain(mismatch(this.#hosts[i]!, this.#want));
      }
      return done;
    });
    this.#routeCancel(socket, i, () => void (cancel = true));
  }

  /**
   * A cancel request written first on `socket` (host `i`) for a backend
   * of another host goes to that host instead, on a socket of its own;
   * `socket` closes once that one has (what the request's sender waits
   * for).
   */
  #routeCancel(socket: Socket, i: number, isCancel: () => void): void {
    const write = socket.write.bind(socket) as Write;
    let first = true;
    (socket as unknown as { write: Write }).write = (chunk, ...rest) => {
      if (!first) return write(chunk, ...rest);
      first = false;
      const pid = cancelPid(chunk);
      if (pid !== null) isCancel();
      const j = pid === null ? undefined : this.#backends.get(pid);
      if (j === undefined || j === i) return write(chunk, ...rest);
      const done = rest.find((item) => typeof item === "function") as
        | (() => void)
        | undefined;
      connectTo(this.#hosts[j]!, this.#connectMs).then((other) => {
        other.once("error", (error) => socket.destroy(error));
        other.once("close", () => socket.destroy());
        other.write(chunk as Uint8Array);
      }, (error) => socket.destroy(error));
      if (done !== undefined) queueMicrotask(done);
      return true;
    };
  }
}

/**
 * A TCP socket to `host`, once connected; fails after `ms`. `clear`: a
 * session's socket read in clear, into a buffer of its own
 * (pg_socket_reads.ts); under TLS the TLS socket reads it.
 */
function connectTo(host: Host, ms: number, clear = false): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = clear
      ? connectReading(host.port, host.host)
      : tcpConnect(host.port, host.host);
    const failed = (error: Error) => {
      timer.clear();
      socket.destroy();
      reject(error);
    };
    const timer = alarm(ms, () =>
      failed(Object.assign(
        new Error(`no answer within ${Math.round(ms / 1000)} s`),
        { code: "ETIMEDOUT" },
      )));
    socket.once("error", failed);
    socket.once("connect", () => {
      timer.clear();
      socket.off("error", failed);
      socket.setNoDelay(true);
      resolve(socket);
    });
  });
}

function named(host: Host): string {
  return `${host.host}:${host.port}`;
}

function reason(error: unknown): string {
  const code = (error as { code?: unknown })?.code;
  if (typeof code === "string") return code;
  return error instanceof Error ? error.message : String(error);
}

/** A session ended because its host does not match. */
function mismatch(host: Host, want: HostAttrs): Error {
  const kind = want === "primary" ? "a standby" : "a primary";
  return Object.assign(
    new Error(
      `${named(host)} is ${kind} (target_session_attrs): trying the next host`,
    ),
    { code: "ENOTARGET" },
  );
}

/** The pid a cancel request names (16 bytes, code 80877102), or null. */
function cancelPid(chunk: unknown): number | null {
  if (!(chunk instanceof Uint8Array) || chunk.length !== 16) return null;
  const view = new DataView(chunk.buffer, chunk.byteOffset, 16);
  if (view.getInt32(0) !== 16 || view.getInt32(4) !== 80877102) return null;
  return view.getInt32(8);
}
