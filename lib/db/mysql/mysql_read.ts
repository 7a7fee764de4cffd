/**
 * MySQL/MariaDB reads, each on a pooled session that is read-only
 * (`tx_read_only`, set once when the session opens: mysql_session.ts), its
 * rows counted as they stream and cut at the cap; the cap, the timeout and
 * an abort all stop it the same way (KILL QUERY), and a killed session is
 * never pooled again.
 *
 * A plain read ({@linkcode leavesNoState}: one SELECT by allowlist) is one
 * statement and one round trip: it runs as it is, in autocommit, its
 * implicit transaction read-only by the session's access mode, and leaves
 * nothing to clean. Any other read runs inside `START TRANSACTION READ ONLY`
 * and its session is reset before it is pooled again.
 *
 * @module
 */

import { signed } from "../signature.ts";
import { leavesNoState } from "./mysql_plain.ts";
import { toDbError } from "./mysql_errors.ts";
import { discard, kill } from "./mysql_cut.ts";
import { cellMapper, streamRows } from "./mysql_rows.ts";
import {
  acquire,
  type Connection,
  type MysqlState,
  recycle,
  simple,
} from "./mysql_session.ts";
import { streamMysqlRows } from "./mysql_stream.ts";
import { stoppable } from "../stoppable.ts";
import type { Cell, QueryOptions, QueryResult } from "../types.ts";

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

/** A statement that reads a table, and so ends what the last one left. */
const CLEAR_LAST_STATEMENT =
  "SELECT 1 FROM information_schema.schemata LIMIT 0";

/**
 * A read on a pooled session: in `START TRANSACTION READ ONLY` and reset
 * after, unless `plain`. A killed session is never pooled again, its KILL
 * seen through (the side connection closed) before the answer goes out.
 */
async function readSession<T>(
  state: MysqlState,
  options: QueryOptions,
  work: (connection: Connection, stop: () => Promise<void>) => Promise<T>,
  plain = false,
): Promise<T> {
  const connection = await acquire(state, options);
  // Set by stop(), which runs in a callback: a holder, not a `let`, so
  // the finally block below sees what it was set to.
  const killing: { done: Promise<void> | null } = { done: null };
  const stop = () => (killing.done ??= kill(state.base, connection.threadId));
  let lost = false;
  try {
    if (!plain) {
      // What the session's last statement left — FOUND_ROWS(), the warning
      // count — is another caller's after a plain read (which has no reset):
      // a statement reading a table clears both (START TRANSACTION clears
      // neither). Only a read that is not plain can ask for them.
      await simple(connection, CLEAR_LAST_STATEMENT);
      await simple(connection, "START TRANSACTION READ ONLY");
    }
    // A read killed by its timeout may still answer (SELECT SLEEP(20)
    // answers 1 when killed): that answer is the timeout (outsider stop45's
    // test saw one answered after 3 s with a timeout of 1 s, under load).
    return await stoppable(() => work(connection, stop), options, stop, false);
  } catch (error) {
    // A fatal error (the socket lost, a protocol error) ends the session.
    lost = (error as { fatal?: unknown } | null)?.fatal === true;
    throw toDbError(error, state.secrets);
  } finally {
    if (killing.done !== null) {
      await killing.done.catch(() => {});
      discard(connection);
    } else if (lost) discard(connection);
    // A plain read's implicit transaction ended with it: nothing to clean.
    else if (plain) connection.release();
    else await recycle(connection);
  }
}
