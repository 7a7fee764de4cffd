/**
 * PostgreSQL through postgres.js: a small lazily-connecting pool, reads inside
 * `BEGIN READ ONLY` that is always rolled back (so even `set_config` leaves no
 * trace on the pooled session), rows read through a portal and cut at the cap,
 * and stopping by the protocol's cancel request. Writes run in their own
 * transaction and leave nothing behind on the pooled session (`DISCARD ALL`).
 *
 * @module
 */

import { thrown } from "../../base/thrown.ts";
import postgres from "postgres";
import { Budget, type CutCell, cutUtf8 } from "../budget.ts";
import { DbError, noTransaction } from "../errors.ts";
import { toDbError } from "./pg_errors.ts";
import { runOwn } from "./pg_own.ts";
import { answered, giveBack, sessionGone } from "./pg_session.ts";
import { askingAgain } from "./pg_ask_again.ts";
import { cancelDelivered } from "./pg_stopped_sessions.ts";
import { inReadTransaction } from "./pg_read_transaction.ts";
import { type Reserved, reserveSession } from "./pg_reserve.ts";
import { stoppableStatement } from "./pg_stop_statement.ts";
import { CONNECT_TIMEOUT_SECONDS, type PostgresConfig } from "./pg_options.ts";
import { type OwnSession, PgPools, WIRE_ENV } from "./pg_pools.ts";
export { WIRE_ENV };
export { CONNECT_TIMEOUT_SECONDS, type PostgresConfig };
import { streamPostgresRead } from "./pg_stream.ts";
import { cancelRequest, wiredRead } from "./pg_wired.ts";
import { assembleOverview } from "../overview.ts";
import {
  describePostgresTable,
  listPostgresSchemas,
  listPostgresTables,
  postgresColumns,
  postgresFingerprint,
  searchPostgres,
} from "./postgres_schema.ts";
import { type PgExec, pgWriteShape, trackedPgWrite } from "./pg_changes.ts";
import {
  pgEveryRow,
  type PgTouches,
  pgTouches,
  plainDml,
} from "./pg_every_row.ts";
import { parsePostgres } from "./pg_parse.ts";
import { isVerbatimText, rawCell } from "./pg_values.ts";
import { type CatalogExec, vetPostgres, vetWithoutCatalog } from "./pg_vet.ts";
import { setApplicationName, signed } from "../signature.ts";
import { ROLLED_BACK, STOP_GRACE_MS, throwIfAborted } from "../stoppable.ts";
import type {
  CallOptions,
  Cell,
  Driver,
  EngineCheck,
  QueryOptions,
  QueryResult,
} from "../types.ts";

// Statements a portal can stream; utility statements (SHOW, EXPLAIN) return
// no rows through a postgres.js cursor, so they are read whole (they are small).
const STREAMABLE = new Set(["SELECT", "WITH", "VALUES", "TABLE"]);
const FETCH_SIZE = 2_000;
/** The first batch of a streamed read, before row sizes are known. */
const FIRST_BATCH = 16;

type Sql = ReturnType<typeof postgres>;
import { pgTypeName } from "./pg_type_names.ts";

type Column = { name: string; type: number; parser?: { array?: boolean } };

