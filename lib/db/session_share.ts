/**
 * A connection's sessions shared among their callers. Each driver keeps a
 * small pool (`SESSIONS`: PostgreSQL `max`, MariaDB `connectionLimit`), and
 * without a share one caller's slow reads held all of it: another caller's
 * `select 1` waited for the statement timeout. Calls pass through this gate,
 * tagged with an opaque owner key (the driver layer never learns who it is):
 * one owner holds at most all but one session, so a call of another owner
 * always finds one free, or the next to free is its own. Waiters are let in
 * first come, first served, skipping those whose owner is at its share.
 *
 * @module
 */

import { DbError } from "./errors.ts";
import { alarm } from "../base/alarms.ts";

/** Sessions in each connection's pool (lib/db/postgres/postgres.ts, lib/db/mysql/mysql.ts). */
export const SESSIONS = 4;

/** The owner key of calls made without one (the server's own checks). */
export const NO_OWNER = "";

interface Waiter {
  owner: string;
  admit: () => void;
}

/** The gate of one connection's sessions. */
export class SessionShare {
  readonly #slots: number;
  readonly #perOwner: number;
  readonly #held = new Map<string, number>();
  readonly #waiting: Waiter[] = [];
  #total = 0;

  constructor(slots: number = SESSIONS) {
    this.#slots = slots;
    this.#perOwner = Math.max(1, slots - 1);
  }

  /**
   * Run `work` once a session is `owner`'s to take, with the time left of
   * the caller's timeout. Waiting ends as the call would: cancelled with
   * the request, or out of time with the statement timeout.
   */
  run<T, O extends { signal: AbortSignal; timeoutMs: number }>(
    owner: string,
    options: O,
    work: (options: O) => Promise<T>,
  ): Promise<T> {
    const started = performance.now();
    // A session free at once is taken without a promise to wait on.
    if (!options.signal.aborted && this.#fits(owner)) {
      this.#take(owner);
      return this.#holding(owner, started, options, work);
    }
    return this.#acquire(owner, options).then(() =>
      this.#holding(owner, started, options, work)
    );
  }

  /** Run `work` on the session `owner` took, and give it back as it settles. */
  #holding<T, O extends { signal: AbortSignal; timeoutMs: number }>(
    owner: string,
    started: number,
    options: O,
    work: (options: O) => Promise<T>,
  ): Promise<T> {
    let running: Promise<T>;
    try {
      const waited = Math.round(performance.now() - started);
      running = work(
        waited === 0
          ? options
          : { ...options, timeoutMs: Math.max(1, options.timeoutMs - waited) },
      );
    } catch (error) {
      this.#release(owner);
      return Promise.reject(error);
    }
    return running.then(
      (value) => {
        this.#release(owner);
        return value;
      },
      (error) => {
        this.#release(owner);
        throw error;
      },
    );
  }

  #fits(owner: string): boolean {
    return this.#total < this.#slots &&
      (this.#held.get(owner) ?? 0) < this.#perOwner;
  }

  #take(owner: string): void {
    this.#total++;
    this.#held.set(owner, (this.#held.get(owner) ?? 0) + 1);
  }

  #acquire(
    owner: string,
    options: { signal: AbortSignal; timeoutMs: number },
  ): Promise<void> {
    if (options.signal.aborted) {
      return Promise.reject(
        new DbError(
          "cancelled",
          "the query was not started: the request was cancelled",
        ),
      );
    }
    if (this.#fits(owner)) {
      this.#take(owner);
      return Promise.resolve();
    }
    return new Promise<void>((resolve, reject) => {
      const leave = (error: DbError) => {
        const at = this.#waiting.indexOf(waiter);
        if (at < 0) return;
        this.#waiting.splice(at, 1);
        done();
        reject(error);
      };
      const onAbort = () =>
        leave(
          new DbError(
            "cancelled",
            "the query was not started: the request was cancelled",
          ),
        );
      const timer = alarm(
        options.timeoutMs,
        () =>
          leave(
            new DbError(
              "timeout",
              `the statement timeout of ${
                options.timeoutMs / 1000
              } s ran out while the query waited for one of the connection's ${this.#slots} sessions (all were busy)`,
            ),
          ),
      );
      const done = () => {
        timer.clear();
        options.signal.removeEventListener("abort", onAbort);
      };
      const waiter: Waiter = {
        owner,
        admit: () => {
          done();
          resolve();
        },
      };
      options.signal.addEventListener("abort", onAbort, { once: true });
      this.#waiting.push(waiter);
    });
  }

  #release(owner: string): void {
    this.#total--;
    const held = (this.#held.get(owner) ?? 1) - 1;
    if (held === 0) this.#held.delete(owner);
    else this.#held.set(owner, held);
    for (let i = 0; i < this.#waiting.length;) {
      const waiter = this.#waiting[i]!;
      if (!this.#fits(waiter.owner)) {
        i++;
        continue;
      }
      this.#waiting.splice(i, 1);
      this.#take(waiter.owner);
      waiter.admit();
    }
  }
}
