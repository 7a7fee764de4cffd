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
    // Reads speak the protocol themselves on a wired socket (pg_read.ts),
    // which needs the session's bytes in clear: not under TLS.
    const wiredReads = config.wiredReads ?? Deno.env.get(WIRE_ENV) !== "0";
    const target = !wiredReads ? null : wireTarget(
      config.socket,
      postgres(config.url, postgresOptions(config)).options as never,
    );
    this.plainSocket = target === null
      ? null
      : () =>
        config.socket === undefined
          ? Promise.resolve(
            tcpConnect(target.port, target.host).setNoDelay(true),
          )
          : config.socket();
    const plain = this.plainSocket;
    const socket = plain === null
      ? config.socket
      : async () => wired(await plain());
    this.#create = () => {
      const opener = socket;
      if (opener === undefined) {
        return postgres(config.url, postgresOptions(config));
      }
      // A pool replaced or closed opens no session more: postgres.js
      // reconnects an ended pool's session for a reserve() dbport already
      // refused (pg_session.ts `retirePool`), which would then idle for its
      // idle timeout after the pool was closed.
      const pool: Sql = postgres(
        config.url,
        postgresOptions(config, () =>
          poolRetired(pool)
            ? Promise.reject(
              Object.assign(
                new Error("the connection's pool was replaced or closed"),
                { code: "CONNECTION_ENDED" },
              ),
            )
            : opener()),
      );
      return pool;
    };
    this.sql = this.#create();
    this.meta = postgres(config.url, {
      ...postgresOptions(config, config.socket),
      max: 2,
    });
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
      const ending = retirePool(pool).then(() => pool.end({ timeout: 5 }))
        .catch(() => {}).finally(() => this.#retired.delete(ending));
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
    await Promise.all([
      this.sql.end({ timeout: 1 }),
      this.meta.end({ timeout: 1 }),
    ]);
    await Promise.allSettled([...this.#retired]);
  }
}