/** Open a PostgreSQL driver; nothing connects until the first call. */
export function openPostgres(config: PostgresConfig): Driver {
  const pools = new PgPools(config);
  const fail = (error: unknown) => toDbError(error, config.secrets);
  const own = (
    start: (session: OwnSession) => postgres.PendingQuery<postgres.Row[]>,
    options: CallOptions,
  ): Promise<Row[]> =>
    // Counted on its pool: closing the driver stops it (PgPools.track).
    pools.track(
      pools.meta,
      options,
      (tracked) =>
        runOwn(
          start,
          tracked,
          config.secrets,
          pools,
          options.signal,
        ),
    );
  /** Our own catalog statements, with the caller's limits. */
  const catalog =
    (options: CallOptions) => (text: string, params?: unknown[]) =>
      own(
        (session) =>
          session.unsafe(text, params as postgres.ParameterOrJSON<never>[]),
        options,
      );

  return {
    engine: "postgres",
    async version(options) {
      const rows = await own(
        (session) => session.unsafe("show server_version"),
        options,
      );
      return `PostgreSQL ${String(rows[0]?.server_version ?? "")}`.trim();
    },
    listSchemas: (options) => listPostgresSchemas(catalog(options)),
    listTables: (options) => listPostgresTables(catalog(options), options),
    searchSchema: (options) => searchPostgres(catalog(options), options),
    describeTable: (table, options) =>
      describePostgresTable(catalog(options), table, options.schema),
    async overview(options) {
      const exec = catalog(options);
      const page = await listPostgresTables(exec, {
        rowCounts: false,
        limit: options.maxTables,
        ...(options.schema === undefined ? {} : { schema: options.schema }),
      });
      const last = page.tables.at(-1);
      const columns = await postgresColumns(exec, options.schema, last ?? null);
      return assembleOverview(page, options.maxTables, columns);
    },
    fingerprint: (options) => postgresFingerprint(catalog(options)),
    // The parser reads every statement whatever the lexer's tier.
    // The parser's verdict alone, when the catalog has nothing to add.
    checkLocal: (text) => checkStatement(text, null),
    check: (text, _tier, options) =>
      checkStatement(text, async (statements) => {
        // Several statements in one simple query: the last one's rows.
        const results = await own(
          (session) =>
            session.unsafe(statements)
              .simple() as unknown as postgres.PendingQuery<postgres.Row[]>,
          options,
        ) as unknown as Row[][];
        return results.at(-1) ?? [];
      }),
    async loginRisks(options) {
      const [row] = await catalog(options)(LOGIN_RISKS);
      const risks: string[] = [];
      if (row?.superuser === true) risks.push("is a superuser");
      for (const role of String(row?.roles ?? "").split(",")) {
        if (role !== "") {
          risks.push(`is a member of ${role} (${ROLE_POWERS[role]})`);
        }
      }
      return risks;
    },
    query: poolQuery(pools, fail),
    streamRead: poolStreamRead(pools, fail),
    close: () => pools.close(),
  };
}

/**
 * The driver's `query`: a write in its own transaction, a read wired where
 * the pool's sockets are clear (pg_wired.ts) or through postgres.js, on the
 * reads' pool of the moment, asked again while a session closing refused
 * it before anything ran (pg_ask_again.ts `askingAgain`).
 */
function poolQuery(
  pools: PgPools,
  fail: (error: unknown) => DbError,
): Driver["query"] {
  return async (text, options) => {
    const plain = pools.plainSocket;
    const run = options.mode === "write"
      ? writeQuery
      : plain === null
      ? readQuery
      : (sql: Sql, text: string, options: QueryOptions, lost: () => void) =>
        wiredRead(
          sql,
          text,
          options,
          lost,
          readQuery,
          (backend) => cancelRequest(plain, backend, pools.cancelSockets),
        );
    try {
      return await askingAgain((leftMs) => {
        const pool = pools.sql;
        return pools.track(
          pool,
          waitingAtMost(options, leftMs),
          (tracked) => run(pool, text, tracked, pools.lostFrom(pool)),
        );
      }, options.timeoutMs);
    } catch (error) {
      throw fail(error);
    }
  };
}

/**
 * The driver's `streamRead`, on the reads' pool of the moment (pg_stream.ts).
 * Asked again as a read is: a session of the pool closing (another
 * client's value too large, an administrator) refuses every waiting
 * `reserve()` before anything ran (outsider stop 50).
 */
function poolStreamRead(
  pools: PgPools,
  fail: (error: unknown) => DbError,
): NonNullable<Driver["streamRead"]> {
  return (text, options, onBatch) =>
    askingAgain((leftMs) => {
      const pool = pools.sql;
      return pools.track(
        pool,
        waitingAtMost(options, leftMs),
        (tracked) =>
          streamPostgresRead(
            pool,
            text,
            tracked,
            onBatch,
            pools.lostFrom(pool),
          ),
      );
    }, options.timeoutMs).catch((error) => {
      throw fail(error);
    });
}

