/**
 * MySQL and MariaDB through mysql2: a lazily-connecting pool whose sessions
 * are read-only by default (`SET SESSION TRANSACTION READ ONLY`, which also
 * refuses DDL, whose implicit commit would otherwise escape a read-only
 * transaction), reads inside `START TRANSACTION READ ONLY`, rows counted as
 * they stream and cut at the cap, and stopping by `KILL QUERY` from a second
 * connection. A killed connection is destroyed, never returned to the pool;
 * so is one that wrote.
 *
 * @module
 */

import { signed } from "./signature.ts";
import type { Duplex } from "node:stream";
import { thrown } from "../base/thrown.ts";
import mysql from "mysql2";
import { Budget } from "./budget.ts";
import { guardRows, rowGuardOf, rowLimit } from "./mysql_row_guard.ts";
import { tokenize } from "./lexer.ts";
import { leavesNoState } from "./mysql_plain.ts";
import { credentialUse } from "./mysql_credentials.ts";
import { trackedMysqlWrite } from "./mysql_changes.ts";
import { DbError } from "./errors.ts";
import {
  type ErrorReading,
  messageWithCode,
  toDbError as readDbError,
} from "./to_db_error.ts";
import {
  describeMysqlTable,
  listMysqlSchemas,
  listMysqlTables,
  mysqlColumns,
  mysqlFingerprint,
  searchMysql,
} from "./mysql_schema.ts";
import { streamMysqlRows } from "./mysql_stream.ts";
import { assembleOverview } from "./overview.ts";
import { ROLLED_BACK, stoppable, throwIfAborted } from "./stoppable.ts";
import {
  type Cell,
  type Driver,
  type EngineCheck,
  NO_OPINION,
  type QueryOptions,
  type QueryResult,
} from "./types.ts";
import { isoDateTime, jsonCell, plainCell } from "./values.ts";

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

const CONNECT_TIMEOUT_MS = 10_000;

type Connection = mysql.PoolConnection;
type Row = Record<string, unknown>;

/** What a query's `fields` event tells about one column. */
interface Field {
  name: string;
  columnType: number;
  columnLength: number;
  /** MariaDB's extended metadata: "json" for a JSON column. */
  extendedFormat?: string;
}

/** mysql2's protocol type codes by number (`3: "LONG"`). */
const MYSQL_TYPES = (mysql as unknown as { Types: Record<number, unknown> })
  .Types;

/** A column's type by its protocol code (mysql2's `Types`). */
function mysqlTypeName(field: Field): string | null {
  if (field.extendedFormat === "json") return "json";
  const name = MYSQL_TYPES[field.columnType];
  return typeof name === "string" ? name.toLowerCase() : null;
}

/** An engine check with nothing of its own to say (a verdict is added). */
const NO_VERDICT = NO_OPINION as Extract<EngineCheck, { ok: true }>;

