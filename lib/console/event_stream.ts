/**
 * `/events`: a page's live feed (server-sent events). Each event names a
 * topic that changed and carries nothing else; the page fetches what it
 * shows again. A comment every 15 s keeps the stream from looking idle.
 *
 * @module
 */

import type { ConsoleEvents } from "./events.ts";

/** How often a quiet stream says it is alive. */
export const KEEP_ALIVE_MS = 15_000;

/** The event stream of one page, until it goes away or the server stops. */
export function eventStream(
  events: ConsoleEvents,
  gone: AbortSignal,
  shutdown: AbortSignal,
): Response {
  const encoder = new TextEncoder();
  let stop = () => {};
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      const send = (text: string) => {
        try {
          controller.enqueue(encoder.encode(text));
        } catch {
          stop();
        }
      };
      const unlisten = events.listen((topic) =>
        send(`event: ${topic}\ndata: {}\n\n`)
      );
      const timer = setInterval(() => send(": alive\n\n"), KEEP_ALIVE_MS);
      stop = () => {
        unlisten();
        clearInterval(timer);
        gone.removeEventListener("abort", stop);
        shutdown.removeEventListener("abort", end);
        stop = () => {};
      };
      const end = () => {
        stop();
        try {
          controller.close();
        } catch { /* already closed */ }
      };
      gone.addEventListener("abort", stop, { once: true });
      shutdown.addEventListener("abort", end, { once: true });
      // Reconnect after 2 s if the stream breaks; say hello at once.
      send("retry: 2000\n: connected\n\n");
    },
    cancel() {
      stop();
    },
  });
  return new Response(body, {
    headers: {
      "content-type": "text/event-stream; charset=utf-8",
      "cache-control": "no-store",
      "x-accel-buffering": "no",
    },
  });
}
