/**
 * A remote libSQL database (`libsql://`, `https://`, `wss://`) through
 * `@libsql/client`. Reads run in a `read` transaction, which the server keeps
 * read-only; writes in a `write` transaction that commits. The remote protocol returns a statement's rows whole, so the cap
 * applies after they arrive; an abort or timeout closes the transaction.
 *
 * @module
 */

import { Budget } from "./budget.ts";
import { createClient, type Transaction } from "@libsql/client";
import { cellMapper, toDbError } from "./sqlite_cells.ts";
import { assembleOverview, digest } from "./overview.ts";

const MAIN = "main";
import {
  describeSqliteTable,
  listSqliteSchemas,
  listSqliteTables,
  searchSqlite,
  sqliteColumns,
  sqliteSchemaText,
} from "./sqlite_schema.ts";
import { stoppable } from "./stoppable.ts";
import { dmlShape } from "./dml_shape.ts";
import { SQLITE_TRACK, sqliteCounts } from "./sqlite_changes.ts";
import { trackedWrite } from "./tracked_write.ts";
import {
  type CallOptions,
  type Driver,
  NO_OPINION,
  type QueryOptions,
  type QueryResult,
} from "./types.ts";

/** How to reach one remote libSQL database. */
export interface RemoteConfig {
  url: string;
  authToken?: string;
  secrets: readonly string[];
}

/** Open a remote libSQL driver; nothing connects until the first call. */
export function openLibsqlRemote(config: RemoteConfig): Driver {
  const client = createClient({
    url: config.url,
    ...(config.authToken === undefined ? {} : { authToken: config.authToken }),
    intMode: "bigint",
  });
  const secrets = config.secrets;

  const read = async <T>(
    options: { signal: AbortSignal; timeoutMs: number },
    work: (tx: Transaction) => Promise<T>,
    mode: "read" | "write" = "read",
    onCommit?: () => void,
  ): Promise<T> => {
    let tx: Transaction | null = null;
    try {
      return await stoppable(
        async () => {
          tx = await client.transaction(mode);
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
      throw toDbError(error, secrets);
    } finally {
      (tx as Transaction | null)?.close();
    }
  };

  const rowsOf = (
    options: { signal: AbortSignal; timeoutMs: number },
    text: string,
    args: (string | null)[] = [],
  ) =>
    read(options, async (tx) => {
      const result = await tx.execute({ sql: text, args });
      return result.rows.map((row) => ({ ...row }) as Record<string, unknown>);
    });
  /** Our own catalog statements (the local file's), with the caller's limits. */
  const catalog =
    (options: CallOptions) => (text: string, params?: unknown[]) =>
      rowsOf(options, text, (params ?? []) as (string | null)[]);
  return {
    engine: "sqlite",
    // A SQLite file has no logins: the file's permissions and query_only are
    // what there is.
    loginRisks: () => Promise.resolve([]),
    // The remote server parses when the statement runs; it has no PREPARE.
    check: () => Promise.resolve(NO_OPINION),
    async version(options) {
      const [row] = await rowsOf(options, "select sqlite_version() as v");
      return `libSQL (SQLite ${String(row?.v ?? "")})`;
    },
    // A remote libSQL database has no attached databases: everything is
    // main.
    listSchemas: (options) => listSqliteSchemas(catalog(options), MAIN),
    listTables: (options) => listSqliteTables(catalog(options), options, MAIN),
    searchSchema: (options) => searchSqlite(catalog(options), options, MAIN),
    async overview(options) {
      const exec = catalog(options);
      const page = await listSqliteTables(exec, {
        rowCounts: false,
        limit: options.maxTables,
        ...(options.schema === undefined ? {} : { schema: options.schema }),
      }, MAIN);
      const columns = await sqliteColumns(exec, "main");
      return assembleOverview(page, options.maxTables, columns);
    },
    async fingerprint(options) {
      return digest(await sqliteSchemaText(catalog(options)));
    },
    describeTable(table, options) {
      // The same catalog queries as a local file, through the remote protocol.
      return describeSqliteTable(catalog(options), table, options.schema);
    },
    query: (text, options) =>
      read(
        options,
        async (tx) => {
          const run = (text: string, limits: Partial<QueryOptions> = {}) =>
            remoteRows(tx, text, { ...options, ...limits });
          const track = options.mode === "write" ? options.track : undefined;
          const number = async (sql: string, args: string[] = []) =>
            Number((await tx.execute({ sql, args })).rows[0]?.[0] ?? 0);
          const before = track === undefined
            ? 0
            : await number("select total_changes()");
          const done = track === undefined
            ? await run(text)
            : await trackedWrite(
              text,
              track,
              options.maxRows,
              {
                shape: dmlShape(text, "sqlite"),
                ...SQLITE_TRACK,
                keyColumns: async (target) =>
                  (await tx.execute({
                    sql:
                      "select name from pragma_table_info(?, ?) where pk > 0 order by pk",
                    args: [target.name, target.schema ?? "main"],
                  })).rows.map((row) => String(row[0])),
                run: (text, maxRows, maxBytes) =>
                  run(text, { maxRows, maxBytes }),
                counted: async () =>
                  sqliteCounts(
                    dmlShape(text, "sqlite").target,
                    await number("select changes()"),
                    (await number("select total_changes()")) - before,
                  ),
              },
            );
          if (options.mode !== "write") return { ...done, rowsAffected: 0 };
          options.beforeCommit?.(done);
          return done;
        },
        options.mode,
        options.onCommit,
      ),
    close() {
      client.close();
      return Promise.resolve();
    },
  };
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
