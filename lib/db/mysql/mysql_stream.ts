/**
 * A MySQL/MariaDB read streamed in batches (`Driver.streamRead`): mysql2's
 * row events, the connection paused while a batch is taken and resumed
 * after, so the server sends no faster than the batches are taken.
 *
 * @module
 */

import type { Connection } from "mysql2";
import type { Cell } from "../types.ts";

/** Rows handed on at a time. */
const STREAM_BATCH = 1_000;

/** A column as mysql2 describes it (mysql_rows.ts reads the same fields). */
export interface StreamField {
  name: string;
}

/**
 * Stream `text`'s rows on `connection` (already in its read-only
 * transaction) to `onBatch`. A throw from `onBatch` calls `stop` (the
 * caller's KILL QUERY) and is what this rejects with.
 */
export function streamMysqlRows<F extends StreamField>(
  connection: Connection,
  text: string,
  mapperOf: (field: F) => (value: unknown) => Cell,
  onBatch: (columns: string[], rows: Cell[][]) => Promise<void>,
  stop: () => Promise<void>,
): Promise<{ rows: number }> {
  return new Promise((resolve, reject) => {
    let names: string[] = [];
    let mappers: ((value: unknown) => Cell)[] = [];
    let batch: Cell[][] = [];
    let count = 0;
    let failed = false;
    let taken: Promise<void> = Promise.resolve();
    const fail = (error: unknown) => {
      if (failed) return;
      failed = true;
      stop().catch(() => {});
      reject(error);
    };
    const hand = (rows: Cell[][]) => {
      connection.pause();
      taken = taken.then(() => onBatch(names, rows)).then(
        () => connection.resume(),
        fail,
      );
    };
    const query = connection.query({ sql: text, rowsAsArray: true });
    query.on("fields", (list: F[] | undefined) => {
      names = (list ?? []).map((field) => field.name);
      mappers = (list ?? []).map(mapperOf);
    });
    query.on("result", (row: unknown) => {
      if (failed || !Array.isArray(row)) return;
      for (let i = 0; i < row.length; i++) row[i] = mappers[i]!(row[i]);
      batch.push(row as Cell[]);
      count++;
      if (batch.length >= STREAM_BATCH) {
        hand(batch);
        batch = [];
      }
    });
    query.on("error", fail);
    query.on("end", () => {
      if (failed) return;
      if (batch.length > 0 || count === 0) hand(batch);
      taken.then(() => {
        if (!failed) resolve({ rows: count });
      });
    });
  });
}
