/**
 * What the features need from the server: the saved connections, the open
 * drivers, the live settings, the user's consent and the query history.
 * Never HTTP.
 *
 * @module
 */

import type { ConnectionStore } from "../app/connection_store.ts";
import type { HistoryStore } from "../app/query_history.ts";
import type { Settings } from "../app/settings.ts";
import type { DriverPool } from "../db/pool.ts";
import type { Consent } from "./consent.ts";

/** The features' view of the server. */
export interface FeatureDeps {
  connections: ConnectionStore;
  pool: DriverPool;
  settings(): Settings;
  /** Asks the user where a connection's policy says so. */
  consent: Consent;
  /** Where statements clients ran are recorded (while `queryHistory` is on). */
  history: HistoryStore;
}
