/**
 * A PostgreSQL session's socket, shared between postgres.js and dbport's own
 * read path (pg_read.ts). postgres.js keeps connecting, authenticating, the
 * SSH tunnel, the cancel request and every statement of dbport's own; a read
 * borrows the socket of a session postgres.js has reserved for it, writes its
 * whole exchange in one write and reads the answer itself, then hands the
 * session back as postgres.js left it.
 *
 * How the session is found without a round trip: the read asks postgres.js
 * to send a marker (a simple query that is only a comment naming the read);
 * the socket's `write`, patched here, recognises it, does not send it, and
 * gives the socket to the read instead. postgres.js then waits for the
 * marker's answer, sends nothing else, and the read owns the socket until it
 * gives postgres.js that answer (an empty query's, as the server would).
 * Under TLS the socket patched is the TLS socket's clear side: dbport
 * negotiates TLS itself (pg_tls.ts) and postgres.js never sees ciphertext.
 *
 * @module
 */

import { Buffer } from "node:buffer";
import type { Duplex } from "node:stream";
import { ownCopy, takesViews } from "./pg_socket_reads.ts";

/** What a borrowed socket hands its borrower. */
export interface WireUser {
  /** Bytes from the server. */
  data(chunk: Uint8Array): void;
  /** The socket closed or failed under the borrower. */
  closed(error: Error): void;
  /** The socket is the borrower's: `write` sends on it. */
  start(wire: Wire): void;
}

/** One session's socket, with dbport's hooks on it. */
export interface Wire {
  /** Send bytes to the server. */
  write(bytes: Uint8Array): void;
  /** Give the socket back to postgres.js, with the marker's answer. */
  release(): void;
  /**
   * Keep the socket from postgres.js, idle, between reads (pg_parked.ts):
   * postgres.js still waits for the marker's answer. Any byte from the
   * server meanwhile closes the session (nothing is asked: a notice, a
   * setting or a FATAL is a session no read should get); `trouble` is told
   * of that (`spoke`: true) and of the socket closing (false).
   */
  hold(trouble?: (spoke: boolean) => void): void;
  /** Lend the held socket to `user` (its `start` is called now). */
  lend(user: WireUser): void;
  /** Close the session under postgres.js (it sees the socket close). */
  destroy(): void;
  /** Settles once the socket closed and postgres.js saw it close. */
  closed(): Promise<void>;
  /** What dbport's reads set on this session, while postgres.js sent nothing. */
  readonly session: WireSession;
}

/**
 * Session-level settings dbport's lean reads set on one session (pg_read.ts):
 * null until a read set it, and again as soon as postgres.js writes anything
 * on the socket (its paths end with `DISCARD ALL`, which resets them).
 */
export interface WireSession {
  /** Whether a read set `default_transaction_read_only = on` itself. */
  readOnly: boolean;
  /** `statement_timeout` in ms, as a read set it. */
  timeout: number | null;
  /** `application_name`, as a read set it. */
  app: string | null;
}

/**
 * Writes sent to the server on wired sockets, by whom, and the markers
 * caught (a session lent by postgres.js): what tests count
 * (tests/db/pg_read_test.ts, tests/db/pg_parked_test.ts).
 */
export const wireWrites = { reads: 0, postgresJs: 0, markers: 0 };

const PREFIX = "-- dbport read ";
const MARKER_CHARS = 1024;
const PREFIX_BYTES = new TextEncoder().encode(PREFIX);
/** Reads waiting for their marker to be written, by number. */
const waiting = new Map<number, WireUser>();
let next = 1;

/** The empty query's answer postgres.js waits for: `I`, then `Z` idle. */
const MARKER_ANSWER = Uint8Array.of(
  0x49,
  0,
  0,
  0,
  4,
  0x5a,
  0,
  0,
  0,
  5,
  0x49,
);

/**
 * Register a read waiting for its socket; returns the marker's text, to be
 * sent by postgres.js as a simple query, and a function that forgets the
 * read (once it started, or when it will never start).
 */
export function awaitWire(user: WireUser): { marker: string; forget(): void } {
  const id = next++;
  if (next > 2 ** 30) next = 1;
  waiting.set(id, user);
  // Padded to 1 KiB: postgres.js writes a message that size at once rather
  // than at the next setImmediate (its write batching), so the read starts
  // in the same turn. The marker is never sent, so its size costs nothing.
  const marker = `${PREFIX}${id} `.padEnd(MARKER_CHARS, " ");
  return { marker, forget: () => waiting.delete(id) };
}

/** The read a chunk postgres.js writes names, when it is exactly a marker. */
function markerOf(chunk: Uint8Array): number | null {
  // 'Q', int32 length, the text, NUL.
  if (chunk[0] !== 0x51 || chunk.length < 6 + PREFIX_BYTES.length) return null;
  const length = (chunk[1]! << 24 | chunk[2]! << 16 | chunk[3]! << 8 |
    chunk[4]!) >>> 0;
  if (length !== chunk.length - 1 || chunk[chunk.length - 1] !== 0) return null;
  if (chunk.length !== 6 + MARKER_CHARS) return null;
  for (let i = 0; i < PREFIX_BYTES.length; i++) {
    if (chunk[5 + i] !== PREFIX_BYTES[i]) return null;
  }
  let id = 0;
  let i = 5 + PREFIX_BYTES.length;
  for (; i < chunk.length - 1 && chunk[i] !== 0x20; i++) {
    const digit = chunk[i]! - 0x30;
    if (digit < 0 || digit > 9) return null;
    id = id * 10 + digit;
  }
  // The rest is the padding.
  for (; i < chunk.length - 1; i++) if (chunk[i] !== 0x20) return null;
  return id;
}

