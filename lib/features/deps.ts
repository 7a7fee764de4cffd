/**
 * What the features need from the server: the saved connections, the open
 * drivers, the live settings, the user's consent and the query history.
 * Never HTTP.
 *
 * @module
 */

import type { ConnectionStore } from "../app/connection_store.ts";
import type { QueryStore } from "../app/queries.ts";
import type { SavedConnection } from "../app/connections.ts";
import type { HistoryStore } from "../app/query_history.ts";
import type { Settings } from "../app/settings.ts";
import type { CursorCodec } from "../protocol/cursor.ts";
import type { DriverPool } from "../db/pool.ts";
import type { CallOptions } from "../db/types.ts";
import type { Consent } from "./consent.ts";
import { type CallContext, withinDeadline } from "./context.ts";

/** The features' view of the server. */
export interface FeatureDeps {
  connections: ConnectionStore;
  /** The user's saved queries (docs/queries.md); absent: none. */
  queries?: QueryStore;
  pool: DriverPool;
  settings(): Settings;
  /** Asks the user where a connection's policy says so. */
  consent: Consent;
  /** Where statements clients ran are recorded (while `queryHistory` is on). */
  history: HistoryStore;
  /** Seals the cursors of `list_tables` (and the list methods). */
  cursors: CursorCodec;
  /**
   * Where `export_query` writes: the `exportDirectory` setting, else
   * `<app dir>/exports`.
   */
  exportDirectory(): string;
  /**
   * Why AI reads on a connection may not run now: its private columns are
   * not held by the engine (server/private_sync.ts); null when they are.
   */
  privateColumns?: {
    problem(
      connection: SavedConnection,
      fingerprint?: () => Promise<string>,
    ): Promise<string | null>;
  };
}

/**
 * The settings a call sees: the snapshot its dispatch took at its start
 * (`ctx.settings`), else the live ones (a call made outside the dispatcher).
 */
export function callSettings(
  deps: Pick<FeatureDeps, "settings">,
  ctx: Pick<CallContext, "settings">,
): Settings {
  return ctx.settings ?? deps.settings();
}

/**
 * A catalog read (schema, version, a table's structure) made for a call: it
 * stops with the call, and on the database after the user's query timeout
 * (`queryTimeoutSeconds`), as a query would, within the call's deadline.
 */
export function catalogCall(
  deps: Pick<FeatureDeps, "settings">,
  ctx: Pick<CallContext, "signal" | "settings" | "deadlineAt">,
): CallOptions {
  return {
    signal: ctx.signal,
    timeoutMs: withinDeadline(
      ctx,
      callSettings(deps, ctx).queryTimeoutSeconds * 1000,
    ),
  };
}
