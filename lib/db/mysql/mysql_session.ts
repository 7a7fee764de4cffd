/**
 * MySQL/MariaDB sessions: the driver's state (a lazily-connecting mysql2
 * pool and how to open a session of its own), taking a session from the pool,
 * setting it up, and giving it back clean.
 *
 * Every pooled session is read-only (`SET SESSION tx_read_only = 1`, which
 * also refuses DDL, whose implicit commit would otherwise escape a read-only
 * transaction); a session that wrote, or whose statement was killed, is
 * never pooled again.
 *
 * @module
 */

import type { Duplex } from "node:stream";
import mysql from "mysql2";
import { guardRows } from "./mysql_row_guard.ts";
import { CONNECT_TIMEOUT_MS, toDbError } from "./mysql_errors.ts";
import { discard, kill } from "./mysql_cut.ts";
import {
  noSession,
  notStarted,
  stoppable,
  throwIfAborted,
} from "../stoppable.ts";
import { type Alarm, alarm } from "../../base/alarms.ts";
import { lenientDecode } from "../target.ts";

/** How to reach one MySQL or MariaDB database. */
export interface MysqlConfig {
  url: string;
  password?: string;
  secrets: readonly string[];
  idleMs?: number;
  /**
   * Each session's stream, when it is not a TCP connection of its own: a
   * channel through an SSH tunnel (also for KILL QUERY's side connection).
   */
  stream?: () => Duplex;
}

/** A pooled session. */
export type Connection = mysql.PoolConnection;
/** A row of dbport's own statements, by column name. */
export type Row = Record<string, unknown>;
/** mysql2's options for one session, pooled or of its own. */
export type SessionOptions = mysql.ConnectionOptions;

/** What every part of the driver shares: its pool and how to connect. */
export interface MysqlState {
  /** The URL's database, if it names one. */
  database: string | null;
  /** How a session connects: the pool's and every side connection's. */
  base: SessionOptions;
  pool: mysql.Pool;
  /** Redacted from every message. */
  secrets: readonly string[];
}

/** The driver's state; nothing connects until the first session is taken. */
export function mysqlState(config: MysqlConfig): MysqlState {
  const database = lenientDecode(new URL(config.url).pathname.slice(1)) ||
    null;
  const base: SessionOptions = {
    uri: config.url,
    ...(config.password === undefined ? {} : { password: config.password }),
    connectTimeout: CONNECT_TIMEOUT_MS,
    supportBigNumbers: true,
    bigNumberStrings: true,
    dateStrings: true,
    // MySQL's JSON type as text, read by jsonCell: parsed by the driver, a
    // JSON null document would be indistinguishable from SQL NULL.
    jsonStrings: true,
    multipleStatements: false,
    // mysql2 clears its prepared-statement cache at every RESET CONNECTION,
    // filling arrays of this length (16,000 by default: 5% of a read's CPU,
    // bench W4). dbport prepares a statement only to check one.
    maxPreparedStatements: 16,
    ...(config.stream === undefined ? {} : { stream: config.stream }),
  };
  // One pool for reads, writes, exports and dbport's own statements alike:
  // a pool of the catalog's own (PostgreSQL's `meta`) would hold sessions of
  // the AI login's eight (MAX_USER_CONNECTIONS), which each stop's KILL QUERY
  // side connection needs — with two more open, two of four reads stopped at
  // once were refused their KILL and ran on (docs/performance.md "MariaDB:
  // waiting for a session"). A call waits for a session no longer than its
  // timeout (`acquire`).
  const pool = mysql.createPool({
    ...base,
    connectionLimit: 4,
    maxIdle: 4,
    idleTimeout: config.idleMs ?? 60_000,
  });
  pool.on("connection", (connection) => {
    guardRows(connection);
    setUp(connection).catch(() => connection.destroy());
  });
  return { database, base, pool, secrets: config.secrets };
}

/** End every session of the pool. */
export function closeMysql(state: MysqlState): Promise<void> {
  return new Promise<void>((resolve) => state.pool.end(() => resolve()));
}

/**
 * A session from the pool; the caller's cancel once `signal` aborts; or,
 * once `timeoutMs` ran out while the call waited in the pool's queue (every
 * session held by other calls), a timeout, as PostgreSQL's
 * `reserveSession` says it: mysql2's `getConnection` waits for as long as
 * the sessions are held and knows no timeout or signal (outsider stop 50: a
 * `select 1` with 1 s waited for as long as another client's four reads
 * held the sessions on a lock, and on after its caller cancelled). A
 * session mysql2 hands over after the caller gave up goes straight back to
 * the pool. A call for which mysql2 opens a session rather than queue it
 * keeps mysql2's connect timeout (`connect_timeout` after 10 s, which tells
 * the driver's pool the database did not answer), but not past a cancel.
 */
