/**
 * The owner's own statements, run from the console's Query page
 * (docs/console.md "Query"): the read path the tools use — the same
 * classification by dbport's lexer and the engine, the same read-only mode,
 * row cap, answer budget and cell cap, the same write preview and the same
 * hold of a write to the preview its approver saw — but as the owner: with
 * the connection's saved login (never its AI login), on any saved
 * connection whatever its external access, and with the owner's explicit
 * confirmation on the page standing for an approval. Every statement is
 * recorded in the query history as the console's.
 *
 * @module
 */

import { driverSpec, type SavedConnection } from "../app/connections.ts";
import type { Classified } from "../db/sql/classifier.ts";
import { DbError } from "../db/errors.ts";
import type { Cell, Driver } from "../db/types.ts";
import { checkStatement } from "../db/sql/statement_check.ts";
import { WireError } from "../protocol/errors.ts";
import type { JsonObject } from "../protocol/jsonrpc.ts";
import type { CallContext, Principal } from "./context.ts";
import type { FeatureDeps } from "./deps.ts";
import type { Resolved } from "./tools/access.ts";
import {
  exportFileName,
  ExportLimit,
  ExportWriter,
} from "./tools/export_file.ts";
import { fromDbError, ToolFailure } from "./tools/failure.ts";
import { previewWrite, type WritePreview } from "./tools/preview.ts";
import { MAX_QUERY_LENGTH, runClassified } from "./tools/statement.ts";

/** How the history names the console's own statements (the owner's). */
export const CONSOLE_CLIENT = "dbport console";

/**
 * Whether a History entry is the owner's: its client is the console and so
 * is its token name. An AI client may call itself "dbport console" in its
 * `clientInfo`; its entries still carry its token's name (or none), so
 * they are never shown as "you".
 */
export function isOwnerEntry(
  entry: { clientName: string | null; tokenName: string | null },
): boolean {
  return entry.clientName === CONSOLE_CLIENT &&
    entry.tokenName === CONSOLE_CLIENT;
}

/** What running the owner's statements needs. */
export type OwnerDeps = Pick<
  FeatureDeps,
  "connections" | "pool" | "settings" | "history"
>;

/** The owner: every scope, every connection. */
const OWNER: Principal = {
  key: "console-owner",
  kind: "anonymous",
  name: "you",
  tokenId: null,
  scopes: new Set(["tools:read", "tools:write", "admin"]),
  connections: null,
};

/** A statement the owner asked for, classified. */
export interface OwnerStatement {
  resolved: Resolved;
  statement: Classified;
  /**
   * Why it needs the owner's confirmation first (null: a read, run at once):
   * it writes, drops, or reaches the file system or runs code.
   */
  confirm: string | null;
}

/** A failure told to the owner (the message is already redacted). */
export class OwnerFailure extends Error {
  override name = "OwnerFailure";
}

/**
 * The connection `id` with its saved login: a hardened connection's reads
 * run as the user's own login here, not its AI login (a driver of its own in
 * the pool, under `<id>:owner`).
 */
export function ownerConnection(
  deps: OwnerDeps,
  id: string,
): Resolved {
  const connection = deps.connections.byId(id);
  if (connection === undefined) {
    throw new OwnerFailure(
      `No saved connection has the id ${JSON.stringify(id.slice(0, 80))}`,
    );
  }
  return {
    connection,
    label: JSON.stringify(connection.name),
    driver: ownerDriver(deps, connection),
  };
}

function ownerDriver(deps: OwnerDeps, connection: SavedConnection): Driver {
  if (connection.aiLogin === undefined) {
    return deps.pool.get(driverSpec(connection));
  }
  const { aiLogin: _ai, ...owner } = connection;
  return deps.pool.get({ ...driverSpec(owner), id: `${connection.id}:owner` });
}

/**
 * Classify `sql` on the connection as the tools do. A statement that is not
 * one statement, does not parse, or that the two readers read differently is
 * an {@linkcode OwnerFailure}; one that writes, drops or reaches the file
 * system needs the owner's confirmation (`confirm` says why).
 */
