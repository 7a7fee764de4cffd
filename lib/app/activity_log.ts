/**
 * The activity log in `state.db`: one row per request that reached dispatch
 * and per failed authentication. SQL text is never stored, only its SHA-256
 * digest; a presented token is never stored at all.
 *
 * Writes are batched: entries queue in memory and are written in one
 * transaction every 100 ms, so logging never holds up a request. Rows older
 * than 90 days are pruned when the log opens.
 *
 * @module
 */

import { oneOf } from "../base/one_of.ts";
import {
  BRIDGE_EXECUTABLE,
  BRIDGE_TOKEN_NAME,
  isBridgeItself,
} from "../base/identity.ts";
import type { InValue, Row } from "./state_client.ts";
import { BatchWriter } from "./batch_writer.ts";
import type { StateDb } from "./state_db.ts";
import type { StatRow } from "./activity_stats.ts";
import { type Outcome, OUTCOMES } from "./outcome.ts";

export { OUTCOMES } from "./outcome.ts";
export type { Outcome } from "./outcome.ts";
/** Who made a request. */
export const PRINCIPAL_KINDS = [
  "anonymous",
  "token",
  "bridge",
  "unauthenticated",
] as const;

/** One logged request. */
export interface ActivityEntry {
  time: number;
  principalKind: typeof PRINCIPAL_KINDS[number];
  tokenId: string | null;
  tokenName: string | null;
  clientName: string | null;
  clientVersion: string | null;
  method: string | null;
  /** The tool name or resource URI the request named. */
  target: string | null;
  connectionId: string | null;
  outcome: Outcome;
  /** The JSON-RPC error code, when the request ended with one. */
  errorCode: number | null;
  durationMs: number;
  /** Hex SHA-256 of the SQL text the call carried. */
  sqlDigest: string | null;
  traceparent: string | null;
  tracestate: string | null;
  baggage: string | null;
  /** A short, already redacted note (the tool error code, why auth failed). */
  detail: string | null;
}

/** A stored entry with its row id. */
export interface ActivityRow extends ActivityEntry {
  id: number;
}

/** A client seen recently, from the log. */
export interface ClientSeen {
  name: string;
  version: string | null;
  tokenName: string | null;
  firstSeen: number;
  lastSeen: number;
  requests: number;
}

/** How long rows are kept. */
export const ACTIVITY_RETENTION_MS = 90 * 86_400_000;

/** A client counts as connected while it was seen this recently. */
export const CLIENT_WINDOW_MS = 5 * 60_000;

/**
 * Leaves out the bridge's own requests (see `isBridgeItself`); `IS`, not
 * `=`, so a row without a token name is kept rather than lost to NULL.
 */
const NOT_BRIDGE_ITSELF = "NOT (token_name IS ? AND client_name IS ?)";
const BRIDGE_ITSELF_ARGS = [BRIDGE_TOKEN_NAME, BRIDGE_EXECUTABLE];

const COLUMNS = [
  "time",
  "principal_kind",
  "token_id",
  "token_name",
  "client_name",
  "client_version",
  "method",
  "target",
  "connection_id",
  "outcome",
  "error_code",
  "duration_ms",
  "sql_digest",
  "traceparent",
  "tracestate",
  "baggage",
  "detail",
] as const;

function toArgs(entry: ActivityEntry): InValue[] {
  return [
    entry.time,
    entry.principalKind,
    entry.tokenId,
    entry.tokenName,
    entry.clientName,
    entry.clientVersion,
    entry.method,
    entry.target,
    entry.connectionId,
    entry.outcome,
    entry.errorCode,
    entry.durationMs,
    entry.sqlDigest,
    entry.traceparent,
    entry.tracestate,
    entry.baggage,
    entry.detail,
  ];
}

/** A column's text, or null. */
function text(value: unknown): string | null {
  return value === null || value === undefined ? null : String(value);
}

function fromRow(row: Row): ActivityRow {
  return {
    id: Number(row.id),
    time: Number(row.time),
    // Rows are written by this module; a value it never writes reads as
    // the least trusted kind and outcome.
    principalKind: oneOf(
      PRINCIPAL_KINDS,
      row.principal_kind,
      "unauthenticated",
    ),
    tokenId: text(row.token_id),
    tokenName: text(row.token_name),
    clientName: text(row.client_name),
    clientVersion: text(row.client_version),
    method: text(row.method),
    target: text(row.target),
    connectionId: text(row.connection_id),
    outcome: oneOf(OUTCOMES, row.outcome, "error"),
    errorCode: row.error_code === null ? null : Number(row.error_code),
    durationMs: Number(row.duration_ms),
    sqlDigest: text(row.sql_digest),
    traceparent: text(row.traceparent),
    tracestate: text(row.tracestate),
    baggage: text(row.baggage),
    detail: text(row.detail),
  };
}

/** The activity log. */
export class ActivityLog {
  readonly #db: StateDb;
  readonly #writer: BatchWriter<ActivityEntry>;

