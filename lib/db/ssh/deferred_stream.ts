/**
 * A stream handed over at once for one that opens later: mysql2 takes its
 * socket from a synchronous function, and a tunnel's channel opens only after
 * a round trip. Writes wait for the channel; reads come from it; closing or
 * failing either side ends both.
 *
 * @module
 */

import { Duplex } from "node:stream";

/** A duplex that becomes `open()`'s stream once it resolves. */
export function deferredStream(open: () => Promise<Duplex>): Duplex {
  let inner: Duplex | null = null;
  const waiting: [Uint8Array, (error?: Error | null) => void][] = [];
  const outer = new Duplex({
    read() {
      inner?.resume();
    },
    write(chunk, _encoding, done) {
      if (inner === null) waiting.push([chunk, done]);
      else inner.write(chunk, done);
    },
    final(done) {
      if (inner === null) done();
      else inner.end(done);
    },
    destroy(error, done) {
      inner?.destroy();
      done(error);
    },
  });
  open().then((stream) => {
    if (outer.destroyed) return stream.destroy();
    inner = stream;
    stream.on("data", (data) => {
      if (!outer.push(data)) stream.pause();
    });
    stream.on("end", () => outer.push(null));
    stream.on("close", () => outer.destroy());
    stream.on("error", (error) => outer.destroy(error));
    for (const [chunk, done] of waiting.splice(0)) stream.write(chunk, done);
  }, (error: unknown) => {
    // Writes that waited for the channel fail with it.
    const failure = error instanceof Error ? error : new Error(String(error));
    for (const [, done] of waiting.splice(0)) done(failure);
    outer.destroy(failure);
  });
  return outer;
}
