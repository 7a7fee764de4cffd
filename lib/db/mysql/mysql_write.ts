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
import { boundedCount, startJudgment } from "../every_row.ts";
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
    await simple(connection, "START TRANSACTION");
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
      : await startJudgment(text, "mysql", async (table, limit) => {
        const sql = boundedCount(table, limit, "mysql");
        const rows = await rowsOf(connection, sql, []);
        return Number(
          (rows[0] as { dbport_n?: unknown } | undefined)?.dbport_n,
        );
      });
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
