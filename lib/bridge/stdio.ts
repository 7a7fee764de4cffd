/**
 * Newline-delimited JSON-RPC on stdio: lines up to 10 MB in, whole lines out,
 * one at a time (stdout carries nothing but JSON-RPC).
 *
 * @module
 */

/** The longest line read (docs/wire.md "Limits": 10 MB bodies). */
export const MAX_LINE_BYTES = 10 * 1024 * 1024;

/** One line read: its text, or too long (and skipped to its end). */
export type Line = { text: string } | { tooLong: true };

/** Lines of a byte stream. */
export async function* readLines(
  stream: ReadableStream<Uint8Array>,
  max = MAX_LINE_BYTES,
): AsyncGenerator<Line> {
  const decoder = new TextDecoder();
  let parts: Uint8Array[] = [];
  let size = 0;
  let skipping = false;
  for await (const chunk of stream) {
    let start = 0;
    for (;;) {
      const nl = chunk.indexOf(10, start);
      const end = nl === -1 ? chunk.length : nl;
      if (!skipping) {
        size += end - start;
        if (size > max) {
          skipping = true;
          parts = [];
        } else parts.push(chunk.subarray(start, end));
      }
      if (nl === -1) break;
      if (skipping) yield { tooLong: true };
      else {
        const text = decoder.decode(concat(parts, size)).trim();
        if (text !== "") yield { text };
      }
      parts = [];
      size = 0;
      skipping = false;
      start = nl + 1;
    }
  }
  if (!skipping && size > 0) {
    const text = decoder.decode(concat(parts, size)).trim();
    if (text !== "") yield { text };
  }
}

function concat(parts: Uint8Array[], size: number): Uint8Array {
  if (parts.length === 1) return parts[0]!;
  const out = new Uint8Array(size);
  let at = 0;
  for (const part of parts) {
    out.set(part, at);
    at += part.length;
  }
  return out;
}

/** Writes whole lines to a writer, in order. */
export class LineWriter {
  #queue: Promise<void> = Promise.resolve();
  readonly #write: (bytes: Uint8Array) => Promise<unknown>;
  readonly #encoder = new TextEncoder();

  constructor(write: (bytes: Uint8Array) => Promise<unknown>) {
    this.#write = write;
  }

  /** Queue one line (a newline is added). */
  line(text: string): Promise<void> {
    const bytes = this.#encoder.encode(text.replace(/\n/g, " ") + "\n");
    // A client gone (EPIPE) must not stop the lines queued after.
    this.#queue = this.#queue.then(() => this.#write(bytes)).then(
      () => {},
      () => {},
    );
    return this.#queue;
  }

  /** Resolves when every queued line is written. */
  flushed(): Promise<void> {
    return this.#queue;
  }
}