/** Open a MySQL/MariaDB driver; nothing connects until the first call. */
export function openMysql(config: MysqlConfig): Driver {
  const database = decodeURIComponent(new URL(config.url).pathname.slice(1)) ||
    null;
  const base = {
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
  const secrets = config.secrets;

  const acquire = (signal: AbortSignal) => {
    throwIfAborted(signal);
    return new Promise<Connection>((resolve, reject) =>
      pool.getConnection((error, connection) =>
        error ? reject(toDbError(error, secrets)) : resolve(connection)
      )
    );
  };

  /** KILL QUERY from a separate short-lived connection. */
  const kill = async (threadId: number) => {
    const side = mysql.createConnection(base);
    try {
      await side.promise().query(`KILL QUERY ${Number(threadId)}`);
    } catch {
      // ER_NO_SUCH_THREAD: it already ended.
    } finally {
      side.destroy();
    }
  };

  /**
   * A read on a pooled session in `START TRANSACTION READ ONLY`: the cap, the
   * timeout and an abort all stop it the same way (KILL QUERY); a killed
   * session is never pooled again, its KILL seen through (the side
   * connection closed) before the answer goes out.
   */
  const readSession = async <T>(
    options: QueryOptions,
    work: (connection: Connection, stop: () => Promise<void>) => Promise<T>,
    plain = false,
  ): Promise<T> => {
    const connection = await acquire(options.signal);
    // Set by stop(), which runs in a callback: a holder, not a `let`, so
    // the finally block below sees what it was set to.
    const killing: { done: Promise<void> | null } = { done: null };
    const stop = () => (killing.done ??= kill(connection.threadId));
    try {
      await simple(connection, "START TRANSACTION READ ONLY");
      return await stoppable(() => work(connection, stop), options, stop);
    } catch (error) {
      throw toDbError(error, secrets);
    } finally {
      if (killing.done !== null) {
        await killing.done.catch(() => {});
        discard(connection);
      } else if (plain) await rollBack(connection);
      else await recycle(connection);
    }
  };

  /** Run our own statement with the caller's limits. */
  const exec = async (
    text: string,
    params: unknown[],
    options: { signal: AbortSignal; timeoutMs: number },
  ): Promise<Row[]> => {
    const connection = await acquire(options.signal);
    let killed = false;
    try {
      return await stoppable(
        () =>
          new Promise<Row[]>((resolve, reject) =>
            connection.query(
              text,
              params,
              (error, rows) => error ? reject(error) : resolve(rows as Row[]),
            )
          ),
        options,
        () => {
          killed = true;
          return kill(connection.threadId);
        },
      );
    } catch (error) {
      throw toDbError(error, secrets);
    } finally {
      if (killed) discard(connection);
      else connection.release();
    }
  };

  /**
   * A write: the session turns read-write for one transaction, and is then
   * destroyed, so neither that nor anything the statement set (variables,
   * temporary tables, locks) reaches a pooled session. A stop before COMMIT
   * kills the statement and rolls back; COMMIT itself is never stopped.
   */
  const write = async (
    text: string,
    options: QueryOptions,
  ): Promise<QueryResult> => {
    const connection = await acquire(options.signal);
    const stop = () => kill(connection.threadId);
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
      const result = track === undefined
        ? await run(text)
        : await trackedMysqlWrite(text, track, options.maxRows, {
          run,
          rows: (sql, params) =>
            new Promise((resolve, reject) =>
              connection.query(
                sql,
                params,
                (error, found) =>
                  error ? reject(error) : resolve(found as Row[]),
              )
            ),
        });
      throwIfAborted(options.signal, ROLLED_BACK);
      options.beforeCommit?.(result);
      options.onCommit?.();
      await simple(connection, "COMMIT");
      return result;
    } catch (error) {
      // Nothing committed: destroying the session rolls its transaction back.
      throw toDbError(error, secrets);
    } finally {
      connection.destroy();
    }
  };

  /**
   * The server's own parser on a statement that is not a read, without
   * running it: PREPARE (COM_STMT_PREPARE) finds syntax errors and missing
   * tables before anyone is asked to approve the statement.
   */
  const check = async (
    text: string,
    tier: string,
    options: { signal: AbortSignal; timeoutMs: number },
  ): Promise<EngineCheck> => {
    // The views it reads: a stored function they call runs as much as one
    // the statement names (storedFunctions below).
    const viewed: string[] = [];
    const denied = await credentialUse(text, database, (names) =>
      exec(
        `select table_schema as s, table_name as n, view_definition as d
           from information_schema.views where table_name in (?)`,
        [names],
        options,
      ).then((rows) =>
        rows.map((row) => ({
          schema: String(row.s),
          name: String(row.n),
          definition: String(row.d ?? ""),
        }))
      ), (definition) => viewed.push(definition));
    if (denied !== null) return { ...NO_VERDICT, denied };
    if (tier === "read") {
      return await storedFunctions([text, ...viewed], options);
    }
    throwIfAborted(options.signal);
    // A session of its own, not read-only: on a read-only one MariaDB
    // answers the PREPARE of any write with 1792 and checks nothing else.
    // It prepares only, never executes, and is closed at once.
    const connection = mysql.createConnection(base);
    try {
      await simple(connection as unknown as Connection, `SET ${QUOTING_RULES}`);
      await new Promise<void>((resolve, reject) =>
        connection.prepare(text, (error, statement) => {
          if (error) return reject(error);
          statement.close();
          resolve();
        })
      );
      return NO_OPINION;
    } catch (error) {
      const errno = thrown(error).errno ?? 0;
      // Syntax, unknown table, column or database: the run would fail too.
      if ([1064, 1146, 1054, 1049].includes(errno)) {
        return { ok: false, message: toDbError(error, secrets).message };
      }
      return NO_OPINION; // 1295: a statement PREPARE cannot take.
    } finally {
      connection.destroy();
    }
  };

  /**
   * A read that calls a stored function, itself or inside a view it reads
   * (views of views too), is a write: the read-only transaction stops its
   * writes, but not a `LOAD_FILE` or a `SLEEP` inside it, and a `SQL SECURITY DEFINER` one runs with its definer's privileges,
   * past any AI login. Built-in names cannot be stored functions when called
   * unqualified (MySQL resolves them to the built-in), so only other names
   * cost a look-up.
   */
  const storedFunctions = async (
    texts: readonly string[],
    options: { signal: AbortSignal; timeoutMs: number },
  ): Promise<EngineCheck> => {
    // The statement and the definitions of the views it reads.
    const called = [...new Set(texts.flatMap(calledNames))].filter((name) =>
      name.includes(".") || !MYSQL_BUILTINS.has(name)
    );
    if (called.length === 0) return NO_OPINION;
    const names = called.map((name) => name.split(".").at(-1)!);
    const rows = await exec(
      `select routine_schema as s, routine_name as n, security_type as t
         from information_schema.routines
        where routine_type = 'FUNCTION' and routine_name in (${
        names.map(() => "?").join(", ")
      })`,
      names,
      options,
    );
    if (rows.length === 0) return NO_OPINION;
    const first = rows[0]!;
    return {
      ok: true,
      parsedTier: null,
      dangerous: false,
      reach: null,
      tier: "write",
      why: `${String(first.s)}.${
        String(first.n)
      }() is a stored function (SQL SECURITY ${String(first.t)})`,
    };
  };

  return {
    engine: "mysql",
    check,
    async loginRisks(options) {
      const rows = await exec("SHOW GRANTS FOR CURRENT_USER()", [], options);
      return mysqlRisks(rows.map((row) => String(Object.values(row)[0])));
    },
    async version(options) {
      const [row] = await exec("select version() as v", [], options);
      const version = String(row?.v ?? "");
      return `${/mariadb/i.test(version) ? "MariaDB" : "MySQL"} ${version}`;
    },
    listSchemas: (options) =>
      listMysqlSchemas((text, params) => exec(text, params, options)),
    listTables: (options) =>
      listMysqlTables((text, params) => exec(text, params, options), options),
    searchSchema: (options) =>
      searchMysql((text, params) => exec(text, params, options), options),
    describeTable: (table, options) =>
      describeMysqlTable(
        (text, params) => exec(text, params, options),
        table,
        options.schema,
      ),
    async overview(options) {
      const run = (text: string, params: unknown[]) =>
        exec(text, params, options);
      const schema = options.schema === undefined
        ? {}
        : { schema: options.schema };
      const page = await listMysqlTables(run, {
        rowCounts: false,
        limit: options.maxTables,
        ...schema,
      });
      const columns = await mysqlColumns(
        run,
        options.schema,
        page.tables.at(-1) ?? null,
      );
      return assembleOverview(page, options.maxTables, columns);
    },
    fingerprint: (options) =>
      mysqlFingerprint((text, params) => exec(text, params, options)),
    query: (text, options) =>
      options.mode === "write" ? write(text, options) : readSession(
        options,
        (connection, stop) =>
          streamRows(connection, signed(text, options.sign), options, stop),
        // Judged on the statement itself: the signature is a comment.
        leavesNoState(text),
      ),
    streamRead: (text, options, onBatch) =>
      readSession(
        options,
        (connection, stop) =>
          streamMysqlRows(
            connection,
            signed(text, options.sign),
            cellMapper,
            onBatch,
            stop,
          ),
      ),
    close: () => new Promise<void>((resolve) => pool.end(() => resolve())),
  };
}

