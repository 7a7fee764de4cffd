/**
 * Heartbeats of a request that carries a progressToken: while it waits - for
 * the user's approval, for a long statement - a progress frame at least
 * every `intervalMs` (15 s), still advancing and below 1, saying what it
 * waits for and for how long ("waiting for your approval on this machine,
 * 45 s (75 s left)"). A client that resets its request timeout on progress
 * (the TS SDK's `resetTimeoutOnProgress`) keeps waiting (docs/clients.md).
 *
 * @module
 */

/** The wire reference's keep-alive interval, used for heartbeats too. */
export const HEARTBEAT_MS = 15_000;

/** Sends a progress frame: progress advances, total is 1. */
type Send = (progress: number, message: string) => void;

/** One request's heartbeat. */
export class Heartbeat {
  #last = -Infinity;
  #lastFrameAt: number;
  #what: string | null = null;
  #since: number;
  #until: number | null = null;
  readonly #timer: ReturnType<typeof setInterval>;

  constructor(
    readonly send: Send,
    readonly intervalMs = HEARTBEAT_MS,
    readonly now: () => number = performance.now.bind(performance),
  ) {
    this.#lastFrameAt = now();
    this.#since = this.#lastFrameAt;
    // Checked four times an interval: a frame is never later than 1.25×.
    this.#timer = setInterval(() => this.tick(), Math.max(10, intervalMs / 4));
    Deno.unrefTimer(this.#timer);
  }

  /** A progress frame went out (the handler's own). */
  sent(progress: number): void {
    this.#last = progress;
    this.#lastFrameAt = this.now();
  }

  /** What the request waits for now (null: nothing in particular). */
  waiting(what: string | null, leftMs?: number): void {
    this.#what = what;
    this.#since = this.now();
    this.#until = leftMs === undefined ? null : this.#since + leftMs;
  }

  /** Send a frame if none went out for an interval. */
  tick(): void {
    const now = this.now();
    if (now - this.#lastFrameAt < this.intervalMs) return;
    // Advancing, and below 1 however many there are.
    const progress = this.#last < 0 ? 0.01 : this.#last + (1 - this.#last) / 50;
    if (!(progress > this.#last) || progress >= 1) return;
    const seconds = (ms: number) => `${Math.max(0, Math.round(ms / 1000))} s`;
    const left = this.#until === null
      ? ""
      : ` (${seconds(this.#until - now)} left)`;
    const message = this.#what === null
      ? `still working, ${seconds(now - this.#since)}`
      : `waiting for ${this.#what}, ${seconds(now - this.#since)}${left}`;
    this.send(progress, message);
  }

  stop(): void {
    clearInterval(this.#timer);
  }
}