export async function classifyOwner(
  deps: OwnerDeps,
  connectionId: string,
  sql: string,
  signal: AbortSignal,
): Promise<OwnerStatement> {
  if (sql.trim() === "") throw new OwnerFailure("Write a statement first");
  if (sql.length > MAX_QUERY_LENGTH) {
    throw new OwnerFailure(
      `The statement is ${sql.length} characters; the limit is ${MAX_QUERY_LENGTH}`,
    );
  }
  const resolved = ownerConnection(deps, connectionId);
  const checked = await checkStatement(sql, resolved.driver, {
    signal,
    timeoutMs: 10_000,
  }).catch((error) => told(error, resolved.label));
  if (!checked.ok) throw new OwnerFailure(checked.message);
  const { ok: _ok, why, ...statement } = checked;
  const confirm = checked.reach !== null
    ? `it reaches the file system or runs code (${checked.reach})`
    : checked.tier === "destructive"
    ? "it drops or truncates data"
    : checked.tier === "write"
    ? why === null ? "it writes" : `it counts as a write: ${why}`
    : null;
  if (confirm !== null && resolved.connection.safeMode === "readOnly") {
    throw new OwnerFailure(
      `The Safe Mode of ${resolved.label} is "readOnly": it refuses every write, yours too (change it on the Connections page)`,
    );
  }
  // A reach is run as a write: outside the read-only mode, confirmed first.
  const tier = checked.reach !== null && statement.tier === "read"
    ? "write"
    : statement.tier;
  return { resolved, statement: { ...statement, tier }, confirm };
}

/**
 * What the write would change, measured as for an AI client's approval (the
 * connection's `writePreview`: a dry run rolled back, an estimate, or none).
 */
export async function previewOwnerWrite(
  deps: OwnerDeps,
  owned: OwnerStatement,
  signal: AbortSignal,
): Promise<WritePreview | null> {
  const seconds = Math.min(
    deps.settings().queryTimeoutSeconds,
    deps.settings().previewTimeoutSeconds,
  );
  return await previewWrite(owned.resolved, owned.statement, {
    timeoutSeconds: seconds,
    signal,
  }).catch((error) => {
    if (error instanceof DbError && error.kind === "timeout") {
      throw new OwnerFailure(
        `The write's preview did not finish within ${seconds} s (previewTimeoutSeconds); nothing was written`,
      );
    }
    return told(error, owned.resolved.label);
  });
}

/** The result set the Query page shows: the tools' own, and column types. */
export interface OwnerResult {
  answer: JsonObject;
  /** Each column's type as the engine names it (null where not known). */
  types: (string | null)[];
}

/**
 * Run a classified statement as the owner through the tools' own runner
 * (limits, truncation, history). A write runs only with `confirmedAt` (the
 * owner confirmed it on the page), held to the `preview` they saw.
 */
export async function runOwner(
  deps: OwnerDeps,
  owned: OwnerStatement,
  options: {
    signal: AbortSignal;
    confirmedAt?: number;
    preview?: WritePreview | null;
  },
): Promise<OwnerResult> {
  if (owned.confirm !== null && options.confirmedAt === undefined) {
    throw new OwnerFailure(`Confirm first: ${owned.confirm}`);
  }
  if (owned.confirm !== null) {
    // Checked again at Confirm: since the preview, the connection may have
    // been removed or its Safe Mode turned to readOnly (another tab, the CLI).
    const current = deps.connections.byId(owned.resolved.connection.id);
    if (current === undefined) {
      throw new OwnerFailure(
        `${owned.resolved.label} is no longer a saved connection; nothing was run`,
      );
    }
    if (current.safeMode === "readOnly") {
      throw new OwnerFailure(
        `The Safe Mode of ${owned.resolved.label} is now "readOnly": it refuses every write, yours too; nothing was run`,
      );
    }
  }
  const settings = deps.settings();
  let types: (string | null)[] = [];
  const driver = owned.resolved.driver;
  // The first query is the statement (a count may follow): its types kept.
  let first = true;
  const watched: Driver = {
    ...driver,
    query: async (text, queryOptions) => {
      const result = await driver.query(text, queryOptions);
      if (first) types = result.columnTypes ?? result.columns.map(() => null);
      first = false;
      return result;
    },
  };
  const ctx = ownerContext(options.signal);
  const answer = await runClassified(
    { ...deps, history: historyWith(deps, options.confirmedAt) } as FeatureDeps,
    ctx,
    { ...owned.resolved, driver: watched },
    owned.statement,
    {
      maxRows: Math.min(settings.defaultRowLimit, settings.maxRowLimit),
      timeoutSeconds: settings.queryTimeoutSeconds,
      preview: options.preview ?? null,
    },
  ).catch((error) => told(error, owned.resolved.label));
  return { answer, types };
}