/** Global privileges that reach past reading data, in words. */
const GLOBAL_POWERS: Record<string, string> = {
  "ALL PRIVILEGES": "holds ALL PRIVILEGES on every database",
  FILE: "holds FILE (reads and writes files on the server)",
  SUPER: "holds SUPER",
  PROCESS: "holds PROCESS (sees every session's statements)",
  SHUTDOWN: "holds SHUTDOWN",
  "CONNECTION ADMIN": "holds CONNECTION ADMIN (can end other sessions)",
};

/** The risks in `SHOW GRANTS` lines (only grants ON *.* reach that far). */
export function mysqlRisks(grants: readonly string[]): string[] {
  const risks = new Set<string>();
  for (const grant of grants) {
    const match = /^GRANT (.+?) ON \*\.\* TO /i.exec(grant);
    if (match === null) continue;
    const privileges = match[1]!.toUpperCase().split(/\s*,\s*/);
    for (const privilege of privileges) {
      const power = GLOBAL_POWERS[privilege];
      if (power !== undefined) risks.add(power);
    }
  }
  return [...risks];
}

/** Names called as functions in a MySQL statement, upper-cased (`db.f` kept). */
function calledNames(text: string): string[] {
  const tokens = tokenize(text, "mysql");
  const names = new Set<string>();
  for (let k = 0; k < tokens.length; k++) {
    if (tokens[k + 1]?.text !== "(") continue;
    const token = tokens[k]!;
    const bare = token.kind === "word"
      ? token.text
      : token.kind === "quoted"
      ? token.text.slice(1, -1).toUpperCase()
      : null;
    if (bare === null) continue;
    const qualifier = tokens[k - 1]?.text === "." ? tokens[k - 2] : undefined;
    names.add(
      qualifier === undefined
        ? bare
        : `${qualifier.text.replace(/`/g, "").toUpperCase()}.${bare}`,
    );
  }
  return [...names];
}

/** Built-in MySQL/MariaDB functions and keywords followed by "(" in reads. */
const MYSQL_BUILTINS: ReadonlySet<string> = new Set(
  `ABS ACOS ADDDATE ADDTIME AES_DECRYPT AES_ENCRYPT ANY_VALUE ASCII ASIN ATAN ATAN2 AVG BIN BIT_AND
  BIT_COUNT BIT_LENGTH BIT_OR BIT_XOR CAST CEIL CEILING CHAR CHAR_LENGTH CHARACTER_LENGTH CHARSET
  COALESCE COLLATION COMPRESS CONCAT CONCAT_WS CONNECTION_ID CONV CONVERT CONVERT_TZ COS COT COUNT
  CRC32 CURDATE CURRENT_DATE CURRENT_TIME CURRENT_TIMESTAMP CURRENT_USER CURTIME DATABASE DATE
  DATE_ADD DATE_FORMAT DATE_SUB DATEDIFF DAY DAYNAME DAYOFMONTH DAYOFWEEK DAYOFYEAR DEGREES DIV
  ELT EXISTS EXP EXPORT_SET EXTRACT FIELD FIND_IN_SET FLOOR FORMAT FOUND_ROWS FROM_BASE64
  FROM_DAYS FROM_UNIXTIME GREATEST GROUP_CONCAT HEX HOUR IF IFNULL IN INET_ATON INET_NTOA INSERT
  INSTR INTERVAL ISNULL JSON_ARRAY JSON_ARRAYAGG JSON_CONTAINS JSON_CONTAINS_PATH JSON_DEPTH
  JSON_EXTRACT JSON_KEYS JSON_LENGTH JSON_OBJECT JSON_OBJECTAGG JSON_QUOTE JSON_SEARCH JSON_TYPE
  JSON_UNQUOTE JSON_VALID JSON_VALUE JSON_TABLE LAG LAST_DAY LAST_INSERT_ID LCASE LEAD LEAST LEFT
  LENGTH LN LOCALTIME LOCALTIMESTAMP LOCATE LOG LOG10 LOG2 LOWER LPAD LTRIM MAKEDATE MAKETIME MAX
  MD5 MICROSECOND MID MIN MINUTE MOD MONTH MONTHNAME NOW NULLIF OCT OCTET_LENGTH ORD OVER PERIOD_ADD
  PERIOD_DIFF PI POSITION POW POWER QUARTER QUOTE RADIANS RAND RANK DENSE_RANK ROW_NUMBER NTILE
  FIRST_VALUE LAST_VALUE NTH_VALUE CUME_DIST PERCENT_RANK REGEXP_INSTR REGEXP_LIKE REGEXP_REPLACE
  REGEXP_SUBSTR REPEAT REPLACE REVERSE RIGHT ROUND ROW RPAD RTRIM SCHEMA SEC_TO_TIME SECOND SHA SHA1
  SHA2 SIGN SIN SLEEP SOUNDEX SPACE SQRT STD STDDEV STDDEV_POP STDDEV_SAMP STR_TO_DATE STRCMP
  SUBDATE SUBSTR SUBSTRING SUBSTRING_INDEX SUBTIME SUM SYSDATE TAN TIME TIME_FORMAT TIME_TO_SEC
  TIMEDIFF TIMESTAMP TIMESTAMPADD TIMESTAMPDIFF TO_BASE64 TO_DAYS TO_SECONDS TRIM TRUNCATE UCASE
  UNCOMPRESS UNHEX UNIX_TIMESTAMP UPPER USER UTC_DATE UTC_TIME UTC_TIMESTAMP UUID UUID_SHORT VALUES
  VAR_POP VAR_SAMP VARIANCE VERSION WEEK WEEKDAY WEEKOFYEAR YEAR YEARWEEK AND OR NOT ON USING
  MATCH AGAINST ANY ALL SOME DECIMAL SIGNED UNSIGNED BINARY WITH AS FROM WHERE SELECT`
    .split(/\s+/).filter((name) => name !== ""),
);

/** The quoting rules dbport's lexer reads MySQL statements by. */
const QUOTING_RULES =
  "sql_mode = TRIM(BOTH ',' FROM REPLACE(REPLACE(CONCAT(',', @@SESSION.sql_mode, ','), ',ANSI_QUOTES,', ','), ',NO_BACKSLASH_ESCAPES,', ','))";

/**
 * How every pooled session starts: read-only, in UTC, and with the quoting
 * rules dbport's lexer reads statements by — `"..."` a string (no
 * ANSI_QUOTES) and backslash escapes on (no NO_BACKSLASH_ESCAPES), whatever
 * the server's global sql_mode says (docs/security.md "The lexer").
 */
function setUp(connection: Connection): Promise<void> {
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
    `SET SESSION ${readOnly} = 1, time_zone = '+00:00', ${QUOTING_RULES}`,
  );
}

/**
 * Back to the pool after a read: RESET CONNECTION drops user variables,
 * locks, temporary tables and prepared statements the read left, then the
 * session is set up again. A session that cannot be reset is destroyed.
 */
async function recycle(connection: Connection): Promise<void> {
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

/**
 * End a session that is never pooled again, its socket closed at once.
 * mysql2's `destroy()` only half-closes the socket and waits for the
 * server's end; a session paused by a cut read never reads that end, so it
 * kept its socket and every packet the server had still sent, queued
 * (`_paused_packets`): under load (64 clients, reads cut at 500 rows) that
 * was one socket and ~1,500 rows per cut read, 800 MiB at the peak.
 */
function discard(connection: Connection): void {
  connection.destroy();
  (connection as unknown as { stream?: { destroy?: () => void } }).stream
    ?.destroy?.();
}

/**
 * Back to the pool after a plain read ({@linkcode leavesNoState}): its
 * transaction rolled back is all it had, so RESET CONNECTION and the
 * session's set-up again (two more round trips, and mysql2's per-reset work)
 * are not paid. A session that cannot roll back is destroyed.
 */
async function rollBack(connection: Connection): Promise<void> {
  try {
    await simple(connection, "ROLLBACK");
    connection.release();
  } catch {
    discard(connection);
  }
}

function simple(connection: Connection, text: string): Promise<void> {
  return new Promise((resolve, reject) =>
    connection.query(text, (error) => (error ? reject(error) : resolve()))
  );
}

/** An INSERT or DELETE, whose returned rows (RETURNING) are the rows it changed. */
// After the signature's comment, if any (signature.ts: it holds no "*").
const RETURNS_CHANGED = /^(?:\s*\/\*[^*]*\*\/)?[\s(]*(insert|delete)\b/i;

/**
 * Stream one statement's rows, keeping at most `maxRows + 1`. Once past the
 * cap the rest is not wanted: `cut` kills the query, and the interruption
 * that follows ends the stream as a truncated result, not an error. A write
 * (`cut` null) is never cut: its RETURNING rows past the cap are dropped.
 */
function streamRows(
  connection: Connection,
  text: string,
  options: QueryOptions,
  cut: (() => Promise<void>) | null,
): Promise<QueryResult> {
  return new Promise((resolve, reject) => {
    const budget = new Budget(options);
    let fields: Field[] = [];
    let mappers: ((value: unknown) => Cell)[] = [];
    let rowsAffected = 0;
    // A MariaDB INSERT/DELETE … RETURNING answers rows and no OK packet:
    // each returned row is one it changed.
    let returned = 0;
    let cutting = false;
    // Bound values go by MariaDB's prepared statements (COM_STMT_EXECUTE,
    // the binary protocol), never into the text; the statement is closed
    // once read (unbound), so mysql2's cache never outlives a RESET.
    const bound = options.params !== undefined && options.params.length > 0;
    const query = bound
      ? connection.execute({
        sql: text,
        values: options.params as unknown[],
        rowsAsArray: true,
      })
      : connection.query({ sql: text, rowsAsArray: true });
    const unprepare = () => {
      if (bound) {
        try {
          connection.unprepare(text);
        } catch { /* the session is destroyed or recycled anyway */ }
      }
    };
    // A row larger than a read can hold is never read whole: the guard
    // stops handing bytes to mysql2 at its header (mysql_row_guard.ts).
    const guard = cut === null ? undefined : rowGuardOf(connection);
    guard?.limit(rowLimit(options.maxBytes), (bytes) => {
      cutting = true;
      cut!().catch(() => {});
      if (budget.rows.length === 0) {
        reject(tooLarge(budget.rows.length + 1, bytes));
      } else {
        budget.truncation.bytes = true;
        finish();
      }
    });
    // A statement without a result set reports undefined fields.
    query.on("fields", (list: Field[] | undefined) => {
      fields = list ?? [];
      mappers = fields.map(cellMapper);
    });
    query.on("result", (row: unknown) => {
      if (!Array.isArray(row)) {
        rowsAffected += Number(
          (row as { affectedRows?: number }).affectedRows ?? 0,
        );
        return;
      }
      returned++;
      if (!budget.open) return;
      for (let i = 0; i < row.length; i++) row[i] = mappers[i]!(row[i]);
      if (!budget.add(row as Cell[]) && !cutting && cut !== null) {
        // Past the budget the rest is not wanted: answer now, read no more
        // of it, and stop it on the server (`cut` marks the session to be
        // destroyed, never pooled again).
        cutting = true;
        connection.pause();
        cut().catch(() => {});
        finish();
      }
    });
    const finish = () => {
      guard?.clear();
      unprepare();
      resolve({
        columns: fields.map((field) => field.name),
        columnTypes: fields.map((field) => mysqlTypeName(field)),
        rows: budget.rows,
        rowsAffected: rowsAffected === 0 && RETURNS_CHANGED.test(text)
          ? returned
          : rowsAffected,
        truncated: budget.truncation.rows || budget.truncation.bytes,
        truncation: budget.truncation,
      });
    };
    query.on("error", (error: { errno?: number }) => {
      guard?.clear();
      unprepare();
      // 1317: query execution was interrupted, by our own cut.
      if (cutting && error.errno === 1317) finish();
      else reject(error);
    });
    query.on("end", finish);
  });
}

/** A row past the guard's limit, before any row was kept. */
function tooLarge(row: number, bytes: number): DbError {
  return new DbError(
    "query",
    `row ${row} of the result is larger than ${
      Math.floor(bytes / 1024 / 1024)
    } MiB on the wire, more than an answer can hold: dbport stopped reading it and stopped the query. Select shorter values (e.g. LEFT(column, 1000) or LENGTH(column))`,
  );
}

const JSON_TYPE = 245;
const TINY = 1;
const LONGLONG = 8;
const NEWDECIMAL = 246;
const TIMESTAMP = 7;
const DATETIME = 12;
const BIT = 16;

/** The JSON mapping for one column (values.ts), by its wire type. */
function cellMapper(field: Field): (value: unknown) => Cell {
  // MySQL's JSON type, and MariaDB's JSON (text marked format=json).
  if (field.columnType === JSON_TYPE || field.extendedFormat === "json") {
    return (value) => value === null ? null : jsonCell(value);
  }
  if (field.columnType === TINY && field.columnLength === 1) {
    // BOOLEAN is TINYINT(1).
    return (value) => value === null ? null : Number(value) !== 0;
  }
  if (field.columnType === LONGLONG || field.columnType === NEWDECIMAL) {
    // 64-bit integers and decimals are text, whatever their size.
    return (value) => value === null ? null : String(value);
  }
  if (field.columnType === DATETIME) {
    return (value) => value === null ? null : isoDateTime(String(value), false);
  }
  if (field.columnType === TIMESTAMP) {
    return (value) => value === null ? null : isoDateTime(String(value), true);
  }
  if (field.columnType === BIT) {
    return (value) => {
      if (!(value instanceof Uint8Array)) return plainCell(value);
      let number = 0n;
      for (const byte of value) number = (number << 8n) | BigInt(byte);
      return field.columnLength === 1 ? number === 1n : plainCell(number);
    };
  }
  return plainCell;
}

const CONNECT_CODES = new Set([
  "ECONNREFUSED",
  "ENOTFOUND",
  "EHOSTUNREACH",
  "ECONNRESET",
  "EPIPE",
  "PROTOCOL_CONNECTION_LOST",
  "ER_ACCESS_DENIED_ERROR",
  "ER_BAD_DB_ERROR",
  "ER_CON_COUNT_ERROR",
  "ER_DBACCESS_DENIED_ERROR",
  "ER_HOST_NOT_PRIVILEGED",
]);

/** A mysql2 failure as a redacted DbError. */
export function toDbError(error: unknown, secrets: readonly string[]): DbError {
  return readDbError(error, secrets, MYSQL_ERRORS);
}

/** mysql2's failures: by their codes and MySQL's error numbers. */
const MYSQL_ERRORS: ErrorReading = {
  text: messageWithCode,
  sort({ code, errno }, text) {
    if (code === "ETIMEDOUT") {
      return new DbError(
        "connect_timeout",
        `the database did not answer within ${CONNECT_TIMEOUT_MS / 1000} s`,
      );
    }
    if (code === "HANDSHAKE_NO_SSL_SUPPORT") {
      return new DbError(
        "connect",
        `the server does not support SSL/TLS, which the URL's ssl option requires (dbport never falls back to plain text): ${text}`,
      );
    }
    if (errno === 1792) return "read_only";
    if (errno === 3024 || errno === 1969) return "timeout";
    if (CONNECT_CODES.has(code)) return "connect";
    return "query";
  },
};
