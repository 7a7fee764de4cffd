/**
 * The thread that starts SQLite workers (`sqlite_spawner.ts` starts it):
 * `new Worker()` holds the thread that calls it until the new thread's V8
 * isolate exists (10–60 ms on an idle machine, 100–700 ms under load), so
 * it is called here, never on the event loop. One worker is kept started
 * ahead (a nested worker takes ~0.5 s more before it runs its first line):
 * a `take` hands over the spare's port at once and starts the next spare.
 *
 * Main thread → here: `{ type: "take", key }`, `{ type: "end", key }`.
 * Here → main thread: `{ type: "port", key, port }` (the worker's
 * MessagePort, transferred) and `{ type: "error", key, message }` (the
 * worker failed).
 *
 * @module
 */

/// <reference lib="deno.worker" />

interface Started {
  worker: Worker;
  port: MessagePort;
  /** Which `take` it went to; null while it is the spare. */
  key: number | null;
}

const taken = new Map<number, Started>();
let spare: Started | null = null;

function start(): Started {
  const worker = new Worker(new URL("./sqlite_worker.ts", import.meta.url), {
    type: "module",
  });
  const { port1, port2 } = new MessageChannel();
  worker.postMessage({ type: "port", port: port1 }, [port1]);
  const started: Started = { worker, port: port2, key: null };
  worker.onerror = (event) => {
    event.preventDefault();
    worker.terminate();
    if (started.key === null) {
      if (spare === started) spare = null;
      return;
    }
    taken.delete(started.key);
    self.postMessage({
      type: "error",
      key: started.key,
      message: event.message,
    });
  };
  return started;
}

/** Start the next spare once this turn's answers are posted. */
function replenish(): void {
  setTimeout(() => {
    spare ??= start();
  }, 0);
}

self.onmessage = (
  event: MessageEvent<{ type: "take" | "end"; key: number }>,
) => {
  const { type, key } = event.data;
  if (type === "take") {
    const started = spare ?? start();
    spare = null;
    started.key = key;
    taken.set(key, started);
    self.postMessage({ type: "port", key, port: started.port }, [
      started.port,
    ]);
    replenish();
    return;
  }
  taken.get(key)?.worker.terminate();
  taken.delete(key);
};

replenish();
