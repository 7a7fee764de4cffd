/**
 * How a server is started (`StartOptions`) and what a started one offers
 * (`RunningServer`).
 *
 * @module
 */

import { QueryStore } from "../app/queries.ts";
import { ActivityLog } from "../app/activity_log.ts";
import { QueryHistory } from "../app/query_history.ts";
import { TokenStore } from "../app/tokens.ts";
import { ConnectionStore } from "../app/connection_store.ts";
import { DriverPool } from "../db/pool.ts";
import type { Catalog } from "../features/catalog.ts";
import type { SubscriptionSource } from "../features/listen.ts";
import type { Logger } from "../base/log.ts";
import type { Rotation } from "../server/auth/bridge_rotation.ts";
import type { RunningConsole } from "../console/console_server.ts";
import type { ServerState } from "../server/state.ts";

/** How to start a server. */
export interface StartOptions {
  /** The app data directory (settings, handshake). */
  home: string;
  /** Overrides `settings.port` (tests bind port 0). */
  port?: number;
  /** What the server offers; the database tools when not given. */
  catalog?: Catalog;
  subscriptionSources?: readonly SubscriptionSource[];
  log?: Logger;
  /** Transport idle timeout; the wire reference's 30 s unless a test shortens it. */
  idleTimeoutMs?: number;
  /** How long in-flight requests may finish at shutdown. */
  drainMs?: number;
  /** Handler deadline; the wire reference's 330 s unless a test shortens it. */
  deadlineMs?: number;
  /** SSE keep-alive interval; the wire reference's 15 s unless a test shortens it. */
  keepAliveMs?: number;
  /** Progress heartbeat interval (15 s unless a test shortens it). */
  heartbeatMs?: number;
  /** Settings and connections re-read interval (default 250 ms). */
  watchIntervalMs?: number;
  /** How often `state.db` is checked for token changes (default 250 ms). */
  tokenPollMs?: number;
  /** How often the bridge token's expiry is checked (default 10 s). */
  rotationCheckMs?: number;
  /** The clock for token expiry, lockouts, bridge rotation, approvals and the log. */
  now?: () => number;
  /** The directory standing for `~/.ssh` (SSH config and known hosts). */
  sshDir?: string;
  /** Overrides `settings.consolePort` (tests bind port 0). */
  consolePort?: number;
  /**
   * Keep the address (`serve`): a port absent from settings.json is chosen
   * once and written there with every default, and a kept port that is taken
   * gives way to a free one for this start, said in the log.
   */
  keepAddress?: boolean;
  /**
   * How the console opens itself in the browser when an approval waits and
   * no console page is open (tests record it instead).
   */
  openBrowser?: (url: string) => Promise<boolean>;
}

/** A started server. */
export interface RunningServer {
  readonly port: number;
  /** `http://127.0.0.1:<port>/mcp`. */
  readonly url: string;
  readonly instanceId: string;
  readonly handshakePath: string;
  readonly state: ServerState;
  /** The user's tokens (the same table the CLI manages). */
  readonly tokens: TokenStore;
  /** The activity log. */
  readonly activity: ActivityLog;
  /** The query history. */
  readonly history: QueryHistory;
  /** The saved connections in force. */
  readonly connections: ConnectionStore;
  /** The saved queries in force (queries.json). */
  readonly queries: QueryStore;
  /** The open database drivers. */
  readonly pool: DriverPool;
  /** The browser console; null when `"console": false`. */
  readonly console: RunningConsole | null;
  /** How many legacy sessions are open. */
  sessionCount(): number;
  /** How many requests are running (tests wait on it instead of sleeping). */
  inFlightCount(): number;
  /** How many `POST /mcp` the fast path answered (`server/mcp_post.ts`). */
  fastPostCount(): number;
  /** Re-read the tokens now, without waiting for the next poll. */
  syncTokens(): Promise<void>;
  /** The bridge token's rotation (tests drive it with an injected clock). */
  readonly rotation: Rotation;
  /** Stop: refuse new requests, let running ones finish, close, clean up. */
  stop(): Promise<void>;
}
