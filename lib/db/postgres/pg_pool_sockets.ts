/**
 * The sockets a PostgreSQL driver's pools hand postgres.js (pg_pools.ts
 * `PgPools`), and the end of a pool: each pool's sockets counted from their
 * open to their close (`socketsGone`), refused once the pool ends and good
 * for a cancel request alone once it is retired (`untilEnded`), reopened
 * without postgres.js's backoff once refused (`noWaitOnceRefused`), and a
 * session of the own pool told it is ready when postgres.js skipped its
 * array types' query (`openedForReserve`).
 *
 * @module
 */

import { Buffer } from "node:buffer";
import type postgres from "postgres";
import { reopenDelay } from "./pg_options.ts";
import { requeueWaiters } from "./pg_reserve.ts";
import { followStartup } from "./pg_startup.ts";
import type { Duplex } from "node:stream";

type Sql = ReturnType<typeof postgres>;

/** Pools being ended or ended: they open no session more. */
const ended = new WeakSet<object>();

/** Whether `pool` is being ended or has ended (`endPool`). */
export function hasEnded(pool: object): boolean {
  return ended.has(pool);
}

/**
 * End `pool`, giving its statements `seconds`; settles once it ended. From
 * the start it opens no socket: its calls were stopped (and their cancel
 * requests sent) before, and postgres.js, reopening a session for a queued
 * item while it ends, otherwise left that session's timers running after
 * the driver closed.
 */
export function endPool(pool: Sql, seconds: number): Promise<void> {
  ended.add(pool);
  return pool.end({ timeout: seconds }).catch(() => {});
}

/** The sockets `untilEnded` opens and opened for one pool. */
interface PoolSockets {
  /** Opened and not closed yet. */
  readonly live: Set<Duplex>;
  /** Being opened. */
  opening: number;
  /** Who waits for none to be open or opening (`socketsGone`). */
  readonly waiting: (() => void)[];
  /** Wake who waits, once none is open or opening. */
  settle(): void;
}

const poolSockets = new WeakMap<object, PoolSockets>();

function socketsOf(pool: object): PoolSockets {
  let sockets = poolSockets.get(pool);
  if (sockets === undefined) {
    const made: PoolSockets = {
      live: new Set(),
      opening: 0,
      waiting: [],
      settle() {
        if (made.live.size > 0 || made.opening > 0) return;
        for (const resolve of made.waiting.splice(0)) resolve();
      },
    };
    sockets = made;
    poolSockets.set(pool, sockets);
  }
  return sockets;
}

/**
 * Settles once no socket of `pool` is open or being opened (or after
 * `ms`), and the turn after: a session postgres.js opened as its pool was
 * replaced is refused at its first write (`cancelsOnly`) and closes a tick
 * later, its connect and lifetime timers running until then; its close
 * schedules the next queued `reserve()`'s reconnection, at once
 * (`noWaitOnceRefused`), which an ended pool refuses without a socket.
 */
export async function socketsGone(pool: object, ms: number): Promise<void> {
  const sockets = socketsOf(pool);
  if (sockets.live.size > 0 || sockets.opening > 0) {
    let timer: ReturnType<typeof setTimeout> | undefined;
    await new Promise<void>((resolve) => {
      sockets.waiting.push(resolve);
      timer = setTimeout(resolve, ms);
    });
    clearTimeout(timer);
  }
  await new Promise((resolve) => setTimeout(resolve, 0));
}

/**
 * postgres.js's backoff (pg_options.ts `reopenDelay`), none once
 * `refusing()` (the pool replaced, or the driver closing): every session it
 * opens then is refused at its first write (`untilEnded`), so it waits for
 * nothing. postgres.js reopens a closed session for the next `reserve()`
 * queued in the pool after its backoff — up to 1 s after sessions closed
 * with errors — on a timer that the pool's `end()` does not clear: reads
 * asked again while a lost session replaced the pool had queued
 * `reserve()`s in it, and those timers ran on past the driver's close
 * (session_gone_test's replaced pool on a loaded CI machine: "a timer was
 * started in this test, but never completed"). Without the wait, what the
 * pool still holds is refused within a few turns of the event loop.
 */
export function noWaitOnceRefused(
  refusing: () => boolean,
): (retries: number) => number {
  return (retries) => refusing() ? 0 : reopenDelay(retries);
}

/**
 * `open`, refused once the pool `pool()` names starts ending (`endPool`), and from when
 * `refusing()` says (its reads' pool retired, the driver closing) good for a
 * cancel request alone. postgres.js reconnects an ending or ended pool's
 * session for a statement or a `reserve()` it still holds — one dbport
 * refused (pg_retire.ts `retirePool`), or a catalog statement queued as
 * the driver closed — and that session then idled for the idle timeout
 * after the driver was closed (tests/db/outsider_stop46_test.ts). A cancel
 * request, which postgres.js sends on a socket of its own, still goes out
 * until the pool starts ending. Undefined where postgres.js opens its own
 * sockets (a Unix socket).
 */