type Emit = (event: string | symbol, ...args: unknown[]) => boolean;
type Write = (chunk: Uint8Array, ...rest: unknown[]) => boolean;

/** A wired socket's own state, shared by its `Wire` and its patches. */
interface Borrowable {
  readonly socket: Duplex;
  /** The socket's own `emit` and `write`, from before the patch. */
  readonly emit: Emit;
  readonly write: Write;
  /** The read that owns the socket now, if any. */
  owner: WireUser | null;
  isClosed: boolean;
  /** Waiting for the socket's close (`Wire.closed`). */
  readonly onClosed: (() => void)[];
  readonly session: WireSession;
}

/**
 * Patch `socket` so that dbport's reads can borrow it; returns it. Every
 * event and write passes through unchanged but a marker's and, while a read
 * owns the socket, the server's bytes. `counted` false: postgres.js's
 * writes on it are not counted in `wireWrites` (the own pool's sockets,
 * wired only to be closed one at a time).
 */
export function wired<T extends Duplex>(socket: T, counted = true): T {
  const state: Borrowable = {
    socket,
    emit: socket.emit.bind(socket) as Emit,
    write: socket.write.bind(socket) as Write,
    owner: null,
    isClosed: false,
    onClosed: [],
    session: { readOnly: false, timeout: null, app: null },
  };
  // A socket reading into its own buffer (pg_socket_reads.ts) hands this
  // patch views of it: the reader reads them in place.
  takesViews(socket);
  const wire = wireOf(state);
  (socket as unknown as { emit: Emit }).emit = (event, ...args) =>
    wiredEmit(state, event, args);
  (socket as unknown as { write: Write }).write = (chunk, ...rest) =>
    wiredWrite(state, wire, counted, chunk, rest);
  return socket;
}

/** The `Wire` a read borrows the socket of `state` by. */
function wireOf(state: Borrowable): Wire {
  const { socket } = state;
  const wire: Wire = {
    session: state.session,
    write: (bytes) => {
      wireWrites.reads++;
      state.write(bytes);
    },
    release: () => {
      state.owner = null;
      // As if the server answered the marker: postgres.js resolves it.
      state.emit("data", Buffer.from(MARKER_ANSWER));
    },
    hold: (trouble) => {
      state.owner = {
        data: () => {
          trouble?.(true);
          socket.destroy();
        },
        closed: () => trouble?.(false),
        start: () => {},
      };
    },
    lend: (user) => {
      state.owner = user;
      user.start(wire);
    },
    destroy: () => {
      state.owner = null;
      socket.destroy();
    },
    closed: () =>
      state.isClosed
        ? Promise.resolve()
        : new Promise<void>((resolve) => state.onClosed.push(resolve)),
  };
  return wire;
}

/**
 * The socket's events: the server's bytes to the read that owns it, if
 * any, and its close or error to that read too; the rest to postgres.js.
 */
function wiredEmit(
  state: Borrowable,
  event: string | symbol,
  args: unknown[],
): boolean {
  if (state.owner !== null) {
    if (event === "data") {
      toOwner(state, state.owner, args[0] as Uint8Array);
      return true;
    }
    if (event === "close" || event === "error" || event === "end") {
      const user = state.owner;
      if (event !== "end") state.owner = null;
      user.closed(
        event === "error" && args[0] instanceof Error ? args[0] : closedError(),
      );
    }
  }
  // A view of the socket's read buffer is valid only in this event:
  // postgres.js keeps a message's unread part for the next one.
  const result = event === "data"
    ? state.emit(event, ownCopy(args[0] as Uint8Array))
    : state.emit(event, ...args);
  if (event === "close") {
    // postgres.js's own close handler has run by now.
    state.isClosed = true;
    for (const resolve of state.onClosed.splice(0)) resolve();
  }
  return result;
}

/** The server's bytes, `chunk`, to the read that owns the socket, `user`. */
function toOwner(state: Borrowable, user: WireUser, chunk: Uint8Array): void {
  try {
    user.data(chunk);
  } catch (error) {
    // A fault of dbport's own reader, thrown in the socket's event: it
    // would end the process. The read fails instead, and the session, read
    // to an unknown point, is closed.
    state.owner = null;
    user.closed(readerFault(error));
    state.socket.destroy();
  }
}

/**
 * postgres.js's writes: a marker of a waiting read lends it the socket
 * (never written); anything else is written, and may change the session's
 * settings.
 */
function wiredWrite(
  state: Borrowable,
  wire: Wire,
  counted: boolean,
  chunk: Uint8Array,
  rest: unknown[],
): boolean {
  if (state.owner === null && chunk instanceof Uint8Array) {
    const id = markerOf(chunk);
    const user = id === null ? undefined : waiting.get(id);
    if (user !== undefined && id !== null) {
      waiting.delete(id);
      wireWrites.markers++;
      state.owner = user;
      const done = rest.find((item) => typeof item === "function") as
        | (() => void)
        | undefined;
      if (done !== undefined) queueMicrotask(done);
      user.start(wire);
      return true;
    }
  }
  if (counted) wireWrites.postgresJs++;
  // Whatever postgres.js sends may change the session's settings.
  state.session.readOnly = false;
  state.session.timeout = null;
  state.session.app = null;
  return state.write(chunk, ...rest);
}

/** A fault of the reader itself, as the read's error. */
function readerFault(error: unknown): Error {
  const message = error instanceof Error ? error.message : String(error);
  return new Error(
    `dbport could not read the database's answer (${message}); the database session was closed`,
  );
}

/** The loss of a session under a read, as postgres.js names it. */
function closedError(): Error {
  return Object.assign(new Error("the database session closed mid-read"), {
    code: "CONNECTION_CLOSED",
  });
}
