/**
 * Watches connections' schemas for change: one poller per watched connection,
 * shared by every subscriber, asking the engine for its schema fingerprint
 * (`Driver.fingerprint`, one cheap catalog query) at a modest interval. The
 * first answer is the baseline; each different later answer tells every
 * subscriber once. A poller stops with its last subscriber.
 *
 * `watch` resolves once the baseline is read (or its first round failed),
 * so a change made after it is a change from the baseline: the listen stream
 * acknowledges only then. The first round opens the connection's driver
 * (for SQLite, starts its worker), which on a starved machine has taken
 * seconds; a change made meanwhile was the baseline and never announced.
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
  /** Settles when the first round has ended (baseline read, or none this round). */
  baseline: Promise<void>;
  settleBaseline: () => void;
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

  /**
   * Call `onChange` on each schema change until `signal` aborts. Resolves
   * when the watch has its baseline (or its first round could not read one):
   * from then on every change is heard.
   */
  watch(
    connectionId: string,
    onChange: () => void,
    signal: AbortSignal,
  ): Promise<void> {
    if (signal.aborted) return Promise.resolve();
    let poller = this.#pollers.get(connectionId);
    if (poller === undefined) {
      const { promise, resolve } = Promise.withResolvers<void>();
      poller = {
        listeners: new Set(),
        timer: undefined,
        stop: new AbortController(),
        last: null,
        baseline: promise,
        settleBaseline: resolve,
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
    // A stream that ends before the baseline waits no longer for it.
    return Promise.race([
      poller.baseline,
      new Promise<void>((resolve) =>
        signal.addEventListener("abort", () => resolve(), { once: true })
      ),
    ]);
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
      if (!poller.stop.signal.aborted && fingerprint !== null) {
        const changed = poller.last !== null && fingerprint !== poller.last;
        poller.last = fingerprint;
        if (changed) { for (const listener of poller.listeners) listener(); }
      }
    }
    poller.settleBaseline();
    if (poller.stop.signal.aborted) return;
    poller.timer = setTimeout(
      () => void this.#poll(connectionId, poller),
      this.#intervalMs,
    );
  }
}
