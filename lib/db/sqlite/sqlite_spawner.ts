/**
 * SQLite workers started off the event loop: `new Worker()` blocks the
 * thread that calls it while the new isolate is made (10–60 ms idle,
 * 100–700 ms measured under load), which on the main thread stalled every
 * other client each time a SQLite file's worker started. One spawner thread
 * (`sqlite_spawner_worker.ts`) makes them, keeping one started ahead; the
 * main thread gets each worker's MessagePort and talks to it through a
 * {@linkcode WorkerLink}. The spawner itself starts when the first SQLite
 * driver needs a worker, and ends when the last one is closed; that first
 * worker is started here, as before (a worker started by the spawner runs
 * its first line ~0.5 s later, 1-1.5 s under load, and a cold start that
 * slow failed calls with a 1 s timeout), every later one by the spawner.
 *
 * @module
 */

/** A SQLite worker as the main thread sees it (a Worker's shape). */
export interface WorkerLink {
  postMessage(message: unknown): void;
  onmessage: ((event: MessageEvent) => void) | null;
  /** The worker failed (an uncaught error, or the spawner ended). */
  onerror: ((message: string) => void) | null;
  /** End the worker; nothing more is delivered either way. */
  terminate(): void;
}

type FromSpawner =
  | { type: "port"; key: number; port: MessagePort }
  | { type: "error"; key: number; message: string };

let spawner: Worker | null = null;
let holders = 0;
let nextKey = 1;
const links = new Map<number, Link>();

class Link implements WorkerLink {
  onmessage: ((event: MessageEvent) => void) | null = null;
  onerror: ((message: string) => void) | null = null;
  #port: MessagePort | null = null;
  /** Messages posted before the port arrived, sent in order when it does. */
  #queue: unknown[] = [];
  #ended = false;

  constructor(readonly key: number) {}

  connect(port: MessagePort): void {
    if (this.#ended) {
      port.close();
      return;
    }
    this.#port = port;
    port.onmessage = (event) => this.onmessage?.(event);
    for (const message of this.#queue.splice(0)) port.postMessage(message);
  }

  postMessage(message: unknown): void {
    if (this.#ended) return;
    if (this.#port === null) this.#queue.push(message);
    else this.#port.postMessage(message);
  }

  fail(message: string): void {
    if (this.#ended) return;
    this.terminate();
    this.onerror?.(message);
  }

  terminate(): void {
    if (this.#ended) return;
    this.#ended = true;
    this.#queue = [];
    this.#port?.close();
    links.delete(this.key);
    spawner?.postMessage({ type: "end", key: this.key });
  }
}

/** A worker started on this thread: the first, while the spawner starts. */
class DirectLink implements WorkerLink {
  onmessage: ((event: MessageEvent) => void) | null = null;
  onerror: ((message: string) => void) | null = null;
  #worker = new Worker(new URL("./sqlite_worker.ts", import.meta.url), {
    type: "module",
  });

  constructor() {
    this.#worker.onmessage = (event) => this.onmessage?.(event);
    this.#worker.onerror = (event) => {
      event.preventDefault();
      this.onerror?.(event.message);
    };
  }

  postMessage(message: unknown): void {
    this.#worker.postMessage(message);
  }

  terminate(): void {
    this.#worker.terminate();
  }
}

function startSpawner(): Worker {
  const started = new Worker(
    new URL("./sqlite_spawner_worker.ts", import.meta.url),
    { type: "module" },
  );
  started.onmessage = (event: MessageEvent<FromSpawner>) => {
    const message = event.data;
    const link = links.get(message.key);
    if (message.type === "port") {
      if (link === undefined) message.port.close();
      else link.connect(message.port);
    } else link?.fail(message.message);
  };
  started.onerror = (event) => {
    event.preventDefault();
    if (spawner === started) spawner = null;
    started.terminate();
    for (const link of [...links.values()]) {
      link.fail(`the SQLite worker spawner failed: ${event.message}`);
    }
  };
  return started;
}

/**
 * Keep the spawner running until the returned function is called (a SQLite
 * driver holds it from its first worker until it is closed).
 */
export function holdSpawner(): () => void {
  holders++;
  let released = false;
  return () => {
    if (released) return;
    released = true;
    holders--;
    if (holders === 0 && spawner !== null) {
      for (const link of [...links.values()]) link.terminate();
      spawner.terminate();
      spawner = null;
    }
  };
}

/** A new SQLite worker; messages posted before it is running wait for it. */
export function startSqliteWorker(): WorkerLink {
  if (spawner === null) {
    spawner = startSpawner();
    return new DirectLink();
  }
  const link = new Link(nextKey++);
  links.set(link.key, link);
  spawner.postMessage({ type: "take", key: link.key });
  return link;
}
