/**
 * Pre-dispatch check 3 (docs/wire.md "Limits"): a body over 10 MB is `-33005`
 * (HTTP 413). A declared `Content-Length` over the cap is refused before a byte
 * is read; a chunked body is counted as it arrives and refused as soon as it
 * passes the cap, so nothing past the cap is ever buffered.
 *
 * @module
 */

import type { MiddlewareHandler } from "hono";
import type { IncomingMessage } from "node:http";
import type { AppEnv, BodyVariables } from "../env.ts";
import { ErrorCode, WireError } from "../../protocol/errors.ts";
import { HttpError } from "../http_error.ts";

/** The body cap: 10 MB. */
export const MAX_BODY_BYTES = 10 * 1024 * 1024;

export type { BodyVariables };

/** The `-33005` refusal of a body over `max` bytes. */
export function tooLarge(max: number): HttpError {
  // The rest of the body is never read: the connection is closed after the
  // answer (what is already in flight is drained briefly, then closed).
  return HttpError.wire(
    new WireError(
      ErrorCode.PayloadTooLarge,
      `Payload too large: the body exceeds ${max} bytes`,
      { maxBytes: max },
      { connection: "close" },
    ),
  );
}

/**
 * The refusal of a declared `Content-Length` over the cap, before a byte is
 * read, or null. Transfer-Encoding takes precedence over Content-Length (RFC
 * 9112 6.3); the HTTP parser enforces the framing, so a lone Content-Length
 * is exact.
 */
export function declaredTooLarge(
  contentLength: string | undefined,
  transferEncoding: string | undefined,
  max: number,
): HttpError | null {
  if (contentLength === undefined || transferEncoding !== undefined) {
    return null;
  }
  const length = Number(contentLength);
  return Number.isFinite(length) && length > max ? tooLarge(max) : null;
}

/** Chunks counted against the cap, joined at the end. */
class Chunks {
  readonly #chunks: Uint8Array[] = [];
  #size = 0;
  constructor(readonly max: number) {}

  /** Take one chunk; throws the 413 once the cap is passed. */
  take(chunk: Uint8Array): void {
    this.#size += chunk.byteLength;
    if (this.#size > this.max) throw tooLarge(this.max);
    this.#chunks.push(chunk);
  }

  join(): Uint8Array {
    if (this.#chunks.length === 1) return this.#chunks[0]!;
    const body = new Uint8Array(this.#size);
    let offset = 0;
    for (const chunk of this.#chunks) {
      body.set(chunk, offset);
      offset += chunk.byteLength;
    }
    return body;
  }
}

/**
 * Read a node:http body under the cap, from the socket's own events (no web
 * Request, no async iterator). Rejects with the 413 as soon as the cap is
 * passed - the stream is paused, not destroyed, so the answer can still be
 * written - and with `aborted` when the client goes away mid-body.
 */
export function readIncoming(
  incoming: IncomingMessage,
  max = MAX_BODY_BYTES,
): Promise<Uint8Array> {
  return new Promise((resolve, reject) => {
    const chunks = new Chunks(max);
    const stop = () => {
      incoming.off("data", onData);
      incoming.off("end", onEnd);
      incoming.off("error", onError);
      incoming.off("close", onClose);
    };
    const onData = (chunk: Uint8Array) => {
      try {
        chunks.take(chunk);
      } catch (error) {
        stop();
        incoming.pause();
        reject(error);
      }
    };
    const onEnd = () => {
      stop();
      resolve(chunks.join());
    };
    const onError = (error: Error) => {
      stop();
      reject(error);
    };
    const onClose = () => {
      stop();
      if (incoming.complete) resolve(chunks.join());
      else reject(new Error("aborted"));
    };
    incoming.on("data", onData);
    incoming.on("end", onEnd);
    incoming.on("error", onError);
    incoming.on("close", onClose);
  });
}

/** Read a web body under the cap (`app.request()` in tests). */
async function readStream(
  stream: ReadableStream<Uint8Array> | null,
  max: number,
): Promise<Uint8Array> {
  const chunks = new Chunks(max);
  if (stream !== null) {
    const reader = stream.getReader();
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        chunks.take(value);
      }
    } finally {
      reader.releaseLock();
    }
  }
  return chunks.join();
}

/** Read the body once, under the cap, into `c.var.body`. */
export function bodyLimit(
  max = MAX_BODY_BYTES,
): MiddlewareHandler<
  { Bindings: AppEnv["Bindings"]; Variables: BodyVariables }
> {
  return async function bodyLimit(c, next) {
    const declared = declaredTooLarge(
      c.req.header("content-length"),
      c.req.header("transfer-encoding"),
      max,
    );
    if (declared !== null) throw declared;
    const incoming = c.env?.incoming;
    // On node:http, read the IncomingMessage itself: asking the adapter
    // for `c.req.raw.body` builds a whole web Request around it, a
    // visible share of each request's CPU (bench W1 profile).
    c.set(
      "body",
      incoming !== undefined
        ? await readIncoming(incoming, max)
        : await readStream(c.req.raw.body, max),
    );
    await next();
  };
}