type Row = Record<string, unknown>;

/**
 * `options` for an attempt of a call (`askingAgain`) that may wait
 * `leftMs` more for a session: a call asked again keeps what is left.
 */
function waitingAtMost(options: QueryOptions, leftMs: number): QueryOptions {
  return leftMs >= options.timeoutMs
    ? options
    : { ...options, sessionWaitMs: leftMs };
}

/** Built-in roles that reach past the database (docs/security.md "AI login"). */
const ROLE_POWERS: Record<string, string> = {
  pg_read_server_files: "reads any file the server can read",
  pg_write_server_files: "writes files on the server",
  pg_execute_server_program: "runs programs on the server",
  pg_signal_backend: "can cancel or end other sessions",
};

const LOGIN_RISKS = `
select r.rolsuper as superuser,
       (select string_agg(b.rolname, ',' order by b.rolname) from pg_roles b
         where b.rolname in ('pg_read_server_files', 'pg_write_server_files',
                             'pg_execute_server_program', 'pg_signal_backend')
           and pg_has_role(current_user, b.oid, 'MEMBER')) as roles
  from pg_roles r where r.rolname = current_user`;

function readQuery(
  sql: Sql,
  text: string,
  options: QueryOptions,
  lost: () => void,
): Promise<QueryResult> {
  return inReadTransaction(
    sql,
    options,
    lost,
    (reserved) => runStatement(reserved, text, options),
  );
}

/**
 * PostgreSQL's parser on the statement, and for a read its catalog: the
 * functions, operators, casts, views and policies it reaches.
 */
function checkStatement(
  text: string,
  exec: CatalogExec,
): Promise<EngineCheck>;
function checkStatement(
  text: string,
  exec: null,
): Promise<EngineCheck | null>;
async function checkStatement(
  text: string,
  exec: CatalogExec | null,
): Promise<EngineCheck | null> {
  const parsed = await parsePostgres(text);
  if (!parsed.ok) return { ok: false, message: parsed.message };
  if (parsed.analysis === null) {
    // The lexer read one statement (a `BEGIN ATOMIC` body keeps its `;`):
    // what the server would run is what its own parser reads, and nothing
    // of a second statement has been vetted. Refused to every token.
    const several =
      `PostgreSQL's parser reads ${parsed.statements} statements in it where dbport's lexer read one: send one statement at a time`;
    return {
      ok: true,
      parsedTier: "write",
      tier: "write",
      dangerous: false,
      reach: several,
      why: several,
      noPlan: several,
      noDryRun: several,
    };
  }
  const analysis = parsed.analysis;
  // Every statement asks the catalog: a read whether it only reads, a write
  // whether it may be planned or tried and rolled back — unless the catalog
  // has nothing to add (`exec` null: the parser alone, or null).
  const vetted = exec === null
    ? vetWithoutCatalog(analysis)
    : await vetPostgres(exec, analysis);
  if (vetted === null) return null;
  return {
    ok: true,
    parsedTier: analysis.plansOnly ? "read" : analysis.tier,
    tier: vetted.tier,
    dangerous: analysis.dangerous,
    reach: vetted.reach,
    why: vetted.why,
    denied: vetted.denied,
    noPlan: vetted.noPlan,
    noDryRun: vetted.noDryRun,
    danger: vetted.danger ?? null,
  };
}

/** SQLSTATE 25001: the statement cannot run inside a transaction block. */
const NOT_IN_TRANSACTION = "25001";

/**
 * Run a write in a transaction (VACUUM, CREATE INDEX CONCURRENTLY and the
 * like refuse one and run on their own). A stop before COMMIT rolls it back;
 * once COMMIT is sent it finishes, so the answer never hides a change.
 */
