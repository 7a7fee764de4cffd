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
  // What drivers look for on a socket: postgres.js ends a session with its
  // Terminate message only on a socket whose readyState is "open".
  Object.defineProperty(outer, "readyState", {
    get: () => outer.destroyed ? "closed" : inner === null ? "opening" : "open",
  });
  Object.assign(outer, { setKeepAlive: () => outer, setNoDelay: () => outer });
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
    // As a refused socket does, but with no tick between the error and the
    // close: postgres.js, having written its startup message to a socket it
    // was handed, would otherwise let a query in between and then write to
    // a socket it had already dropped (an uncaught TypeError).
    failed(error instanceof Error ? error : new Error(String(error)));
  });
  function failed(error: Error): void {
    if (outer.destroyed) return;
    for (const [, done] of waiting.splice(0)) done(error);
    outer.emit("error", error);
    outer.emit("close", true);
    outer.removeAllListeners();
    outer.on("error", () => {});
    outer.destroy();
  }
  return outer;
}
