/**
 * The registry of running requests, keyed by principal and JSON-RPC id
 * (docs/wire.md "Request lifecycle", "Cancellation").
 *
 * Each entry owns an AbortController whose signal is the handler's one
 * signal: a cancellation, a revoked or paused token, a disconnect, the
 * shutdown and the request's {@linkcode Deadline} all abort it. The abort
 * reason says why the request ended, and the dispatcher turns it into the
 * right wire error (a timeout apart from a cancellation).
 *
 * @module
 */

import type { JsonRpcId } from "../protocol/jsonrpc.ts";
import { type Alarm, alarm } from "../base/alarms.ts";

/** Why a running request was stopped. */
export type StopReason =
  | "cancelled" // notifications/cancelled from its own principal
  | "revoked" // its token was revoked
  | "paused" // the user paused its token (the kill switch)
  | "deadline" // the handler deadline ran out
  | "disconnected" // the client went away
  | "shutdown"; // the server is stopping

/** The abort reason carried by an entry's signal. */
export class RequestStopped extends Error {
  override name = "RequestStopped";
  readonly reason: StopReason;
  constructor(reason: StopReason) {
    super(`Request stopped: ${reason}`);
    this.reason = reason;
  }
}

/**
 * A handler deadline: it aborts the request's controller with
 * `RequestStopped("deadline")` at `at` (epoch ms), from which what remains is
 * derived where an engine needs a number (its statement timeout), so the
 * deadline travels in the one signal and never as a second number.
 *
 * It aborts the request's own controller rather than joining a signal of
 * its own with `AbortSignal.any`: that costs 20-36 µs a request in Deno 2
 * (its dependent signals are weakly held) against about 1 µs for the same
 * one signal this way. And unlike `AbortSignal.timeout`, its timer is
 * cleared when the request ends: a finished request holds no timer for the
 * rest of the 330 s.
 */
export class Deadline {
  readonly #alarm: Alarm;
  /** When it runs out, in `Date.now()`'s clock. */
  readonly at: number;

  constructor(ms: number, controller: AbortController) {
    this.at = Date.now() + ms;
    this.#alarm = alarm(
      ms,
      () => controller.abort(new RequestStopped("deadline")),
    );
  }

  /** The request ended: the deadline no longer runs. */
  clear(): void {
    this.#alarm.clear();
  }
}

/** One running request. */
export interface InFlightEntry {
  readonly principalKey: string;
  readonly id: JsonRpcId;
  readonly controller: AbortController;
}

/**
 * Every running request of this server. Several requests of one principal
 * may share an id: clients that share a token (every stdio client shares the
 * bridge's) each number their requests from 0, and nothing in the stateless
 * era makes ids unique across them (docs/wire.md "Request ids"). A
 * `notifications/cancelled` from a principal stops each of its running
 * requests with that id; the bridge gives every request it forwards an id of
 * its own, so a stdio client's cancellation reaches only its own request.
 */
export class InFlightRegistry {
  // By principal, then by id (a Map keeps id 1 and id "1" apart): no key
  // text is built for each request. Usually one entry per id.
  readonly #entries = new Map<string, Map<JsonRpcId, InFlightEntry[]>>();
  #size = 0;
  #idle: (() => void)[] = [];

  /** Register a request (an id already running for the principal is fine). */
  add(principalKey: string, id: JsonRpcId): InFlightEntry {
    const entry = { principalKey, id, controller: new AbortController() };
    let ids = this.#entries.get(principalKey);
    if (ids === undefined) {
      ids = new Map();
      this.#entries.set(principalKey, ids);
    }
    const same = ids.get(id);
    if (same === undefined) ids.set(id, [entry]);
    else same.push(entry);
    this.#size++;
    return entry;
  }

  /** Remove a finished request. */
  delete(entry: InFlightEntry): void {
    const ids = this.#entries.get(entry.principalKey);
    const same = ids?.get(entry.id);
    const at = same === undefined ? -1 : same.indexOf(entry);
    if (at < 0) return;
    this.#size--;
    if (same!.length === 1) {
      ids!.delete(entry.id);
      if (ids!.size === 0) this.#entries.delete(entry.principalKey);
    } else same!.splice(at, 1);
    if (this.#size === 0) {
      const waiters = this.#idle;
      this.#idle = [];
      for (const wake of waiters) wake();
    }
  }

  /** Cancel each of a principal's requests with this id; false when none. */
  cancel(principalKey: string, id: JsonRpcId): boolean {
    const same = this.#entries.get(principalKey)?.get(id);
    if (same === undefined) return false;
    for (const entry of [...same]) {
      entry.controller.abort(new RequestStopped("cancelled"));
    }
    return true;
  }

  /** Every running entry. */
  *#all(): Iterable<InFlightEntry> {
    for (const ids of this.#entries.values()) {
      for (const same of ids.values()) yield* [...same];
    }
  }

  /** Stop every request of a principal (its token was revoked). */
  stopPrincipal(principalKey: string, reason: StopReason): number {
    let stopped = 0;
    for (const entry of this.#all()) {
      if (entry.principalKey === principalKey) {
        entry.controller.abort(new RequestStopped(reason));
        stopped++;
      }
    }
    return stopped;
  }

  /** Stop every running request. */
  stopAll(reason: StopReason): void {
    for (const entry of this.#all()) {
      entry.controller.abort(new RequestStopped(reason));
    }
  }

  /** How many requests are running. */
  get size(): number {
    return this.#size;
  }

  /** Resolve when nothing runs, or after `ms`; true when it drained. */
  drain(ms: number): Promise<boolean> {
    if (this.#size === 0) return Promise.resolve(true);
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.#idle = this.#idle.filter((wake) => wake !== done);
        resolve(false);
      }, ms);
      const done = () => {
        clearTimeout(timer);
        resolve(true);
      };
      this.#idle.push(done);
    });
  }
}
