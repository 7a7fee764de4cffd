/**
 * The main thread's side of a SQLite worker (`sqlite_worker.ts`): it posts
 * a call and awaits its answer, never touching SQLite itself. A worker that
 * has not answered a call `WORKER_GRACE_MS` after its deadline (stuck where
 * even the progress handler cannot reach) is terminated; every call waiting
 * on it fails at once and the next call starts a fresh worker.
 *
 * A call's time starts once its worker runs (`started`): a new worker's
 * start — a thread, an isolate, its modules, SQLite's library — took 0.1 s
 * idle, over 1 s on a busy machine and past 10 s beside CI's parallel tests,
 * and counted against a 15 s connection test it made a brand-new SQLite file
 * "not connect". The start has its own bound, `WORKER_START_MS`.
 *
 * @module
 */

import { DbError } from "../errors.ts";
import { notStarted } from "../stoppable.ts";
import {
  REGISTRY_SLOTS,
  type Request,
  type Response,
} from "./sqlite_protocol.ts";
import {
  holdSpawner,
  startSqliteWorker,
  type WorkerLink,
} from "./sqlite_spawner.ts";
import type { Cell } from "../types.ts";

/** How long after its deadline a call's worker may stay silent. */
export const WORKER_GRACE_MS = 1_500;
/**
 * How long a new worker may take to answer its `init` before it counts as
 * failed: a thread that never comes up, not a slow machine (a start took
 * over 10 s under CI's load).
 */
export const WORKER_START_MS = 60_000;

type Batch = { columns: string[]; rows: Cell[][] };
/** A request before the client numbers it (sqlite_protocol.ts's `Request`). */
export type Call = {
  type: Request["type"];
  id?: number;
  [key: string]: unknown;
};

interface Pending {
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
  onBatch?: (batch: Batch) => Promise<void>;
  /** A stream's batch is with its consumer: the worker is waiting, not stuck. */
  consuming?: boolean;
  /** When (epoch ms) a worker silent on this call counts as stuck. */
  due?: number;
}

/** A failure the worker reported: its message and SQLite code. */
export class WorkerError extends Error {
  constructor(message: string, readonly code: string) {
    super(message);
  }
}

/**
 * One worker thread for one SQLite file, started on first use through
 * sqlite_spawner.ts: by the spawner thread once it runs, not the event loop.
 */
