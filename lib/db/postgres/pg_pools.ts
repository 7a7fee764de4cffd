/**
 * A PostgreSQL driver's two pools: the reads' (wired where it can be, and
 * replaced whole when one of its sessions is lost while reserved) and
 * dbport's own statements' (the catalog, a statement's vetting), never
 * wired — postgres.js hands a session to a waiting `reserve()` while
 * statements it queued on it are still unanswered, and a wired read would
 * then read their answers as its own (issue 38: a read answered with a
 * catalog query's rows, or with none).
 *
 * @module
 */

import { connect as tcpConnect } from "node:net";
import postgres from "postgres";
import { type PostgresConfig, postgresOptions } from "./pg_options.ts";
import { poolRetired, retirePool } from "./pg_session.ts";
import { wired } from "./pg_wire.ts";
import { wireTarget } from "./pg_wired.ts";
import type { Duplex } from "node:stream";

type Sql = ReturnType<typeof postgres>;

/** The environment variable that turns the wired reader off (`0`). */
export const WIRE_ENV = "DBPORT_PG_WIRE";

/** The pools of one PostgreSQL database. */
export class PgPools {
  /** The reads' pool now: callers read it at each call. */
  sql: Sql;
  /** dbport's own statements' pool (at most 2 sessions, never wired). */
  readonly meta: Sql;
  /**
   * A plain socket to the server for the protocol's cancel request; null
   * when reads take postgres.js's path (TLS, a Unix socket, several hosts,
   * or the wired reader turned off).
   */
  readonly plainSocket: (() => Promise<Duplex>) | null;
  readonly #create: () => Sql;
  readonly #retired = new Set<Promise<void>>();
  /** Set by `close`: a pool lost after it is not replaced. */
  #closed = false;

  constructor(config: PostgresConfig) {
    const options = postgres(config.url, postgresOptions(config))
      .options as never;
    // A plain TCP socket, or the tunnel's: null under TLS, a Unix socket or
    // a list of hosts, which postgres.js opens itself.
    const target = wireTarget(config.socket, options);
    const open = target === null
      ? null
      : () =>
        config.socket === undefined
          ? Promise.resolve(
            tcpConnect(target.port, target.host).setNoDelay(true),
          )
          : config.socket();
    // Reads speak the protocol themselves on a wired socket (pg_read.ts),
    // which needs the session's bytes in clear: not under TLS.
    const wiredReads = config.wiredReads ?? Deno.env.get(WIRE_ENV) !== "0";
    this.plainSocket = wiredReads ? open : null;
    const plain = this.plainSocket;
    const socket = plain === null
      ? open ?? undefined
      : async () => wired(await plain());
    this.#create = () => {
      const pool: Sql = postgres(
        config.url,
        postgresOptions(
          config,
          untilEnded(() => pool, socket, () => poolRetired(pool)),
        ),
      );
      return pool;
    };
    this.sql = this.#create();
    const meta: Sql = postgres(config.url, {
      ...postgresOptions(
        config,
        untilEnded(() => meta, open ?? undefined, () => this.#closed),
      ),
      max: 2,
    });
    this.meta = meta;
  }

  /**
   * What replaces `pool` after it lost a session while reserved; a session
   * of a pool already replaced changes nothing (it would end the healthy
   * one).
   */
  lostFrom(pool: Sql): () => void {
    return () => {
      // Once closed, nothing replaces it: a read that lost its session
      // while the driver closed put a fresh pool in its place, which then
      // answered reads of the closed driver and was never ended (its
      // sessions idled for the idle timeout).
      if (pool !== this.sql || this.#closed) return;
      this.sql = this.#create();
      // Reads still waiting for one of its sessions fail now, not never;
      // its parked sessions are back before it ends.
      const ending = retirePool(pool).then(() => endPool(pool, 5))
        .finally(() => this.#retired.delete(ending));
      this.#retired.add(ending);
    };
  }

  /**
   * End both pools and the ones replaced. A read still waiting for a
   * session of the reads' pool fails at once: postgres.js never settles a
   * `reserve()` left waiting on a pool that is ending (a driver closed
   * after one call lost its session, while another asked again: that read
   * waited for ever).
   */
  async close(): Promise<void> {
    this.#closed = true;
    // A parked session is reserved: postgres.js would wait for it to end.
    await retirePool(this.sql, "the connection was closed");
    await Promise.all([endPool(this.sql, 1), endPool(this.meta, 1)]);
    await Promise.allSettled([...this.#retired]);
  }
}

/** Pools whose `end()` settled: they open no session more. */
const ended = new WeakSet<object>();

/** End `pool`, giving its statements `seconds`; settles once it ended. */
function endPool(pool: Sql, seconds: number): Promise<void> {
  return pool.end({ timeout: seconds }).catch(() => {}).finally(() => {
    ended.add(pool);
  });
}

/**
 * `open`, refused once the pool `pool()` names has ended, and from when
 * `refusing()` says (its reads' pool retired, the driver closing) good for a
 * cancel request alone. postgres.js reconnects an ending or ended pool's
 * session for a statement or a `reserve()` it still holds — one dbport
 * refused (pg_session.ts `retirePool`), or a catalog statement queued as
 * the driver closed — and that session then idled for the idle timeout
 * after the driver was closed (tests/db/outsider_stop46_test.ts). A cancel
 * request, which postgres.js sends on a socket of its own, still goes out
 * until the pool has ended. Undefined where postgres.js opens its own
 * sockets (TLS, a Unix socket, several hosts).
 */
function untilEnded(
  pool: () => Sql,
  open: (() => Promise<Duplex>) | undefined,
  refusing: () => boolean,
): (() => Promise<Duplex>) | undefined {
  if (open === undefined) return undefined;
  return async () => {
    if (ended.has(pool())) throw poolEnded();
    const socket = await open();
    return refusing() ? cancelsOnly(socket) : socket;
  };
}

type Write = (chunk: unknown, ...rest: unknown[]) => boolean;

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