export function acquire(
  state: MysqlState,
  options: { signal: AbortSignal; timeoutMs: number },
): Promise<Connection> {
  const { signal, timeoutMs } = options;
  throwIfAborted(signal);
  const { pool } = state;
  return new Promise<Connection>((resolve, reject) => {
    let waiting = true;
    let timer: Alarm | undefined;
    const settle = () => {
      waiting = false;
      timer?.clear();
      signal.removeEventListener("abort", onAbort);
    };
    const onAbort = () => {
      if (!waiting) return;
      settle();
      reject(notStarted());
    };
    signal.addEventListener("abort", onAbort, { once: true });
    // mysql2 says, before getConnection returns, when it queues the call.
    let queued = false;
    const onQueued = () => queued = true;
    pool.on("enqueue", onQueued);
    try {
      pool.getConnection((error, connection) => {
        if (!waiting) {
          // Given up on: the next caller's, or the pool's idle set's.
          if (!error) connection.release();
          return;
        }
        settle();
        if (error) reject(toDbError(error, state.secrets));
        else resolve(connection);
      });
    } finally {
      pool.off("enqueue", onQueued);
    }
    if (queued && waiting) {
      timer = alarm(timeoutMs, () => {
        if (!waiting) return;
        settle();
        reject(noSession(timeoutMs));
      });
    }
  });
}

/** Run dbport's own statement on a pooled session with the caller's limits. */
export async function exec(
  state: MysqlState,
  text: string,
  params: unknown[],
  options: { signal: AbortSignal; timeoutMs: number },
): Promise<Row[]> {
  const connection = await acquire(state, options);
  let killed = false;
  try {
    return await stoppable(
      () => rowsOf(connection, text, params),
      options,
      () => {
        killed = true;
        return kill(state.base, connection.threadId);
      },
    );
  } catch (error) {
    throw toDbError(error, state.secrets);
  } finally {
    if (killed) discard(connection);
    else connection.release();
  }
}

/** A statement's rows, by column name. */
export function rowsOf(
  connection: mysql.Connection,
  text: string,
  params: unknown[],
): Promise<Row[]> {
  return new Promise<Row[]>((resolve, reject) =>
    connection.query(
      text,
      params,
      (error, rows) => error ? reject(error) : resolve(rows as Row[]),
    )
  );
}

/** The quoting rules dbport's lexer reads MySQL statements by. */
export const QUOTING_RULES =
  "sql_mode = TRIM(BOTH ',' FROM REPLACE(REPLACE(CONCAT(',', @@SESSION.sql_mode, ','), ',ANSI_QUOTES,', ','), ',NO_BACKSLASH_ESCAPES,', ','))";

/**
 * How every pooled session starts: read-only, in autocommit, in UTC, and
 * with the quoting rules dbport's lexer reads statements by — `"..."` a
 * string (no ANSI_QUOTES) and backslash escapes on (no
 * NO_BACKSLASH_ESCAPES), whatever the server's global sql_mode says
 * (docs/security.md "The lexer").
 *
 * A plain read runs without a transaction of its own (mysql_read.ts): the
 * session's access mode makes its implicit transaction read-only (an
 * INSERT or DDL fails with 1792, as in `START TRANSACTION READ ONLY`), and
 * autocommit, whatever the server's global `autocommit`, ends that
 * transaction with the statement, so no snapshot outlives the read.
 */
export function setUp(connection: mysql.Connection): Promise<void> {
  // One statement, queued before anything a caller sends on the session (a
  // round trip and a socket write a read, bench W4 MariaDB). The read-only
  // variable has the server's flavour: tx_read_only on every MariaDB
  // (transaction_read_only only from 11.1), transaction_read_only on MySQL
  // 5.7.20+ (tx_read_only is gone from 8.0). Should a server know neither,
  // the SET fails and the session is destroyed: reads fail, never run
  // writable.
  const readOnly = (connection as unknown as { _isMariaDB?: boolean })
      ._isMariaDB
    ? "tx_read_only"
    : "transaction_read_only";
  return simple(
    connection,
    `SET SESSION ${readOnly} = 1, autocommit = 1, time_zone = '+00:00', ${QUOTING_RULES}`,
  );
}

/**
 * Back to the pool after a read: RESET CONNECTION drops user variables,
 * locks, temporary tables and prepared statements the read left, then the
 * session is set up again. A session that cannot be reset is destroyed.
 */
export async function recycle(connection: Connection): Promise<void> {
  try {
    // RESET CONNECTION also rolls back the read's transaction.
    await new Promise<void>((resolve, reject) =>
      connection.reset((error: unknown) => error ? reject(error) : resolve())
    );
    await setUp(connection);
    connection.release();
  } catch {
    connection.destroy();
  }
}

/** Run a statement of dbport's own whose answer is only success or failure. */
export function simple(
  connection: mysql.Connection,
  text: string,
): Promise<void> {
  return new Promise((resolve, reject) =>
    connection.query(text, (error) => (error ? reject(error) : resolve()))
  );
}
