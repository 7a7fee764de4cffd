/**
 * A PostgreSQL session's TCP socket that reads into one buffer of its own
 * (node:net's `onread`) instead of a new 64 KiB buffer for each read. Each
 * read's buffer lived until the next garbage collection: five 3 MB cells
 * read at eight at once held about 80 MiB of them at the peak (bench W5),
 * and a socket read 600 MB in 460 ms with a 363 MiB peak against 242 ms and
 * 48 MiB read into its own buffer.
 *
 * What the socket reads is a view of its buffer, valid only until its
 * `data` event returns: dbport's own reader (pg_read.ts, on a wired socket,
 * pg_wire.ts) reads it in place and copies what it keeps; anyone else on the
 * socket (postgres.js, which keeps a message's unread part) gets a copy
 * (pg_wire.ts `wired`, {@linkcode ownCopy}).
 *
 * @module
 */

import { Buffer } from "node:buffer";
import { connect, type NetConnectOpts, type Socket } from "node:net";

/** One socket's read buffer: what one read of the socket takes at most. */
const READ_BYTES = 64 * 1024;

/** The read buffers' memory, to know a view of one. */
const readBuffers = new WeakSet<ArrayBufferLike>();

/** Sockets whose reads are handed on as views (wired: pg_wire.ts). */
const viewsTaken = new WeakSet<object>();

/**
 * A TCP socket to `host`:`port` that reads into a buffer of its own, with
 * Nagle's delay off. Its `data` events carry copies until
 * {@linkcode takesViews} is called for it.
 */
export function connectReading(port: number, host: string): Socket {
  const memory = new ArrayBuffer(READ_BYTES);
  readBuffers.add(memory);
  const buffer = Buffer.from(memory);
  const options = {
    port,
    host,
    onread: {
      buffer,
      callback: (read: number) => {
        const view = buffer.subarray(0, read);
        socket.emit("data", viewsTaken.has(socket) ? view : Buffer.from(view));
        return true;
      },
    },
  } as NetConnectOpts;
  const socket = connect(options);
  return socket.setNoDelay(true);
}

/**
 * From now on `socket`'s `data` events carry views of its read buffer: its
 * one listener (pg_wire.ts `wired`) copies what it passes on.
 */
export function takesViews(socket: object): void {
  viewsTaken.add(socket);
}

/**
 * `chunk` as a listener other than dbport's reader may keep it: a copy when
 * it is a view of a socket's read buffer, else itself.
 */
export function ownCopy(chunk: Uint8Array): Uint8Array {
  return readBuffers.has(chunk.buffer) ? Buffer.from(chunk) : chunk;
}
