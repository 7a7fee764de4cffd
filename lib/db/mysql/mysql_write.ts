/**
 * A MySQL/MariaDB write: the session turns read-write for one transaction,
 * and is then destroyed, so neither that nor anything the statement set
 * (variables, temporary tables, locks) reaches a pooled session. A stop
 * before COMMIT kills the statement and rolls back; COMMIT itself is never
 * stopped.
 *
 * @module
 */

import { signed } from "../signature.ts";
import { startMysqlJudgment } from "./mysql_every_row.ts";
import { trackedMysqlWrite } from "./mysql_changes.ts";
import { toDbError } from "./mysql_errors.ts";
import { kill } from "./mysql_cut.ts";
import { streamRows } from "./mysql_rows.ts";
import { acquire, type MysqlState, rowsOf, simple } from "./mysql_session.ts";
import { ROLLED_BACK, stoppable, throwIfAborted } from "../stoppable.ts";
import type { QueryOptions, QueryResult } from "../types.ts";

/** One write (`Driver.query` in write mode), committed unless stopped. */
export async function writeMysql(
  state: MysqlState,
  text: string,
  options: QueryOptions,
): Promise<QueryResult> {
  const connection = await acquire(state, options);
  const stop = () => kill(state.base, connection.threadId);
  try {
    await simple(connection, "SET SESSION TRANSACTION READ WRITE");
    if (options.everyRow === undefined) {
      await simple(connection, "START TRANSACTION");
    } else {
      // The counts after the write see the rows it saw or wrote, not a row
      // another session committed meanwhile (outsider stop 59: one
      // inserted while a DELETE of every row ran made the count see a
      // kept row). The session is destroyed after the write.
      await simple(
        connection,
        "SET TRANSACTION ISOLATION LEVEL REPEATABLE READ",
      );
      await simple(connection, "START TRANSACTION WITH CONSISTENT SNAPSHOT");
    }
    const run = (text: string, limits: Partial<QueryOptions> = {}) =>
      stoppable(
        () =>
          streamRows(
            connection,
            signed(text, options.sign),
            { ...options, ...limits },
            null,
          ),
        options,
        stop,
      );
    const track = options.track;
    // Whether it changed every row, by the rows it counted (every_row.ts).
    const judge = options.everyRow === undefined
      ? null
      : await startMysqlJudgment(
        text,
        (sql, params) => rowsOf(connection, sql, params),
        options.everyRow,
      );
    const result = track === undefined
      ? await run(text)
      : await trackedMysqlWrite(text, track, options.maxRows, {
        run,
        rows: (sql, params) => rowsOf(connection, sql, params),
      });
    throwIfAborted(options.signal, ROLLED_BACK);
    if (judge !== null) options.everyRow!(await judge(result.rowsAffected));
    options.beforeCommit?.(result);
    options.onCommit?.();
    await simple(connection, "COMMIT");
    return result;
  } catch (error) {
    // Nothing committed: destroying the session rolls its transaction back.
    throw toDbError(error, state.secrets);
  } finally {
    connection.destroy();
  }
}