export class SqliteClient {
  #worker: WorkerLink | null = null;
  /** The spawner kept running from the first worker until `dispose()`. */
  #release: (() => void) | null = null;
  #pending = new Map<number, Pending>();
  #next = 1;
  /** When the worker last said anything: a busy worker is not a silent one. */
  #heard = 0;
  /** Since when the worker has had calls without answering one. */
  #busySince = 0;
  /** The connections the current worker holds (it writes, we read after a kill). */
  #registry = new BigInt64Array(
    new SharedArrayBuffer(8 * REGISTRY_SLOTS),
  );
  /** Connections of a terminated worker, for the next one to close. */
  #orphans: bigint[] = [];
  #idle: ReturnType<typeof setTimeout> | undefined;
  /** One watchdog for every call in flight (not a timer per call). */
  #watchdog: ReturnType<typeof setInterval> | undefined;
  /** Settles when the current worker has answered its `init` (or failed). */
  #ready: PromiseWithResolvers<void> & { done: boolean } | null = null;
  /** How many workers were terminated for not answering (for tests). */
  restarts = 0;

  constructor(
    readonly path: string,
    readonly idleMs: number,
    /** Columns the read handles' authorizer denies (private_columns.ts). */
    readonly privateColumns: readonly string[] = [],
  ) {}

  /**
   * How long the worker has gone without answering while it has calls: a
   * worker answering quick calls stays near 0, one inside a long statement
   * grows. 0 when idle.
   */
  get stuckFor(): number {
    return this.#pending.size === 0 ? 0 : Date.now() - this.#busySince;
  }

  /**
   * Start the worker if need be and wait until it runs (has answered its
   * `init`), so that a call's deadline counts its statement, not the
   * thread's start. Refused when `signal` aborts first, and when the worker
   * fails or has not started within `WORKER_START_MS`.
   */
  async started(signal: AbortSignal): Promise<void> {
    if (signal.aborted) throw notStarted();
    const worker = this.#spawn();
    const ready = this.#ready!;
    if (ready.done) return;
    let timer: ReturnType<typeof setTimeout> | undefined;
    let onAbort = () => {};
    try {
      await new Promise<void>((resolve, reject) => {
        ready.promise.then(resolve, reject);
        onAbort = () => reject(notStarted());
        signal.addEventListener("abort", onAbort, { once: true });
        timer = setTimeout(() =>
          this.#fail(
            worker,
            `the SQLite worker did not start within ${
              WORKER_START_MS / 1000
            } s`,
          ), WORKER_START_MS);
      });
    } finally {
      clearTimeout(timer);
      signal.removeEventListener("abort", onAbort);
    }
  }

  /** A number for a call that needs one before it is sent (a write's `finish`). */
  nextId(): number {
    return this.#next++;
  }

  /** Post a call and await its answer; `deadline` (epoch ms) arms the watchdog. */
  call<T>(
    request: Call,
    deadline: number | null,
    onBatch?: (batch: Batch) => Promise<void>,
  ): Promise<T> {
    const id = request.id ?? this.nextId();
    const worker = this.#spawn();
    return new Promise<T>((resolve, reject) => {
      const pending: Pending = {
        resolve: resolve as (value: unknown) => void,
        reject,
      };
      if (onBatch !== undefined) pending.onBatch = onBatch;
      if (deadline !== null) pending.due = deadline + WORKER_GRACE_MS;
      if (this.#pending.size === 0) this.#busySince = Date.now();
      this.#watch();
      this.#pending.set(id, pending);
      worker.postMessage({ ...request, id });
    });
  }

  /** Post a message that has no answer of its own. */
  send(request: Request): void {
    this.#worker?.postMessage(request);
  }

  /** Close the worker's connections and end it. */
  async close(): Promise<void> {
    clearTimeout(this.#idle);
    this.#idle = undefined;
    const worker = this.#worker;
    if (worker === null) return;
    await this.call({ type: "close" }, Date.now() + 5_000).catch(() => {});
    clearTimeout(this.#idle);
    this.#idle = undefined;
    if (this.#worker === worker) {
      worker.terminate();
      this.#worker = null;
      this.#settleReady(new DbError("connect", "the SQLite worker was closed"));
    }
  }

  /** The current worker's start is over: it runs, or it never will. */
  #settleReady(error?: DbError): void {
    const ready = this.#ready;
    if (ready === null || ready.done) return;
    ready.done = true;
    if (error === undefined) ready.resolve();
    else ready.reject(error);
  }

  /** Close the worker and let the spawner go: the driver is closed. */
  async dispose(): Promise<void> {
    await this.close();
    this.#release?.();
    this.#release = null;
  }

  /** End the worker at once, as a crash would: every waiting call fails. */
  terminate(): void {
    if (this.#worker !== null) {
      this.#fail(this.#worker, "the SQLite worker was terminated");
    }
  }

  #spawn(): WorkerLink {
    if (this.#worker !== null) return this.#worker;
    this.#release ??= holdSpawner();
    const worker = startSqliteWorker();
    worker.onmessage = (event: MessageEvent<Response>) =>
      this.#answer(event.data);
    worker.onerror = (message) => {
      this.#fail(worker, `the SQLite worker failed: ${message}`);
    };
    this.#worker = worker;
    this.#ready = { ...Promise.withResolvers<void>(), done: false };
    this.#ready.promise.catch(() => {});
    this.#registry = new BigInt64Array(
      new SharedArrayBuffer(8 * REGISTRY_SLOTS),
    );
    worker.postMessage(
      {
        type: "init",
        id: 0,
        path: this.path,
        idleMs: this.idleMs,
        registry: this.#registry,
        orphans: this.#orphans.splice(0),
        privateColumns: this.privateColumns,
      } satisfies Request,
    );
    return worker;
  }

  #answer(message: Response): void {
    this.#heard = Date.now();
    this.#busySince = this.#heard;
    // `init` (id 0, sent by #spawn): the worker runs.
    if (message.id === 0) this.#settleReady();
    const pending = this.#pending.get(message.id);
    if (pending === undefined) return;
    if (message.ok && "batch" in message) {
      const more = (stop: boolean) => {
        pending.consuming = false;
        this.send({ type: "more", id: message.id, stop });
      };
      pending.consuming = true;
      pending.onBatch!(message.batch).then(
        () => more(false),
        (error) => {
          more(true);
          this.#settle(message.id)?.reject(error);
        },
      );
      return;
    }
    this.#settle(message.id);
    if (this.#pending.size === 0) this.#endWhenIdle();
    if (message.ok) pending.resolve(message.value);
    else {
      pending.reject(
        new WorkerError(message.error.message, message.error.code),
      );
    }
  }

  #settle(id: number): Pending | undefined {
    const pending = this.#pending.get(id);
    this.#pending.delete(id);
    if (this.#pending.size === 0) {
      clearInterval(this.#watchdog);
      this.#watchdog = undefined;
    }
    return pending;
  }

  /** Check the calls in flight every quarter of the grace. */
  #watch(): void {
    if (this.#watchdog !== undefined) return;
    this.#watchdog = setInterval(() => {
      const now = Date.now();
      const worker = this.#worker;
      if (worker === null) return;
      for (const [id, pending] of this.#pending) {
        if (pending.due !== undefined && now >= pending.due) {
          this.#replace(worker, id);
        }
      }
    }, WORKER_GRACE_MS / 4);
    Deno.unrefTimer(this.#watchdog);
  }

  /**
   * Call `id` is past its deadline and grace. A worker still answering other
   * calls is busy, not stuck (the call waits in its queue and is refused as
   * late when its turn comes): look again after another grace. A worker
   * silent for the whole grace is terminated with everything it holds.
   */
  #replace(worker: WorkerLink, id: number): void {
    const pending = this.#pending.get(id);
    if (this.#worker !== worker || pending === undefined) return;
    if (pending.consuming) {
      // A stream whose consumer is slow: the worker only waits for it.
      this.#settle(id)?.reject(
        new Error("the stream's reader did not keep up"),
      );
      this.send({ type: "more", id, stop: true });
      return;
    }
    if (Date.now() - this.#heard < WORKER_GRACE_MS) {
      pending.due = Date.now() + WORKER_GRACE_MS;
      return;
    }
    this.restarts++;
    this.#settle(id)?.reject(
      new Error("the SQLite worker did not answer and was restarted"),
    );
    this.#fail(
      worker,
      "the SQLite worker was restarted: another call on this file did not answer in time",
    );
  }

  /** A worker with nothing to do for `idleMs` is ended (its handles closed). */
  #endWhenIdle(): void {
    if (this.#idle !== undefined) return;
    const check = () => {
      const quiet = Date.now() - this.#heard;
      if (this.#pending.size > 0 || quiet < this.idleMs) {
        this.#idle = setTimeout(check, Math.max(this.idleMs - quiet, 1_000));
        Deno.unrefTimer(this.#idle);
        return;
      }
      this.#idle = undefined;
      void this.close();
    };
    this.#idle = setTimeout(check, this.idleMs);
    Deno.unrefTimer(this.#idle);
  }

  #fail(worker: WorkerLink, message: string): void {
    if (this.#worker !== worker) return;
    worker.terminate();
    this.#worker = null;
    this.#settleReady(new DbError("connect", message));
    for (const value of this.#registry) {
      if (value !== 0n) this.#orphans.push(value);
    }
    for (const id of [...this.#pending.keys()]) {
      this.#settle(id)?.reject(new DbError("connect", message));
    }
  }
}
