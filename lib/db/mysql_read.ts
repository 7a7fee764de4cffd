/**
 * MySQL/MariaDB reads: each on a pooled, read-only session inside
 * `START TRANSACTION READ ONLY`, its rows counted as they stream and cut at
 * the cap; the cap, the timeout and an abort all stop it the same way
 * (KILL QUERY). The session is then given back clean: rolled back after a
 * plain read ({@linkcode leavesNoState}), reset after any other.
 *
 * @module
 */

import { signed } from "./signature.ts";
import { leavesNoState } from "./mysql_plain.ts";
import { toDbError } from "./mysql_errors.ts";
import { discard, kill } from "./mysql_cut.ts";
import { cellMapper, streamRows } from "./mysql_rows.ts";
import {
  acquire,
  type Connection,
  type MysqlState,
  recycle,
  rollBack,
  simple,
} from "./mysql_session.ts";
import { streamMysqlRows } from "./mysql_stream.ts";
import { stoppable } from "./stoppable.ts";
import type { Cell, QueryOptions, QueryResult } from "./types.ts";

/** One read (`Driver.query` in read mode), its rows capped. */
export function readMysql(
  state: MysqlState,
  text: string,
  options: QueryOptions,
): Promise<QueryResult> {
  return readSession(
    state,
    options,
    (connection, stop) =>
      streamRows(connection, signed(text, options.sign), options, stop),
    // Judged on the statement itself: the signature is a comment.
    leavesNoState(text),
  );
}

/** One read streamed in batches (`Driver.streamRead`), uncapped. */
export function streamReadMysql(
  state: MysqlState,
  text: string,
  options: QueryOptions,
  onBatch: (columns: string[], rows: Cell[][]) => Promise<void>,
): Promise<{ rows: number }> {
  return readSession(
    state,
    options,
    (connection, stop) =>
      streamMysqlRows(
        connection,
        signed(text, options.sign),
        cellMapper,
        onBatch,
        stop,
      ),
  );
}

/**
 * A read on a pooled session in `START TRANSACTION READ ONLY`: a killed
 * session is never pooled again, its KILL seen through (the side connection
 * closed) before the answer goes out.
 */
async function readSession<T>(
  state: MysqlState,
  options: QueryOptions,
  work: (connection: Connection, stop: () => Promise<void>) => Promise<T>,
  plain = false,
): Promise<T> {
  const connection = await acquire(state, options.signal);
  // Set by stop(), which runs in a callback: a holder, not a `let`, so
  // the finally block below sees what it was set to.
  const killing: { done: Promise<void> | null } = { done: null };
  const stop = () => (killing.done ??= kill(state.base, connection.threadId));
  try {
    await simple(connection, "START TRANSACTION READ ONLY");
    return await stoppable(() => work(connection, stop), options, stop);
  } catch (error) {
    throw toDbError(error, state.secrets);
  } finally {
    if (killing.done !== null) {
      await killing.done.catch(() => {});
      discard(connection);
    } else if (plain) await rollBack(connection);
    else await recycle(connection);
  }
}