export function untilEnded(
  pool: () => Sql,
  open: (() => Promise<Duplex>) | undefined,
  refusing: () => boolean,
  failure?: () => Error | null,
): (() => Promise<Duplex>) | undefined {
  if (open === undefined) return undefined;
  return async () => {
    if (ended.has(pool())) throw poolEnded();
    const sockets = socketsOf(pool());
    sockets.opening++;
    let socket: Duplex;
    try {
      socket = await open();
    } finally {
      sockets.opening--;
    }
    sockets.live.add(socket);
    socket.once("close", () => {
      sockets.live.delete(socket);
      sockets.settle();
    });
    sockets.settle();
    // Opened while the pool started ending (several hosts tried in turn,
    // a tunnel): refused, and closed, never handed to it.
    if (ended.has(pool())) {
      socket.destroy();
      throw poolEnded();
    }
    // A session that closes while reads wait for one — the server or an
    // administrator ended it, even one dbport held for its cancel request's
    // delivery — is reopened by postgres.js for the first waiting
    // `reserve()`, which it then forgets (pg_reserve.ts `requeueWaiters`):
    // once postgres.js has seen the close, every waiting read asks again
    // (outsider stop 49b: a read waited its whole timeout with three of
    // the pool's sessions idle).
    // (A microtask: it runs once the close event's other listeners —
    // postgres.js's own — have run; a timer would outlive a closed driver.)
    // Where the socket's hosts could not be used at all (every host of a
    // several-host URL down, or none matching), the waiting reads fail
    // with that rather than ask again until their timeout.
    socket.once("close", () => {
      queueMicrotask(() => requeueWaiters(pool(), failure?.() ?? undefined));
    });
    return refusing() ? cancelsOnly(socket) : socket;
  };
}

type Write = (chunk: unknown, ...rest: unknown[]) => boolean;
type Emit = (event: string | symbol, ...args: unknown[]) => boolean;

/** ReadyForQuery, idle: what postgres.js takes as a session ready. */
const READY_IDLE = Uint8Array.of(0x5a, 0, 0, 0, 5, 0x49);

/**
 * `socket`, a session of the own pool opened without postgres.js's array
 * types' query, on which postgres.js is told once more that the session is
 * ready right after the server's own first ReadyForQuery. postgres.js
 * 3.4.9 opening a session for a `reserve()` with `fetch_types` off drops
 * the `reserve()` at that first ReadyForQuery and leaves the session
 * connecting for good (connection.js `ReadyForQuery`: `initial = null`,
 * and nothing calls `onopen`); its second ReadyForQuery hands the session
 * to the first waiting `reserve()` (`onopen`). The own pool's sessions are
 * only ever opened for a `reserve()` (pg_own.ts), never for a statement
 * that the extra message would answer.
 */
export function openedForReserve(
  socket: Duplex,
  typesSkipped: () => boolean,
): Duplex {
  // The socket's own emit: the injected message goes past the framing below.
  const emit = socket.emit.bind(socket) as Emit;
  // Decided as postgres.js starts the session: it reads `fetch_types` and
  // then, in the same turn, listens to the socket's data.
  let inject: boolean | null = null;
  type On = (event: string, listener: (...args: unknown[]) => void) => Duplex;
  const on = socket.on.bind(socket) as On;
  (socket as unknown as { on: On }).on = (event, listener) => {
    if (event === "data" && inject === null) inject = typesSkipped();
    return on(event, listener);
  };
  followStartup(socket, (type) => {
    if (type !== 0x5a) return false;
    // After postgres.js has read the server's own ReadyForQuery: the chunk
    // carrying it reaches postgres.js before this microtask runs.
    if (inject === true) {
      queueMicrotask(() => {
        if (!socket.destroyed) emit("data", Buffer.from(READY_IDLE));
      });
    }
    return true;
  });
  return socket;
}

/**
 * `socket`, closed with an error unless the first thing written on it is
 * the protocol's cancel request (postgres.js writes a session's startup
 * message, or a cancel request, first and alone).
 */
function cancelsOnly(socket: Duplex): Duplex {
  const write = socket.write.bind(socket) as Write;
  let first = true;
  (socket as unknown as { write: Write }).write = (chunk, ...rest) => {
    if (first) {
      first = false;
      if (!isCancelRequest(chunk)) {
        socket.destroy(poolEnded());
        return false;
      }
    }
    return write(chunk, ...rest);
  };
  return socket;
}

/** Whether `chunk` is a cancel request: length 16, code 80877102. */
function isCancelRequest(chunk: unknown): boolean {
  if (!(chunk instanceof Uint8Array) || chunk.length !== 16) return false;
  const view = new DataView(chunk.buffer, chunk.byteOffset, 16);
  return view.getInt32(0) === 16 && view.getInt32(4) === 80877102;
}

function poolEnded(): Error {
  return Object.assign(
    new Error("the connection's pool was replaced or closed"),
    { code: "CONNECTION_ENDED" },
  );
}
