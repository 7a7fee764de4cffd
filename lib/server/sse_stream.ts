/**
 * One request's own SSE response stream (docs/wire.md "Progress streaming").
 *
 * @module
 */

import {
  SSE_KEEPALIVE_FRAME,
  SSE_KEEPALIVE_MS,
  sseFrame,
} from "../protocol/sse.ts";

/** Writes frames to a `text/event-stream` response and keeps it alive. */
export class SseStream {
  readonly response: Response;
  readonly #gone = new AbortController();
  #controller!: ReadableStreamDefaultController<Uint8Array>;
  #timer: ReturnType<typeof setInterval> | undefined;
  #closed = false;

  constructor(keepAliveMs = SSE_KEEPALIVE_MS) {
    const body = new ReadableStream<Uint8Array>({
      start: (controller) => {
        this.#controller = controller;
      },
      cancel: () => {
        this.#closed = true;
        clearInterval(this.#timer);
        this.#gone.abort();
      },
    });
    // A comment frame at least every keepAliveMs keeps a quiet stream (a long
    // query, an idle listen) from being cut by the 30 s idle timeout.
    this.#timer = setInterval(
      () => this.#enqueue(SSE_KEEPALIVE_FRAME),
      keepAliveMs,
    );
    this.response = new Response(body, {
      status: 200,
      headers: {
        "content-type": "text/event-stream",
        "cache-control": "no-cache, no-transform",
        "x-accel-buffering": "no",
      },
    });
  }

  /** Aborts when the client stops reading (it went away). */
  get gone(): AbortSignal {
    return this.#gone.signal;
  }

  /** Write one JSON-RPC message as a `data:` frame. */
  write(message: unknown): void {
    this.#enqueue(sseFrame(message));
  }

  /** End the stream. */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    clearInterval(this.#timer);
    this.#controller.close();
  }

  #enqueue(bytes: Uint8Array): void {
    if (this.#closed) return;
    try {
      this.#controller.enqueue(bytes);
    } catch {
      this.#closed = true;
      clearInterval(this.#timer);
      this.#gone.abort();
    }
  }
}
