/**
 * The names by which dbport is known on the wire and on disk.
 *
 * Everything an embedding app may want to rename lives here and nowhere else:
 * the service name, the bridge executable, the URL scheme, the token prefix and
 * the resource URI root. Pure constants, shared by the server and the bridge.
 *
 * @module
 */

/** The service name: serverInfo.name, the `WWW-Authenticate` realm, the app directory. */
export const SERVICE_NAME = "dbport";

/** Human-readable title shown by clients. */
export const SERVICE_TITLE = "dbport";

/** Version of this server, reported in serverInfo. */
export const SERVICE_VERSION = "0.1.0";

/** Home page reported in serverInfo.websiteUrl. */
export const SERVICE_WEBSITE = "https://dbport.dev";

/** The stdio bridge executable's name. */
export const BRIDGE_EXECUTABLE = "dbport-mcp";

/** The app's URL scheme (without `://`). */
export const URL_SCHEME = "dbport";

/** The URL the bridge opens to start the app on demand (docs/wire.md "The stdio bridge", rule 2). */
export const START_MCP_URL = `${URL_SCHEME}://integrations/start-mcp`;

/** Prefix of every plaintext access token. */
export const TOKEN_PREFIX = "dbp_";

/** Root of every resource URI the server publishes. */
export const RESOURCE_URI_ROOT = `${URL_SCHEME}://connections`;

/** Result `_meta` key carrying the random id of this server start (the bridge's proof of identity). */
export const INSTANCE_ID_META_KEY = `${SERVICE_NAME}/instanceId`;

/** Environment variable that overrides the app data directory. */
export const HOME_ENV = "DBPORT_HOME";

/** File name of the handshake in the app data directory. */
export const HANDSHAKE_FILE = "mcp-handshake.json";

/** The one MCP endpoint's path. */
export const MCP_PATH = "/mcp";

/** File name of the settings in the app data directory. */
export const SETTINGS_FILE = "settings.json";

/** The saved connections, in the app data directory. */
export const CONNECTIONS_FILE = "connections.json";

/** dbport's own SSH known-hosts file in the app data directory (`trust-host`). */
export const KNOWN_HOSTS_FILE = "known_hosts";

/** The demo database `serve` creates when no connection is saved. */
export const DEMO_DB_FILE = "demo-shop.db";

/** The demo connection's name. */
export const DEMO_CONNECTION_NAME = "Demo shop";

/** The serverInfo object every modern result carries in `_meta`. */
export const SERVER_INFO = Object.freeze({
  name: SERVICE_NAME,
  title: SERVICE_TITLE,
  version: SERVICE_VERSION,
  websiteUrl: SERVICE_WEBSITE,
});

/** File name of the app's state database (tokens, activity log) in the app data directory. */
export const STATE_DB_FILE = "state.db";

/** Where `export_query` writes unless `exportDirectory` says otherwise. */
export const EXPORTS_DIR = "exports";

/** Name of the token each server start mints for the stdio bridge (docs/wire.md "The stdio bridge", rule 3). */
export const BRIDGE_TOKEN_NAME = "__stdio_bridge__";

/**
 * A token's name as a person reads it: the bridge's own token is no name to
 * show, so it reads "stdio bridge" (as the console's Activity says it).
 */
export function tokenLabel(name: string): string {
  return name === BRIDGE_TOKEN_NAME ? "stdio bridge" : name;
}

/**
 * How the bridge's own requests (its `server/discover` checks at start and
 * at each client's initialize) read in the reports: they come with the
 * bridge's token and the bridge's own clientInfo (`dbport-mcp`), and are no
 * client of the user's.
 */
export const BRIDGE_ITSELF = "stdio bridge (its own checks)";

/**
 * Whether a logged request is the bridge's own rather than a client's: the
 * bridge's token and the bridge's own clientInfo name. Only a display rule
 * (the requests stay in the log); a client behind the bridge sends its own
 * name.
 */
export function isBridgeItself(
  tokenName: string | null,
  clientName: string | null,
): boolean {
  return tokenName === BRIDGE_TOKEN_NAME && clientName === BRIDGE_EXECUTABLE;
}
