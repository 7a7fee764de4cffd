/**
 * What the console reads and changes: the server's own stores, never a copy.
 *
 * @module
 */

import type { ActivityLog } from "../app/activity_log.ts";
import type { ConnectionStore } from "../app/connection_store.ts";
import type { QueryHistory } from "../app/query_history.ts";
import type { QueryStore } from "../app/queries.ts";
import type { Settings } from "../app/settings.ts";
import type { TokenStore } from "../app/tokens.ts";
import type { DriverPool } from "../db/pool.ts";
import type { Logger } from "../base/log.ts";
import type { ConsoleEvents } from "./events.ts";
import type { ConsoleKeys } from "./keys.ts";
import type { PendingApprovals } from "./pending.ts";

/** The console's view of the server. */
export interface ConsoleDeps {
  /** The console's bound port (Host and Origin are checked against it). */
  port(): number;
  keys: ConsoleKeys;
  pending: PendingApprovals;
  events: ConsoleEvents;
  settings(): Settings;
  connections: ConnectionStore;
  /** connections.json, which the Connections page writes. */
  connectionsPath: string;
  /** The server's open drivers: the Query and Schema pages use them too. */
  pool: DriverPool;
  activity: ActivityLog;
  history: QueryHistory;
  /** The saved queries in force (queries.json, re-read when it changes). */
  queries: QueryStore;
  tokens: TokenStore;
  /** Re-read the tokens now: a token made or revoked counts at once. */
  tokensChanged(): Promise<void>;
  now(): number;
  log: Logger;
  /** Aborted at the server's stop: the event streams end. */
  shutdown: AbortSignal;
}
