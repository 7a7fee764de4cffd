/**
 * What the database tools need from the server: the saved connections, the
 * open drivers, the live settings and the user's consent. Never HTTP.
 *
 * @module
 */

import type { ConnectionStore } from "../../app/connection_store.ts";
import type { Settings } from "../../app/settings.ts";
import type { DriverPool } from "../../db/pool.ts";
import type { Consent } from "../consent.ts";

/** The database tools' view of the server. */
export interface ToolDeps {
  connections: ConnectionStore;
  pool: DriverPool;
  settings(): Settings;
  /** Asks the user where a connection's policy says so. */
  consent: Consent;
}
