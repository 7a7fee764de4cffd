/**
 * The registry of running requests, keyed by principal and JSON-RPC id
 * (contract: "Request lifecycle", "Cancellation").
 *
 * Each entry owns an AbortController whose signal reaches the handler; the
 * abort reason says why the request ended, and the dispatcher turns it into
 * the right wire error.
 *
 * @module
 */

import type { JsonRpcId } from "../protocol/jsonrpc.ts";

/** Why a running request was stopped. */
export type StopReason =
  | "cancelled" // notifications/cancelled from its own principal
  | "revoked" // its token was revoked
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

/** One running request. */
export interface InFlightEntry {
  readonly principalKey: string;
  readonly id: JsonRpcId;
  readonly controller: AbortController;
}

/** Every running request of this server. */
export class InFlightRegistry {
  readonly #entries = new Map<string, InFlightEntry>();
  #idle: (() => void)[] = [];

  #key(principalKey: string, id: JsonRpcId): string {
    // The type prefix keeps id 1 and id "1" apart.
    return `${principalKey}\u0000${typeof id}\u0000${id}`;
  }

  /**
   * Register a request. Returns null when the same principal already has a
   * request with this id running (JSON-RPC ids must be unique while in flight).
   */
  add(principalKey: string, id: JsonRpcId): InFlightEntry | null {
    const key = this.#key(principalKey, id);
    if (this.#entries.has(key)) return null;
    const entry = { principalKey, id, controller: new AbortController() };
    this.#entries.set(key, entry);
    return entry;
  }

  /** Remove a finished request. */
  delete(entry: InFlightEntry): void {
    const key = this.#key(entry.principalKey, entry.id);
    if (this.#entries.get(key) === entry) this.#entries.delete(key);
    if (this.#entries.size === 0) {
      const waiters = this.#idle;
      this.#idle = [];
      for (const wake of waiters) wake();
    }
  }

  /** Cancel a principal's request by id; false when nothing matched. */
  cancel(principalKey: string, id: JsonRpcId): boolean {
    const entry = this.#entries.get(this.#key(principalKey, id));
    if (entry === undefined) return false;
    entry.controller.abort(new RequestStopped("cancelled"));
    return true;
  }

  /** Stop every request of a principal (its token was revoked). */
  stopPrincipal(principalKey: string, reason: StopReason): number {
    let stopped = 0;
    for (const entry of this.#entries.values()) {
      if (entry.principalKey === principalKey) {
        entry.controller.abort(new RequestStopped(reason));
        stopped++;
      }
    }
    return stopped;
  }

  /** Stop every running request. */
  stopAll(reason: StopReason): void {
    for (const entry of this.#entries.values()) {
      entry.controller.abort(new RequestStopped(reason));
    }
  }

  /** How many requests are running. */
  get size(): number {
    return this.#entries.size;
  }

  /** Resolve when nothing runs, or after `ms`; true when it drained. */
  drain(ms: number): Promise<boolean> {
    if (this.#entries.size === 0) return Promise.resolve(true);
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
