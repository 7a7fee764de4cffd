/**
 * MySQL and MariaDB through mysql2: a lazily-connecting pool whose sessions
 * are read-only, a plain SELECT sent alone (one round trip) and any other
 * read inside `START TRANSACTION READ ONLY`, rows counted as they stream and
 * cut at the cap, and stopping by `KILL QUERY` from a second connection. A killed connection is destroyed, never returned
 * to the pool; so is one that wrote.
 *
 * The driver is its parts over one {@linkcode MysqlState}:
 * - mysql_session.ts: the pool, a session's set-up and its return clean
 * - mysql_read.ts, mysql_rows.ts, mysql_stream.ts: the read path
 * - mysql_write.ts: the write path (mysql_changes.ts: a tracked write)
 * - mysql_check.ts: what the server says before a statement runs
 * - mysql_introspect.ts, mysql_schema.ts: the login and the catalog
 * - mysql_cut.ts: KILL QUERY and a killed session's end
 * - mysql_errors.ts: mysql2's failures as DbErrors
 *
 * @module
 */

import { checkMysql } from "./mysql_check.ts";
import { mysqlIntrospection } from "./mysql_introspect.ts";
import { readMysql, streamReadMysql } from "./mysql_read.ts";
import { closeMysql, type MysqlConfig, mysqlState } from "./mysql_session.ts";
import { writeMysql } from "./mysql_write.ts";
import type { Driver } from "../types.ts";

export type { MysqlConfig } from "./mysql_session.ts";

/** Open a MySQL/MariaDB driver; nothing connects until the first call. */
export function openMysql(config: MysqlConfig): Driver {
  const state = mysqlState(config);
  return {
    engine: "mysql",
    check: (text, tier, options) => checkMysql(state, text, tier, options),
    ...mysqlIntrospection(state),
    query: (text, options) =>
      options.mode === "write"
        ? writeMysql(state, text, options)
        : readMysql(state, text, options),
    streamRead: (text, options, onBatch) =>
      streamReadMysql(state, text, options, onBatch),
    close: () => closeMysql(state),
  };
}