/** The history, with the owner's confirmation marked on what it records. */
function historyWith(
  deps: OwnerDeps,
  confirmedAt: number | undefined,
): FeatureDeps["history"] {
  return {
    record: (entry) =>
      deps.history.record({
        ...entry,
        clientName: CONSOLE_CLIENT,
        tokenName: CONSOLE_CLIENT,
        approvedAt: confirmedAt ?? null,
      }),
    recent: (id, limit) => deps.history.recent(id, limit),
  };
}

/** A call context for the owner's statement (no client, no progress). */
function ownerContext(signal: AbortSignal): CallContext {
  return {
    era: "modern",
    protocolVersion: "",
    method: "console/query",
    params: {},
    clientCapabilities: {},
    clientInfo: { name: CONSOLE_CLIENT, version: "" },
    trace: {},
    principal: OWNER,
    signal,
    shutdown: signal,
    session: null,
    id: 0,
    progress() {},
    holdAnswer() {},
    notify() {},
  } as unknown as CallContext;
}

/** A driver's or tool's failure in the owner's words. */
function told(error: unknown, label: string): never {
  if (error instanceof OwnerFailure) throw error;
  const mapped = error instanceof DbError ? fromDbError(error, label) : error;
  if (mapped instanceof ToolFailure) {
    throw new OwnerFailure(`${mapped.code}: ${mapped.message}`);
  }
  if (mapped instanceof WireError) throw new OwnerFailure(mapped.message);
  throw error;
}

/**
 * The owner's read as a CSV file, written by `export_query`'s own writer
 * (RFC 4180, formula-like cells disarmed) within the export limits
 * (`maxExportRows`, `maxExportBytes`) into a private temporary directory;
 * the file is returned open and already unlinked, to be streamed once.
 */
export async function exportOwnerCsv(
  deps: OwnerDeps,
  owned: OwnerStatement,
  signal: AbortSignal,
): Promise<{ file: Deno.FsFile; rows: number; bytes: number }> {
  if (owned.statement.tier !== "read") {
    throw new OwnerFailure(
      "Export CSV runs reads only (a SELECT and what returns rows without changing them)",
    );
  }
  const settings = deps.settings();
  const driver = owned.resolved.driver;
  const stream = driver.streamRead;
  if (stream === undefined) {
    throw new OwnerFailure("This connection cannot stream a result to a file");
  }
  const dir = await Deno.makeTempDir({ prefix: "dbport-console-export-" });
  const path = `${dir}/${
    exportFileName(owned.resolved.connection.name, "csv")
  }`;
  const writer = await ExportWriter.create(path, "csv", {
    rows: settings.maxExportRows,
    bytes: settings.maxExportBytes,
  });
  try {
    await stream.call(driver, owned.statement.text, {
      mode: "read",
      maxRows: settings.maxExportRows,
      maxBytes: settings.maxExportBytes,
      maxCellChars: Number.MAX_SAFE_INTEGER,
      timeoutMs: settings.queryTimeoutSeconds * 1000,
      signal,
    }, (columns: string[], rows: Cell[][]) => writer.write(columns, rows));
    writer.close();
    const file = await Deno.open(path, { read: true });
    return { file, rows: writer.rows, bytes: writer.bytes };
  } catch (error) {
    writer.close();
    if (error instanceof ExportLimit) {
      throw new OwnerFailure(
        `The export stopped: ${error.message}; narrow the query or raise the limit in settings.json`,
      );
    }
    return told(error, owned.resolved.label);
  } finally {
    // Unlinked at once: the open file is all that is left of it.
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  }
}