async function writeQuery(
  sql: Sql,
  text: string,
  options: QueryOptions,
  lost: () => void,
): Promise<QueryResult> {
  throwIfAborted(options.signal);
  // A WITH … UPDATE is a write: read whole, for its command's count.
  const whole = options.track === undefined &&
    /^[\s(]*with\b/i.test(text) && (await pgWriteShape(text)).write;
  const reserved = await reserveSession(
    sql,
    options.signal,
    options.timeoutMs,
    options.sessionWaitMs,
  );
  const timeout = `statement_timeout = ${options.timeoutMs + 5_000}`;
  const run = (text: string, whole = false) =>
    runStatement(reserved, text, options, whole);
  const track = options.track;
  const answer = options.timeoutMs + STOP_GRACE_MS;
  const statement = track === undefined
    ? () => run(text, whole)
    : () =>
      trackedPgWrite(
        text,
        track,
        exec,
        run,
      );
  const exec: PgExec = (sql, params) =>
    answered(reserved.unsafe(sql, params as never[]), answer);
  let open = false;
  let gone = false;
  try {
    // A judged write sees one snapshot, taken by its counts before it, as
    // do its counts after (pg_every_row.ts `pgTouches`). A row another
    // session changed meanwhile fails it ("could not serialize access"):
    // nothing is written.
    const isolation = options.everyRow === undefined
      ? ""
      : " ISOLATION LEVEL REPEATABLE READ";
    await answered(
      reserved.unsafe(
        `BEGIN${isolation} READ WRITE; SET LOCAL ${timeout}${
          setApplicationName(options.sign)
        }`,
      ).simple(),
      answer,
    );
    open = true;
    // The counts the write's own are told from (pg_every_row.ts).
    const touched = options.everyRow === undefined
      ? null
      : await pgTouches(exec);
    let result: QueryResult;
    try {
      result = await statement();
    } catch (error) {
      if (thrown(error).code !== NOT_IN_TRANSACTION) throw error;
      if (options.beforeCommit !== undefined || track !== undefined) {
        throw noTransaction();
      }
      await answered(reserved.unsafe("ROLLBACK"), answer);
      open = false;
      // Outside a transaction block the session's read-only default would
      // refuse it; DISCARD ALL below restores the three settings. The name
      // too: a lean read left its own client's on the session (pg_lean.ts).
      await answered(
        reserved.unsafe(
          `SET ${timeout}; SET default_transaction_read_only = off${
            setApplicationName(options.sign, "SESSION")
          }`,
        ).simple(),
        answer,
      );
      return await statement();
    }
    await readyToCommit(reserved, text, options, exec, touched);
    options.beforeCommit?.(result);
    open = false;
    options.onCommit?.();
    await answered(reserved.unsafe("COMMIT"), answer);
    return result;
  } catch (error) {
    gone = sessionGone(error);
    throw error;
  } finally {
    // SET ROLE, temporary tables, prepared statements, advisory locks: none
    // of it may follow the session back into the pool.
    await giveBack(
      reserved,
      gone,
      open ? ["ROLLBACK", "DISCARD ALL"] : ["DISCARD ALL"],
      lost,
    );
  }
}

/**
 * What must hold before a write's COMMIT is sent: it was not stopped, the
 * cancel request of a stop after its statement ended landed, and what it
 * changed was told to `everyRow` (which may refuse it), from the counts
 * `touched` before it ran.
 */
async function readyToCommit(
  reserved: Reserved,
  text: string,
  options: QueryOptions,
  exec: PgExec,
  touched: PgTouches | null,
): Promise<void> {
  throwIfAborted(options.signal, ROLLED_BACK);
  // Stopped (its timeout) after it had ended: its cancel request lands
  // before COMMIT is sent, never on the COMMIT.
  if (!(await cancelDelivered(reserved))) {
    throw new DbError(
      "connect",
      "the statement's cancel request was not confirmed by the database: the write was not committed",
    );
  }
  if (touched !== null) {
    options.everyRow!(await pgEveryRow(exec, touched, await plainDml(text)));
  }
}

type Pending = ReturnType<ReturnType<Reserved["unsafe"]>["raw"]>;

/** Run the client's statement on a reserved session, stoppable. */
function runStatement(
  reserved: Reserved,
  text: string,
  options: QueryOptions,
  whole = false,
): Promise<QueryResult> {
  return stoppableStatement(
    async (hold) => {
      // Signed as sent (signature.ts); `text` itself is what was checked.
      // Bound values go by the extended protocol (Parse/Bind), never into
      // the text; postgres.js sends a value's type only for booleans, so
      // the server infers the rest from where each $n stands.
      const sent = signed(text, options.sign);
      const query =
        (options.params?.length
          ? reserved.unsafe(sent, options.params as never[])
          : reserved.unsafe(sent)).raw();
      hold(query);
      return await readRows(query, text, options, whole);
    },
    options,
    reserved,
  );
}

/**
 * Read a statement's rows within the answer's budget (rows, bytes, cell
 * size). SELECT-like statements stream through a portal in batches sized by
 * the rows seen so far, so a result of huge rows is never held whole; the
 * portal is closed once the budget is spent. Utility statements and writes
 * (RETURNING) are read whole. Values arrive raw and are decoded per type
 * (pg_values.ts).
 */
async function readRows(
  query: Pending,
  text: string,
  options: QueryOptions,
  whole = false,
): Promise<QueryResult> {
  const keyword = /^[\s(]*([A-Za-z]+)/.exec(text)?.[1]?.toUpperCase() ?? "";
  const budget = new Budget({
    maxRows: options.maxRows,
    maxBytes: options.maxBytes,
    maxCellChars: options.maxCellChars,
  });
  let columns: Column[] | undefined;
  let rowsAffected = 0;
  const keep = (raw: (Uint8Array | null)[]) => {
    let size = 0;
    const row = raw.map((value, i): Cell | CutCell => {
      const column = columns![i]!;
      const isArray = column.parser?.array === true;
      size += value?.length ?? 0;
      // A long text is cut before it is decoded (bench W5).
      const cut = value !== null && isVerbatimText(column.type, isArray)
        ? cutUtf8(value, options.maxCellChars)
        : null;
      return cut ?? rawCell(value, column.type, isArray);
    });
    budget.sawRaw(size);
    return budget.add(row);
  };
  if (STREAMABLE.has(keyword) && !whole) {
    const portal = query as unknown as { cursorRows: number };
    for await (
      const chunk of query.cursor(Math.min(FIRST_BATCH, options.maxRows + 1))
    ) {
      columns ??= (chunk as unknown as { columns?: Column[] }).columns ?? [];
      let more = true;
      for (const row of chunk) {
        if (!(more = keep(row as unknown as (Uint8Array | null)[]))) break;
      }
      if (!more) break;
      // postgres.js reads cursorRows at each Execute (3.4.9): the next batch
      // holds about 8 MiB of rows of the size seen so far.
      portal.cursorRows = budget.nextBatch(FETCH_SIZE);
    }
    columns ??= (query as unknown as { statement?: { columns?: Column[] } })
      .statement?.columns ?? [];
  } else {
    // A write's RETURNING (or a utility statement's rows) runs to its end,
    // but each row is kept or dropped as it arrives: an UPDATE … RETURNING of
    // ten million rows is never ten million rows in memory.
    const statement = query as unknown as {
      statement?: { columns?: Column[] };
    };
    const info = await query.forEach((row) => {
      if (!budget.open) return;
      columns ??= statement.statement?.columns ?? [];
      keep(row as unknown as (Uint8Array | null)[]);
    }) as unknown as {
      columns?: Column[];
      count?: number | null;
      command?: string;
    };
    columns = info.columns ?? columns ?? [];
    if (info.command !== "SELECT" && typeof info.count === "number") {
      rowsAffected = info.count;
    }
  }
  return {
    columns: columns.map((column) => column.name),
    columnTypes: columns.map((column) => pgTypeName(column.type)),
    rows: budget.rows,
    rowsAffected,
    truncated: budget.truncation.rows || budget.truncation.bytes,
    truncation: budget.truncation,
  };
}
