/**
 * The query history in `state.db`: the SQL clients ran, per connection, with
 * when, how long, how many rows, how it ended and which client sent it. Kept
 * only while the `queryHistory` setting is on; rows older than 90 days, and
 * all but the newest 10,000 per connection, are pruned.
 *
 * Writes are queued and written together shortly after, like the activity
 * log's, so recording never holds up a query; reading flushes first, so a
 * client reading the history sees its own last query.
 *
 * @module
 */

import { oneOf } from "../base/one_of.ts";
import type { Row } from "./state_client.ts";
import { BatchWriter } from "./batch_writer.ts";
import type { StateDb } from "./state_db.ts";

/** How a recorded statement ended. */
/** Every outcome of a statement. */
export const HISTORY_OUTCOMES = [
  "success",
  "error",
  "cancelled",
  "timeout",
] as const;
export type HistoryOutcome = typeof HISTORY_OUTCOMES[number];

/** One statement a client ran. */
export interface HistoryEntry {
  time: number;
  connectionId: string;
  sql: string;
  /** The classifier's tier: `read`, `write` or `destructive`. */
  statementType: string;
  durationMs: number;
  rowCount: number;
  rowsAffected: number;
  outcome: HistoryOutcome;
  /** The redacted error text, when it failed. */
  error: string | null;
  clientName: string | null;
  tokenName: string | null;
  /**
   * When the user approved this write (an AI client's, on a dialog or the
   * console; the owner's own, confirmed on the Query page); null otherwise.
   */
  approvedAt?: number | null;
}

/** A stored entry with its id. */
export interface HistoryRow extends HistoryEntry {
  id: number;
}

/** The features' view of the history: record a statement, read the newest. */
export interface HistoryStore {
  record(entry: HistoryEntry): void;
  recent(connectionId: string, limit: number): Promise<HistoryRow[]>;
}

/** How long rows are kept. */
export const HISTORY_RETENTION_MS = 90 * 86_400_000;
/** Rows kept per connection. */
export const HISTORY_PER_CONNECTION = 10_000;

const COLUMNS = [
  "time",
  "connection_id",
  "sql",
  "statement_type",
  "duration_ms",
  "row_count",
  "rows_affected",
  "outcome",
  "error",
  "client_name",
  "token_name",
  "approved_at",
] as const;

function fromRow(row: Row): HistoryRow {
  const text = (value: unknown) =>
    value === null || value === undefined ? null : String(value);
  return {
    id: Number(row.id),
    time: Number(row.time),
    connectionId: String(row.connection_id),
    sql: String(row.sql),
    statementType: String(row.statement_type),
    durationMs: Number(row.duration_ms),
    rowCount: Number(row.row_count),
    rowsAffected: Number(row.rows_affected),
    outcome: oneOf(HISTORY_OUTCOMES, row.outcome, "error"),
    error: text(row.error),
    clientName: text(row.client_name),
    tokenName: text(row.token_name),
    approvedAt: row.approved_at === null || row.approved_at === undefined
      ? null
      : Number(row.approved_at),
  };
}

/** The query history. */
export class QueryHistory implements HistoryStore {
  readonly #db: StateDb;
  readonly #writer: BatchWriter<HistoryEntry>;

  constructor(db: StateDb, onError: (message: string) => void = () => {}) {
    this.#db = db;
    this.#writer = new BatchWriter(db, {
      table: "query_history",
      columns: COLUMNS,
      args: (entry) => [
        entry.time,
        entry.connectionId,
        entry.sql,
        entry.statementType,
        entry.durationMs,
        entry.rowCount,
        entry.rowsAffected,
        entry.outcome,
        entry.error,
        entry.clientName,
        entry.tokenName,
        entry.approvedAt ?? null,
      ],
      what: "query history entries",
      onError,
      maxQueue: 10_000,
    });
  }

  /** Queue an entry; it is written within about 100 ms. */
  record(entry: HistoryEntry): void {
    this.#writer.push(entry);
  }

  /** Write every queued entry now. */
  flush(): Promise<void> {
    return this.#writer.flush();
  }

  /** One connection's newest `limit` entries, newest first. */
  async recent(connectionId: string, limit: number): Promise<HistoryRow[]> {
    await this.flush();
    const result = await this.#db.client.execute({
      sql: `SELECT * FROM query_history WHERE connection_id = ?
            ORDER BY id DESC LIMIT ?`,
      args: [connectionId, limit],
    });
    return result.rows.map(fromRow);
  }

  /**
   * The newest `limit` entries, newest first, of one connection or all, whose
   * SQL contains `grep` (case-insensitive, taken literally).
   */
  async search(
    filter: {
      connectionId?: string;
      grep?: string;
      /** Only rows older than this one (the next page). */
      beforeId?: number;
      limit: number;
    },
  ): Promise<HistoryRow[]> {
    await this.flush();
    const where: string[] = [];
    const args: (string | number)[] = [];
    if (filter.beforeId !== undefined) {
      where.push("id < ?");
      args.push(filter.beforeId);
    }
    if (filter.connectionId !== undefined) {
      where.push("connection_id = ?");
      args.push(filter.connectionId);
    }
    if (filter.grep !== undefined && filter.grep !== "") {
      // instr() rather than LIKE: % and _ in the text are themselves.
      where.push("instr(lower(sql), lower(?)) > 0");
      args.push(filter.grep);
    }
    const result = await this.#db.client.execute({
      sql: `SELECT * FROM query_history ${
        where.length === 0 ? "" : `WHERE ${where.join(" AND ")}`
      } ORDER BY id DESC LIMIT ?`,
      args: [...args, filter.limit],
    });
    return result.rows.map(fromRow);
  }

  /** Delete rows past the retention period or the per-connection cap. */
  async prune(now = Date.now()): Promise<void> {
    await this.#db.client.batch([
      {
        sql: "DELETE FROM query_history WHERE time < ?",
        args: [now - HISTORY_RETENTION_MS],
      },
      {
        sql: `DELETE FROM query_history WHERE id IN (
                SELECT id FROM (
                  SELECT id, row_number() OVER (
                    PARTITION BY connection_id ORDER BY id DESC) AS n
                  FROM query_history) WHERE n > ?)`,
        args: [HISTORY_PER_CONNECTION],
      },
    ], "write");
  }

  /** Write what is queued and stop the timer. */
  async close(): Promise<void> {
    await this.flush();
  }
}
