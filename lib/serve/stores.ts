/**
 * Step 1 of a start: the settings, the connections and saved queries, the
 * driver pool and the state database, closed together.
 *
 * @module
 */

import { PrivateColumnGuard } from "../server/private_sync.ts";
import { loadQueries, QUERIES_FILE, QueryStore } from "../app/queries.ts";
import { ActivityLog } from "../app/activity_log.ts";
import { ensureAppDataDir, inAppDir } from "../app/paths.ts";
import { loadSettings, type Settings } from "../app/settings.ts";
import { QueryHistory } from "../app/query_history.ts";
import { openStateDb, type StateDb } from "../app/state_db.ts";
import { TokenStore } from "../app/tokens.ts";
import { ConnectionStore, logUnusable } from "../app/connection_store.ts";
import { loadConnections } from "../app/connections.ts";
import { DriverPool } from "../db/pool.ts";
import { defaultSshContext } from "../db/open_driver.ts";
import type { Logger } from "../base/log.ts";
import {
  CONNECTIONS_FILE,
  HANDSHAKE_FILE,
  KNOWN_HOSTS_FILE,
  SETTINGS_FILE,
  STATE_DB_FILE,
} from "../base/identity.ts";

/** Where the server's files are. */
export interface Paths {
  settings: string;
  connections: string;
  queries: string;
  handshake: string;
}

/**
 * What the server keeps: settings, connections, drivers, the state database;
 * disposing it closes the drivers, flushes the logs and closes the database.
 */
export interface Stores extends AsyncDisposable {
  paths: Paths;
  settings: Settings;
  connections: ConnectionStore;
  queries: QueryStore;
  pool: DriverPool;
  db: StateDb;
  tokens: TokenStore;
  activity: ActivityLog;
  history: QueryHistory;
  /** Private columns re-synced at start and whenever connections.json changes. */
  privateColumns: PrivateColumnGuard;
}

/** Step 1: read the settings and connections, open the state database. */
export async function openStores(
  home: string,
  log: Logger,
  sshDir: string | undefined,
): Promise<Stores> {
  await ensureAppDataDir(home);
  const paths: Paths = {
    settings: inAppDir(home, SETTINGS_FILE),
    connections: inAppDir(home, CONNECTIONS_FILE),
    queries: inAppDir(home, QUERIES_FILE),
    handshake: inAppDir(home, HANDSHAKE_FILE),
  };
  const loaded = await loadSettings(paths.settings);
  if (!loaded.ok) throw new Error(loaded.message);
  const saved = await loadConnections(paths.connections);
  if (!saved.ok) throw new Error(saved.message);
  // One connection whose URL cannot be used never stops the server.
  logUnusable(saved.unusable, paths.connections, log);
  const connections = new ConnectionStore(saved.connections, saved.unusable);
  // A malformed queries.json does not stop the server: it serves none and
  // says why (the file is for convenience; connections are the contract).
  const queried = await loadQueries(paths.queries);
  if (!queried.ok) log(`dbport: ${queried.message}; serving no saved queries`);
  const queries = new QueryStore(queried.ok ? queried.queries : []);
  const pool = new DriverPool({
    ssh: defaultSshContext([inAppDir(home, KNOWN_HOSTS_FILE)], sshDir),
    // The state database (tokens, activity, history) is never a connection.
    ownFiles: [inAppDir(home, STATE_DB_FILE)],
  });
  // A removed or edited connection's driver closes (edits reopen on next use).
  connections.onChange((all) => {
    pool.retain(new Set(all.map((connection) => connection.id))).catch(
      () => {},
    );
  });
  const db = await openStateDb(home);
  const activity = new ActivityLog(db, log);
  const history = new QueryHistory(db, log);
  const privateColumns = new PrivateColumnGuard(connections, log);
  return {
    paths,
    settings: loaded.settings,
    connections,
    queries,
    pool,
    db,
    tokens: new TokenStore(db),
    activity,
    history,
    privateColumns,
    async [Symbol.asyncDispose]() {
      // A re-sync under way ends before the drivers it uses close.
      await privateColumns.settled();
      await pool.closeAll();
      await activity.close();
      await history.close();
      db.close();
    },
  };
}
