/**
 * A PostgreSQL read streamed in batches (`Driver.streamRead`): the same
 * reserved session, `BEGIN READ ONLY` and statement timeout as a read
 * answered to a client, but every row handed on through a postgres.js
 * cursor, a batch at a time, the next fetched only once the last was taken.
 *
 * @module
 */

import { signed } from "../signature.ts";
import type postgres from "postgres";
import { inReadTransaction } from "./pg_read_transaction.ts";
import { stoppableStatement } from "./pg_stop_statement.ts";
import { rawCell } from "./pg_values.ts";
import type { Cell, QueryOptions } from "../types.ts";

type Sql = ReturnType<typeof postgres>;
type Column = { name: string; type: number; parser?: { array?: boolean } };

/**
 * Rows fetched at a time. Smaller batches leave less for the collector to
 * catch up with: exporting 100,000 rows of 1 KB grew the process's peak RSS
 * by 70–88 MiB at 200 rows a batch (92 at 1,000) and stays under the 64 MiB
 * of tests/e2e/export_query_test.ts at 50, for one more round trip per 50.
 */
const STREAM_BATCH = 50;

/** Statements a portal can stream; others (SHOW, EXPLAIN) are read whole. */
const STREAMABLE = /^[\s(]*(select|with|values|table)\b/i;

/** Stream `text`'s rows to `onBatch`; see `Driver.streamRead`. */
export async function streamPostgresRead(
  sql: Sql,
  text: string,
  options: QueryOptions,
  onBatch: (columns: string[], rows: Cell[][]) => Promise<void>,
  lost: () => void,
): Promise<{ rows: number }> {
  return await inReadTransaction(sql, options, lost, async (reserved) => {
    const rows = await stoppableStatement(
      async (hold, stopping) => {
        const query = reserved.unsafe(signed(text, options.sign)).raw();
        hold(query);
        return await pump(query, text, onBatch, stopping);
      },
      options,
      reserved,
    );
    return { rows };
  });
}

type Pending = ReturnType<
  ReturnType<Awaited<ReturnType<Sql["reserve"]>>["unsafe"]>["raw"]
>;

/** Thrown out of the cursor's loop to stop it once the read was stopped. */
const STOPPED = new Error("the streamed read was stopped");

/**
 * Fetch and hand on `query`'s rows a batch at a time; once `stopping`, no
 * further batch is asked for. Between two batches the backend waits for
 * the cursor's next Execute, and PostgreSQL drops a cancel request that
 * finds it reading a command: the rows went on for the stop's whole 5 s
 * grace and the read failed as a lost session (outsider stop 52). Leaving
 * the loop closes the portal (postgres.js's cursor `return`).
 */
async function pump(
  query: Pending,
  text: string,
  onBatch: (columns: string[], rows: Cell[][]) => Promise<void>,
  stopping: () => boolean,
): Promise<number> {
  let columns: Column[] | undefined;
  let count = 0;
  const decode = (raw: (Uint8Array | null)[]): Cell[] =>
    raw.map((value, i) => {
      const column = columns![i]!;
      return rawCell(value, column.type, column.parser?.array === true);
    });
  const names = () => columns!.map((column) => column.name);
  const statementColumns = () =>
    (query as unknown as { statement?: { columns?: Column[] } }).statement
      ?.columns ?? [];
  if (STREAMABLE.test(text)) {
    for await (const chunk of query.cursor(STREAM_BATCH)) {
      columns ??= (chunk as unknown as { columns?: Column[] }).columns ??
        statementColumns();
      const rows = chunk.map((row) =>
        decode(row as unknown as (Uint8Array | null)[])
      );
      count += rows.length;
      if (stopping()) throw STOPPED;
      await onBatch(names(), rows);
      if (stopping()) throw STOPPED;
    }
    if (count === 0) {
      columns ??= statementColumns();
      await onBatch(names(), []);
    }
    return count;
  }
  // A utility statement's rows (SHOW): few, read whole.
  const kept: Cell[][] = [];
  const info = await query.forEach((row) => {
    columns ??= statementColumns();
    kept.push(decode(row as unknown as (Uint8Array | null)[]));
  }) as unknown as { columns?: Column[] };
  columns = info.columns ?? columns ?? [];
  await onBatch(names(), kept);
  return kept.length;
}