  constructor(db: StateDb, onError: (message: string) => void = () => {}) {
    this.#db = db;
    this.#writer = new BatchWriter(db, {
      table: "activity",
      columns: COLUMNS,
      args: toArgs,
      what: "activity entries",
      onError,
    });
  }

  /** Queue an entry; it is written within about 100 ms. */
  record(entry: ActivityEntry): void {
    this.#writer.push(entry);
  }

  /** Write every queued entry now. */
  flush(): Promise<void> {
    return this.#writer.flush();
  }

  /** Delete rows older than the retention period. */
  async prune(now = Date.now()): Promise<void> {
    await this.#db.client.execute({
      sql: "DELETE FROM activity WHERE time < ?",
      args: [now - ACTIVITY_RETENTION_MS],
    });
  }

  /** The newest `limit` rows after row `afterId`, oldest first. */
  async recent(limit: number, afterId = 0): Promise<ActivityRow[]> {
    const result = await this.#db.client.execute({
      sql: `SELECT * FROM (SELECT * FROM activity WHERE id > ?
              ORDER BY id DESC LIMIT ?) ORDER BY id`,
      args: [afterId, limit],
    });
    return result.rows.map(fromRow);
  }

  /**
   * The newest `limit` rows, newest first, of one client, connection and
   * outcome or any (the console's Activity page).
   */
  async search(filter: {
    clientName?: string;
    connectionId?: string;
    outcome?: Outcome;
    /** Only rows older than this one (the next page). */
    beforeId?: number;
    limit: number;
  }): Promise<ActivityRow[]> {
    await this.flush();
    const where: string[] = [];
    const args: (string | number)[] = [];
    if (filter.beforeId !== undefined) {
      where.push("id < ?");
      args.push(filter.beforeId);
    }
    for (
      const [column, value] of [
        ["client_name", filter.clientName],
        ["connection_id", filter.connectionId],
        ["outcome", filter.outcome],
      ] as const
    ) {
      if (value === undefined) continue;
      where.push(`${column} = ?`);
      args.push(value);
    }
    const result = await this.#db.client.execute({
      sql: `SELECT * FROM activity ${
        where.length === 0 ? "" : `WHERE ${where.join(" AND ")}`
      } ORDER BY id DESC LIMIT ?`,
      args: [...args, filter.limit],
    });
    return result.rows.map(fromRow);
  }

  /**
   * What the Overview sums: the rows since `since` (at most `limit`, the
   * newest), with only the fields a summary needs.
   */
  async since(since: number, limit = 200_000): Promise<StatRow[]> {
    await this.flush();
    const result = await this.#db.client.execute({
      sql: `SELECT time, duration_ms, outcome, client_name, token_name,
              connection_id
            FROM activity WHERE time >= ? ORDER BY id DESC LIMIT ?`,
      args: [since, limit],
    });
    return result.rows.map((row) => ({
      time: Number(row.time),
      durationMs: Number(row.duration_ms),
      outcome: oneOf(OUTCOMES, row.outcome, "error"),
      clientName: row.client_name === null ? null : String(row.client_name),
      connectionId: row.connection_id === null
        ? null
        : String(row.connection_id),
      ...(isBridgeItself(text(row.token_name), text(row.client_name))
        ? { bridgeItself: true }
        : {}),
    }));
  }

  /**
   * Every client name in the log, for a filter's choices (the bridge's own
   * checks are no client).
   */
  async clientNames(): Promise<string[]> {
    const result = await this.#db.client.execute({
      sql: `SELECT DISTINCT client_name FROM activity
            WHERE client_name IS NOT NULL AND ${NOT_BRIDGE_ITSELF}
            ORDER BY client_name LIMIT 500`,
      args: BRIDGE_ITSELF_ARGS,
    });
    return result.rows.map((row) => String(row.client_name));
  }

  /**
   * Clients seen within the window before `now`, most recent first; the
   * bridge's own checks are no client.
   */
  async clients(now = Date.now()): Promise<ClientSeen[]> {
    const result = await this.#db.client.execute({
      sql: `SELECT client_name, client_version, token_name,
              MIN(time) AS first_seen, MAX(time) AS last_seen,
              COUNT(*) AS requests
            FROM activity
            WHERE client_name IS NOT NULL AND principal_kind != 'unauthenticated'
              AND ${NOT_BRIDGE_ITSELF}
            GROUP BY client_name, client_version, token_name
            HAVING MAX(time) >= ?
            ORDER BY last_seen DESC, client_name`,
      args: [...BRIDGE_ITSELF_ARGS, now - CLIENT_WINDOW_MS],
    });
    return result.rows.map((row) => ({
      name: String(row.client_name),
      version: row.client_version === null ? null : String(row.client_version),
      tokenName: row.token_name === null ? null : String(row.token_name),
      firstSeen: Number(row.first_seen),
      lastSeen: Number(row.last_seen),
      requests: Number(row.requests),
    }));
  }

  /** Write what is queued and stop the timer. */
  async close(): Promise<void> {
    await this.flush();
  }
}
