/**
 * Watches connections' schemas for change: one poller per watched connection,
 * shared by every subscriber, asking the engine for its schema fingerprint
 * (`Driver.fingerprint`, one cheap catalog query) at a modest interval. The
 * first answer is the baseline; each different later answer tells every
 * subscriber once. A poller stops with its last subscriber.
 *
 * @module
 */

import { driverSpec } from "../../app/connections.ts";
import type { FeatureDeps } from "../deps.ts";

/** How often a watched schema is fingerprinted. */
export const SCHEMA_POLL_MS = 2_000;
/** A fingerprint query that takes longer than this is given up for the round. */
const FINGERPRINT_TIMEOUT_MS = 5_000;

interface Poller {
  listeners: Set<() => void>;
  timer: ReturnType<typeof setTimeout> | undefined;
  stop: AbortController;
  last: string | null;
}

/** The shared schema pollers. */
export class SchemaWatch {
  readonly #deps: FeatureDeps;
  readonly #intervalMs: number;
  readonly #pollers = new Map<string, Poller>();

  constructor(deps: FeatureDeps, intervalMs = SCHEMA_POLL_MS) {
    this.#deps = deps;
    this.#intervalMs = intervalMs;
  }

  /** Call `onChange` on each schema change until `signal` aborts. */
  watch(connectionId: string, onChange: () => void, signal: AbortSignal): void {
    if (signal.aborted) return;
    let poller = this.#pollers.get(connectionId);
    if (poller === undefined) {
      poller = {
        listeners: new Set(),
        timer: undefined,
        stop: new AbortController(),
        last: null,
      };
      this.#pollers.set(connectionId, poller);
      void this.#poll(connectionId, poller);
    }
    const listener = () => onChange();
    poller.listeners.add(listener);
    signal.addEventListener("abort", () => {
      poller.listeners.delete(listener);
      if (poller.listeners.size === 0) {
        clearTimeout(poller.timer);
        poller.stop.abort();
        if (this.#pollers.get(connectionId) === poller) {
          this.#pollers.delete(connectionId);
        }
      }
    }, { once: true });
  }

  async #poll(connectionId: string, poller: Poller): Promise<void> {
    const connection = this.#deps.connections.byId(connectionId);
    if (connection !== undefined) {
      const fingerprint = await this.#deps.pool.get(driverSpec(connection))
        .fingerprint({
          signal: poller.stop.signal,
          timeoutMs: FINGERPRINT_TIMEOUT_MS,
        })
        // A database that cannot be reached this round changes nothing.
        .catch(() => null);
      if (poller.stop.signal.aborted) return;
      if (fingerprint !== null) {
        const changed = poller.last !== null && fingerprint !== poller.last;
        poller.last = fingerprint;
        if (changed) { for (const listener of poller.listeners) listener(); }
      }
    }
    if (poller.stop.signal.aborted) return;
    poller.timer = setTimeout(
      () => void this.#poll(connectionId, poller),
      this.#intervalMs,
    );
  }
}
