/**
 * One request's own SSE response stream (docs/wire.md "Progress streaming").
 *
 * Frames written before the stream is attached wait; it is attached once,
 * either as a web `Response` (the Hono app) or straight to a node:http
 * `ServerResponse` (the `POST /mcp` fast path, `mcp_post.ts`).
 *
 * @module
 */

import type { ServerResponse } from "node:http";
import {
  SSE_KEEPALIVE_FRAME,
  SSE_KEEPALIVE_MS,
  sseFrame,
} from "../protocol/sse.ts";

/** The head of every SSE answer. */
export const SSE_HEADERS: Readonly<Record<string, string>> = Object.freeze({
  "content-type": "text/event-stream",
  "cache-control": "no-cache, no-transform",
  "x-accel-buffering": "no",
});

/** Writes frames to a `text/event-stream` response and keeps it alive. */
export class SseStream {
  readonly #gone = new AbortController();
  #timer: ReturnType<typeof setInterval> | undefined;
  #closed = false;
  /** Frames written before the stream was attached. */
  #pending: Uint8Array[] = [];
  /** Sends one frame; false when the client is gone. */
  #send: ((bytes: Uint8Array) => boolean) | null = null;
  #end: (() => void) | null = null;
  #response: Response | null = null;

  constructor(keepAliveMs = SSE_KEEPALIVE_MS) {
    // A comment frame at least every keepAliveMs keeps a quiet stream (a long
    // query, an idle listen) from being cut by the 30 s idle timeout.
    this.#timer = setInterval(
      () => this.#enqueue(SSE_KEEPALIVE_FRAME),
      keepAliveMs,
    );
  }

  /** Aborts when the client stops reading (it went away). */
  get gone(): AbortSignal {
    return this.#gone.signal;
  }

  /** The stream as a web Response (built at the first ask). */
  get response(): Response {
    if (this.#response !== null) return this.#response;
    let controller!: ReadableStreamDefaultController<Uint8Array>;
    const body = new ReadableStream<Uint8Array>({
      start: (c) => {
        controller = c;
      },
      cancel: () => this.#goneAway(),
    });
    this.#response = new Response(body, { status: 200, headers: SSE_HEADERS });
    this.#attach((bytes) => {
      controller.enqueue(bytes);
      return true;
    }, () => controller.close());
    return this.#response;
  }

  /** Write the stream to a node:http answer, with `headers` added. */
  writeTo(
    outgoing: ServerResponse,
    headers: Readonly<Record<string, string>> = {},
  ): void {
    outgoing.on("close", () => {
      if (!outgoing.writableFinished) this.#goneAway();
    });
    outgoing.writeHead(200, { ...SSE_HEADERS, ...headers });
    outgoing.flushHeaders();
    this.#attach((bytes) => {
      if (outgoing.destroyed) return false;
      outgoing.write(bytes);
      return true;
    }, () => outgoing.end());
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
    this.#end?.();
  }

  #attach(send: (bytes: Uint8Array) => boolean, end: () => void): void {
    if (this.#send !== null) throw new Error("SSE stream attached twice");
    this.#send = send;
    this.#end = end;
    const pending = this.#pending;
    this.#pending = [];
    for (const bytes of pending) this.#deliver(bytes);
    if (this.#closed) end();
  }

  #enqueue(bytes: Uint8Array): void {
    if (this.#closed) return;
    if (this.#send === null) this.#pending.push(bytes);
    else this.#deliver(bytes);
  }

  #deliver(bytes: Uint8Array): void {
    try {
      if (this.#send!(bytes)) return;
    } catch {
      // The reader went away between two frames.
    }
    this.#goneAway();
  }

  #goneAway(): void {
    this.#closed = true;
    clearInterval(this.#timer);
    this.#gone.abort();
  }
}
