/**
 * A remote libSQL database (`libsql://`, `https://`, `wss://`) through
 * `@libsql/client`. Reads run in a `read` transaction, which the server keeps
 * read-only; writes in a `write` transaction that commits. The remote
 * protocol returns a statement's rows whole, so the cap applies after they
 * arrive; an abort or timeout closes the transaction.
 *
 * @module
 */

import { createClient, type Transaction } from "@libsql/client";
import { Budget } from "../budget.ts";
import { dmlShape } from "../sql/dml_shape.ts";
import {
  boundedCount,
  startJudgment,
  statementJudgment,
} from "../every_row.ts";
import { cellMapper, toDbError } from "./sqlite_cells.ts";
import {
  SQLITE_KEY_COLUMNS,
  SQLITE_TRACK,
  sqliteCounts,
} from "./sqlite_changes.ts";
import { type Exec, sqliteCatalog } from "./sqlite_schema.ts";
import { stoppable } from "../stoppable.ts";
import { trackedWrite } from "../tracked_write.ts";
import { startSqliteEffects } from "./sqlite_every_row.ts";
import {
  type CallOptions,
  type Driver,
  NO_OPINION,
  type QueryOptions,
  type QueryResult,
} from "../types.ts";

/** A remote libSQL database has no attached databases: everything is main. */
const MAIN = "main";

/** How to reach one remote libSQL database. */
export interface RemoteConfig {
  url: string;
  authToken?: string;
  secrets: readonly string[];
}

/** A remote database's client and the secrets its errors must not show. */
interface Remote {
  client: ReturnType<typeof createClient>;
  secrets: readonly string[];
}

/** Open a remote libSQL driver; nothing connects until the first call. */
export function openLibsqlRemote(config: RemoteConfig): Driver {
  const remote: Remote = {
    client: createClient({
      url: config.url,
      ...(config.authToken === undefined
        ? {}
        : { authToken: config.authToken }),
      intMode: "bigint",
    }),
    secrets: config.secrets,
  };
  return {
    engine: "sqlite",
    // A SQLite file has no logins: the file's permissions and query_only are
    // what there is.
    loginRisks: () => Promise.resolve([]),
    // The remote server parses when the statement runs; it has no PREPARE.
    check: () => Promise.resolve(NO_OPINION),
    async version(options) {
      const [row] = await catalog(remote, options)(
        "select sqlite_version() as v",
      );
      return `libSQL (SQLite ${String(row?.v ?? "")})`;
    },
    // The same catalog queries as a local file, through the remote protocol.
    ...sqliteCatalog((options) => catalog(remote, options), MAIN),
    query: (text, options) =>
      inTransaction(
        remote,
        options,
        (tx) => remoteQuery(tx, text, options),
        options.mode,
        options.onCommit,
      ),
    close() {
      remote.client.close();
      return Promise.resolve();
    },
  };
}

/**
 * `work` in a transaction of `mode`, closed when stopped; a write commits
 * after `onCommit`, anything else rolls back as it closes.
 */
async function inTransaction<T>(
  remote: Remote,
  options: { signal: AbortSignal; timeoutMs: number },
  work: (tx: Transaction) => Promise<T>,
  mode: "read" | "write" = "read",
  onCommit?: () => void,
): Promise<T> {
  let tx: Transaction | null = null;
  try {
    return await stoppable(
      async () => {
        tx = await remote.client.transaction(mode);
        const result = await work(tx);
        // A write commits here; closing without it rolls back.
        if (mode === "write") {
          onCommit?.();
          await tx.commit();
        }
        return result;
      },
      options,
      () => tx?.close(),
    );
  } catch (error) {
    throw toDbError(error, remote.secrets);
  } finally {
    (tx as Transaction | null)?.close();
  }
}

/** Our own catalog statements (the local file's), with the caller's limits. */
function catalog(remote: Remote, options: CallOptions): Exec {
  return (text, params) =>
    inTransaction(remote, options, async (tx) => {
      const args = (params ?? []) as (string | null)[];
      const result = await tx.execute({ sql: text, args });
      return result.rows.map((row) => ({ ...row }) as Record<string, unknown>);
    });
}

/** A statement on the open transaction: a read, a write, or a tracked write. */
async function remoteQuery(
  tx: Transaction,
  text: string,
  options: QueryOptions,
): Promise<QueryResult> {
  const track = options.mode === "write" ? options.track : undefined;
  const number = async (sql: string) =>
    Number((await tx.execute({ sql, args: [] })).rows[0]?.[0]);
  // Whether it changed every row, by the rows it counted (every_row.ts).
  const judge = options.mode === "write" && options.everyRow !== undefined
    ? await startJudgment(
      statementJudgment(text, "sqlite"),
      (table, limit) => number(boundedCount(table, limit, "sqlite")),
      options.everyRow,
    )
    : null;
  // What its triggers and foreign keys' actions reach (every_row_effects.ts).
  const effects = options.mode === "write" && options.everyRow !== undefined
    ? await startSqliteEffects(
      text,
      async (sql, args) =>
        (await tx.execute({ sql, args })).rows.map((row) =>
          Array.from({ length: row.length }, (_, i) => row[i])
        ),
      options.everyRow,
    )
    : null;
  const done = track === undefined
    ? await remoteRows(tx, text, options)
    : await remoteTracked(tx, text, track, options);
  if (options.mode !== "write") return { ...done, rowsAffected: 0 };
  if (judge !== null) {
    options.everyRow!([
      ...await judge(await number("select changes()")),
      ...(effects === null ? [] : await effects()),
    ]);
  }
  options.beforeCommit?.(done);
  return done;
}

/** A tracked write (tracked_write.ts): counts and keys, before COMMIT. */
async function remoteTracked(
  tx: Transaction,
  text: string,
  track: NonNullable<QueryOptions["track"]>,
  options: QueryOptions,
): Promise<QueryResult> {
  const number = async (sql: string, args: string[] = []) =>
    Number((await tx.execute({ sql, args })).rows[0]?.[0] ?? 0);
  const before = await number("select total_changes()");
  return await trackedWrite(text, track, options.maxRows, {
    shape: dmlShape(text, "sqlite"),
    ...SQLITE_TRACK,
    keyColumns: async (target) =>
      (await tx.execute({
        sql: SQLITE_KEY_COLUMNS,
        args: [target.name, target.schema ?? "main"],
      })).rows.map((row) => String(row[0])),
    run: (text, maxRows, maxBytes) =>
      remoteRows(tx, text, { ...options, maxRows, maxBytes }),
    counted: async () =>
      sqliteCounts(
        dmlShape(text, "sqlite").target,
        await number("select changes()"),
        (await number("select total_changes()")) - before,
      ),
  });
}

/**
 * One statement's rows in a remote transaction. The remote protocol answers
 * whole; the budget still bounds what is kept and answered.
 */
async function remoteRows(
  tx: Transaction,
  text: string,
  options: QueryOptions,
): Promise<QueryResult> {
  const result = await tx.execute(text);
  const mappers = result.columnTypes.map(cellMapper);
  const budget = new Budget(options);
  for (const row of result.rows) {
    if (!budget.add(result.columns.map((_, i) => mappers[i]!(row[i])))) {
      break;
    }
  }
  return {
    columns: [...result.columns],
    rows: budget.rows,
    rowsAffected: result.rowsAffected,
    truncated: budget.truncation.rows || budget.truncation.bytes,
    truncation: budget.truncation,
  };
}
