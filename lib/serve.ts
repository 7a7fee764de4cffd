/**
 * The composition root: a running dbport server, made of the stores, the MCP
 * endpoint (lib/server/), the browser console (lib/console/), the handshake
 * and the file watches, with an orderly stop. The one file that knows every
 * floor; nothing imports it but the entry points (main.ts, the bench, the
 * tests' helper).
 *
 * Each resource is registered in one `AsyncDisposableStack` as it opens, so
 * a start that fails half-way closes what it opened, in reverse, and `stop()`
 * is the same stack disposed.
 *
 * @example Start on a free port and stop
 * ```ts
 * import { startServer } from "./serve.ts";
 *
 * const server = await startServer({ home: "/tmp/dbport-home", port: 0 });
 * console.log(server.url); // http://127.0.0.1:<port>/mcp
 * await server.stop();
 * ```
 *
 * @module
 */

import { PrivateColumnGuard } from "./server/private_sync.ts";
import { loadQueries, QUERIES_FILE, QueryStore } from "./app/queries.ts";
import { cliCommand } from "./app/cli_command.ts";
import { thrown } from "./base/thrown.ts";
import { messageOf } from "./base/message_of.ts";
import { type ActivityEntry, ActivityLog } from "./app/activity_log.ts";
import { editFile } from "./app/file_lock.ts";
import { type FileWatch, watchFile } from "./app/file_watch.ts";
import {
  inspectHandshake,
  removeHandshakeIfOurs,
  writeHandshake,
} from "./app/handshake_file.ts";
import { ensureAppDataDir, inAppDir } from "./app/paths.ts";
import {
  loadSettings,
  parseSettings,
  type Settings,
  settingsKeysOf,
  settingsText,
  writeSettingsFile,
} from "./app/settings.ts";
import { loadConsoleSecret } from "./console/secret.ts";
import { QueryHistory } from "./app/query_history.ts";
import { openStateDb, type StateDb } from "./app/state_db.ts";
import { TokenStore } from "./app/tokens.ts";
import { ConnectionStore } from "./app/connection_store.ts";
import { loadConnections } from "./app/connections.ts";
import { defaultSshContext, DriverPool } from "./db/pool.ts";
import type { Catalog } from "./features/catalog.ts";
import { databaseFeatures } from "./features/index.ts";
import type { SubscriptionSource } from "./features/listen.ts";
import { type Logger, stderrLogger } from "./base/log.ts";
import { CursorCodec } from "./protocol/cursor.ts";
import { HANDSHAKE_VERSION } from "./protocol/handshake.ts";
import {
  CONNECTIONS_FILE,
  EXPORTS_DIR,
  HANDSHAKE_FILE,
  KNOWN_HOSTS_FILE,
  SETTINGS_FILE,
} from "./base/identity.ts";
import { MODERN_VERSION } from "./protocol/versions.ts";
import { type AppDeps, createApp, MCP_PATH } from "./server/app.ts";
import { createMcpPost } from "./server/mcp_post.ts";
import { BridgeTokens } from "./server/auth/bridge_tokens.ts";
import { TokenBudgets } from "./server/budgets.ts";
import { tokenKey } from "./server/auth/principals.ts";
import { BRIDGE_BUDGET, loadBudgets } from "./app/token_budgets.ts";
import {
  type Rotation,
  startBridgeRotation,
} from "./server/auth/bridge_rotation.ts";
import { Lockout } from "./server/auth/lockout.ts";
import { TokenSync } from "./server/auth/token_sync.ts";
import { TokenVerifier } from "./server/auth/verifier.ts";
import { Approvals } from "./server/approvals.ts";
import { dialogFor, hostEnv } from "./app/host_dialog.ts";
import { openBrowser } from "./app/open_browser.ts";
import type { HistoryEntry } from "./app/query_history.ts";
import { type RunningConsole, startConsole } from "./console/console_server.ts";
import { Dispatcher } from "./server/dispatch.ts";
import { InFlightRegistry } from "./server/inflight.ts";
import { listen, type Listener } from "./server/listener.ts";
import { buildMethodTable } from "./server/methods.ts";
import { SessionStore } from "./server/sessions.ts";
import type { ServerState } from "./server/state.ts";

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

/** Start a server. Throws when the settings are invalid or the port is taken. */
export async function startServer(
  options: StartOptions,
): Promise<RunningServer> {
  const log = options.log ?? stderrLogger;
  const now = options.now ?? Date.now;
  // Disposed at the end of this function unless moved into the running
  // server: a failed start closes what it opened, last opened first.
  await using opened = new AsyncDisposableStack();
  const stores = opened.use(
    await openStores(options.home, log, options.sshDir),
  );
  const core = buildCore(options, stores, now, log);
  await stores.activity.prune(now());
  await stores.history.prune(now());
  await core.tokenSync.start();
  opened.defer(() => core.tokenSync.stop());
  const endpoint = buildApp(options, stores, core, now, log);
  const listener = await bind(options, stores, endpoint, log);
  opened.defer(() => listener.close());
  core.state.port = listener.port;
  const browser = await startBrowserConsole(options, stores, core, now, log);
  if (browser !== null) opened.defer(() => browser.close());
  core.browser = browser;
  const rotation = await publishHandshake(
    options,
    stores,
    core,
    listener,
    now,
    log,
  );
  // The bridge token dies with the server: forgotten here, and its only
  // copy on disk, the handshake, removed.
  opened.defer(async () => {
    await rotation.stop();
    await removeHandshakeIfOurs(stores.paths.handshake, core.state.instanceId);
  });
  // Serving: the first thing undone at stop, before any resource closes.
  opened.defer(() => drain(options, core));
  if (options.keepAddress) {
    await keepChosenPorts(stores, core.state, listener.port, browser?.port);
  }
  const watches = await watchFiles(options, stores, core.state, log);
  opened.defer(() => {
    for (const watch of watches) watch.stop();
  });

  const resources = opened.move();
  let stopped: Promise<void> | null = null;
  return {
    port: listener.port,
    url: `http://127.0.0.1:${listener.port}${MCP_PATH}`,
    instanceId: core.state.instanceId,
    handshakePath: stores.paths.handshake,
    state: core.state,
    tokens: stores.tokens,
    activity: stores.activity,
    history: stores.history,
    connections: stores.connections,
    queries: stores.queries,
    pool: stores.pool,
    console: browser,
    rotation,
    syncTokens: () => core.tokenSync.poll(),
    sessionCount: () => core.sessions.size,
    fastPostCount: () => endpoint.mcpPost.served,
    inFlightCount: () => core.inflight.size,
    stop() {
      core.state.stopping = true;
      stopped ??= resources.disposeAsync();
      return stopped;
    },
  };
}

/** Where the server's files are. */
interface Paths {
  settings: string;
  connections: string;
  queries: string;
  handshake: string;
}

/**
 * What the server keeps: settings, connections, drivers, the state database;
 * disposing it closes the drivers, flushes the logs and closes the database.
 */
interface Stores extends AsyncDisposable {
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
async function openStores(
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
  const connections = new ConnectionStore(saved.connections);
  // A malformed queries.json does not stop the server: it serves none and
  // says why (the file is for convenience; connections are the contract).
  const queried = await loadQueries(paths.queries);
  if (!queried.ok) log(`dbport: ${queried.message}; serving no saved queries`);
  const queries = new QueryStore(queried.ok ? queried.queries : []);
  const pool = new DriverPool({
    ssh: defaultSshContext([inAppDir(home, KNOWN_HOSTS_FILE)], sshDir),
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

/** The request-independent parts every request goes through. */
interface Core {
  state: ServerState;
  approvals: Approvals;
  inflight: InFlightRegistry;
  sessions: SessionStore;
  /** Aborted at stop: long-lived streams end with a complete result. */
  shutdown: AbortController;
  /** The browser console, once started (its pages follow the log). */
  browser: RunningConsole | null;
  verifier: TokenVerifier;
  tokenSync: TokenSync;
  /** Per-token budgets and the kill switch. */
  budgets: TokenBudgets;
}

/** Step 2: the server's state, approvals, requests in flight and token sync. */
function buildCore(
  options: StartOptions,
  stores: Stores,
  now: () => number,
  log: Logger,
): Core {
  const state: ServerState = {
    settings: stores.settings,
    port: 0,
    stopping: false,
    instanceId: crypto.randomUUID(),
  };
  const core = {} as Core;
  const approvals = new Approvals({
    dialog: () =>
      dialogFor(state.settings.hostDialog, undefined, core.browser?.dialog),
    timeoutMs: () => state.settings.approvalTimeoutSeconds * 1000,
    now,
  });
  const inflight = new InFlightRegistry();
  const sessions = new SessionStore();
  const verifier = new TokenVerifier(state.instanceId, now);
  const budgets = new TokenBudgets(now);
  const tokenSync = new TokenSync({
    store: stores.tokens,
    verifier,
    // Revoking a token ends its requests and its sessions (docs/wire.md
    // "Authentication", "Request lifecycle").
    onRevoked: (keys) => {
      for (const key of keys) {
        inflight.stopPrincipal(key, "revoked");
        approvals.forget(key);
        sessions.dropPrincipal(key);
      }
    },
    // Pausing a token (the kill switch) stops its running requests at once.
    budgets: () => loadBudgets(stores.db),
    onBudgets: (loaded) => {
      for (const key of budgets.update(loaded)) {
        inflight.stopPrincipal(
          key === BRIDGE_BUDGET ? `bridge:${state.instanceId}` : tokenKey(key),
          "paused",
        );
      }
    },
    log,
    now,
    ...(options.tokenPollMs === undefined
      ? {}
      : { intervalMs: options.tokenPollMs }),
  });
  return Object.assign(core, {
    state,
    approvals,
    inflight,
    sessions,
    shutdown: new AbortController(),
    browser: null,
    verifier,
    tokenSync,
    budgets,
  });
}

/** Step 3: the features, the method table and the Hono app over them. */
function buildApp(
  options: StartOptions,
  stores: Stores,
  core: Core,
  now: () => number,
  log: Logger,
) {
  const { state, inflight, sessions, verifier, tokenSync } = core;
  // The console's open pages follow the log and the history as they grow.
  const record = (entry: ActivityEntry) => {
    stores.activity.record(entry);
    core.browser?.events.changed("activity");
  };
  const history = {
    record: (entry: HistoryEntry) => {
      stores.history.record(entry);
      core.browser?.events.changed("history");
    },
    recent: (id: string, limit: number) => stores.history.recent(id, limit),
  };
  // One key for the list methods' cursors and list_tables': a cursor of one
  // is still refused by the other, by the method it names.
  const cursors = new CursorCodec();
  const features = databaseFeatures({
    cursors,
    connections: stores.connections,
    queries: stores.queries,
    pool: stores.pool,
    settings: () => state.settings,
    consent: core.approvals,
    history,
    exportDirectory: () =>
      state.settings.exportDirectory ?? inAppDir(options.home, EXPORTS_DIR),
    privateColumns: stores.privateColumns,
  });
  const methods = buildMethodTable({
    catalog: options.catalog ?? features.catalog,
    cursors,
    instanceId: state.instanceId,
    subscriptionSources: options.subscriptionSources ??
      (options.catalog === undefined ? features.subscriptionSources : []),
  });
  const deps: AppDeps = {
    state,
    log,
    methods,
    sessions,
    inflight,
    auth: {
      state,
      verifier,
      lockout: new Lockout(now),
      activity: record,
      now,
      onVerified: (principal) => tokenSync.noteUse(principal),
      refresh: () => tokenSync.pollSoon(),
    },
    dispatcher: new Dispatcher({
      inflight,
      budgets: core.budgets,
      // One snapshot per call (ctx.settings): the features' reads of it.
      settings: () => state.settings,
      shutdown: core.shutdown.signal,
      log,
      now,
      activity: record,
      ...(options.deadlineMs === undefined
        ? {}
        : { deadlineMs: options.deadlineMs }),
      ...(options.keepAliveMs === undefined
        ? {}
        : { keepAliveMs: options.keepAliveMs }),
      ...(options.heartbeatMs === undefined
        ? {}
        : { heartbeatMs: options.heartbeatMs }),
    }),
  };
  return { app: createApp(deps), mcpPost: createMcpPost(deps) };
}

/** Step 4: listen on 127.0.0.1; a port in use is said in one sentence. */
async function bind(
  options: StartOptions,
  stores: Stores,
  { app, mcpPost }: ReturnType<typeof buildApp>,
  log: Logger,
): Promise<Listener> {
  const port = options.port ?? stores.settings.port;
  const bindOn = (port: number) =>
    listen(app.fetch, {
      port,
      ...(options.idleTimeoutMs === undefined
        ? {}
        : { idleTimeoutMs: options.idleTimeoutMs }),
    }, mcpPost.handle);
  try {
    return await givingWay(options, port, "port", bindOn, log);
  } catch (error) {
    const { code } = thrown(error);
    throw new Error(
      code === "EADDRINUSE"
        ? `Cannot listen on 127.0.0.1:${port}: the port is in use (change "port" in ${stores.paths.settings}, or set it to 0 for a free one)`
        : `Cannot listen on 127.0.0.1:${port}: ${messageOf(error)}`,
      { cause: error },
    );
  }
}

/**
 * Bind `port`; when the address is kept and that port is taken, bind a free
 * one for this start and say so (settings.json keeps the port it names).
 */
async function givingWay<T extends { port: number }>(
  options: StartOptions,
  port: number,
  key: "port" | "consolePort",
  bindOn: (port: number) => Promise<T>,
  log: Logger,
): Promise<T> {
  try {
    return await bindOn(port);
  } catch (error) {
    if (!options.keepAddress || port === 0) throw error;
    if (thrown(error).code !== "EADDRINUSE") throw error;
    const bound = await bindOn(0);
    log(
      `dbport: 127.0.0.1:${port} ("${key}" in ${SETTINGS_FILE}) is in use; ${
        key === "port" ? "the MCP endpoint" : "the console"
      } listens on 127.0.0.1:${bound.port} for this start (${
        key === "port"
          ? `${cliCommand()} client-config http prints it`
          : `${cliCommand()} console opens it`
      }); the next start tries ${port} again`,
    );
    return bound;
  }
}

/**
 * Keep the ports this start chose where settings.json names none: the file
 * is written with every setting in force and those ports, so the next start
 * binds the same address (an HTTP client's saved URL, an open console tab).
 */
async function keepChosenPorts(
  stores: Stores,
  state: ServerState,
  port: number,
  consolePort: number | undefined,
): Promise<void> {
  // Under the file's lock, on the file as it is now: a `settings set` made
  // meanwhile is kept, and only the ports it does not name are added.
  await editFile(stores.paths.settings, (text) => {
    const own = settingsKeysOf(text);
    if (
      own.has("port") && (own.has("consolePort") || consolePort === undefined)
    ) {
      return null;
    }
    const next: Settings = { ...state.settings };
    if (!own.has("port")) next.port = port;
    if (!own.has("consolePort") && consolePort !== undefined) {
      next.consolePort = consolePort;
    }
    state.settings = next;
    return settingsText(next);
  });
}

/** Step 4b: the browser console on its own 127.0.0.1 port, unless it is off. */
async function startBrowserConsole(
  options: StartOptions,
  stores: Stores,
  core: Core,
  now: () => number,
  log: Logger,
): Promise<RunningConsole | null> {
  const { state } = core;
  if (!state.settings.console) return null;
  const port = options.consolePort ?? state.settings.consolePort;
  const secret = await loadConsoleSecret(options.home);
  try {
    return await givingWay(
      options,
      port,
      "consolePort",
      (port) =>
        startConsole({
          settings: () => state.settings,
          connections: stores.connections,
          connectionsPath: stores.paths.connections,
          pool: stores.pool,
          activity: stores.activity,
          history: stores.history,
          queries: stores.queries,
          tokens: stores.tokens,
          tokensChanged: () => core.tokenSync.poll(),
          now,
          log,
        }, {
          port,
          secret,
          ...(options.idleTimeoutMs === undefined
            ? {}
            : { idleTimeoutMs: options.idleTimeoutMs }),
          openBrowser: options.openBrowser ??
            ((url) => openBrowser(url, hostEnv())),
        }),
      log,
    );
  } catch (error) {
    const { code } = thrown(error);
    throw new Error(
      code === "EADDRINUSE"
        ? `Cannot start the console on 127.0.0.1:${port}: the port is in use (change "consolePort" in ${stores.paths.settings}, or set it to 0 for a free one)`
        : `Cannot start the console on 127.0.0.1:${port}: ${messageOf(error)}`,
      { cause: error },
    );
  }
}

/**
 * Step 5: the handshake, written with the first bridge token and rewritten
 * with each new one (docs/wire.md "The stdio bridge").
 */
async function publishHandshake(
  options: StartOptions,
  stores: Stores,
  core: Core,
  listener: Listener,
  now: () => number,
  log: Logger,
): Promise<Rotation> {
  const { instanceId } = core.state;
  const previous = await inspectHandshake(stores.paths.handshake);
  if (previous.kind === "live") {
    log(
      `dbport: another dbport server (pid ${previous.pid}) also runs; bridges will now reach this one`,
    );
  }
  const startedAt = new Date(now()).toISOString();
  return await startBridgeRotation({
    tokens: new BridgeTokens(now),
    verifier: core.verifier,
    publish: (token) =>
      writeHandshake(stores.paths.handshake, {
        version: HANDSHAKE_VERSION,
        port: listener.port,
        pid: Deno.pid,
        instanceId,
        protocolVersion: MODERN_VERSION,
        startedAt,
        token: token.plaintext,
        expiresAt: new Date(token.expiresAt).toISOString(),
        ...(core.browser === null ? {} : {
          console: {
            port: core.browser.port,
            path: core.browser.path,
            key: core.browser.key,
          },
        }),
      }),
    log,
    ...(options.rotationCheckMs === undefined
      ? {}
      : { checkMs: options.rotationCheckMs }),
  });
}

/** Step 6: follow edits of the settings and connections files. */
async function watchFiles(
  options: StartOptions,
  stores: Stores,
  state: ServerState,
  log: Logger,
): Promise<FileWatch[]> {
  const { settings, connections, queries } = stores.paths;
  return [
    watchFile(
      settings,
      await Deno.readTextFile(settings).catch(() => null),
      (text) => applySettings(state, text, settings, log),
      options.watchIntervalMs,
    ),
    watchFile(
      connections,
      await Deno.readTextFile(connections).catch(() => null),
      (text) => stores.connections.apply(text, connections, log),
      options.watchIntervalMs,
    ),
    watchFile(
      queries,
      await Deno.readTextFile(queries).catch(() => null),
      (text) => void stores.queries.apply(text, queries, log),
      options.watchIntervalMs,
    ),
  ];
}

/**
 * The first step of a stop: new requests are refused, long-lived streams
 * (subscriptions/listen) end with a complete result, and running requests
 * get `drainMs` to finish before they are stopped.
 */
async function drain(options: StartOptions, core: Core): Promise<void> {
  core.state.stopping = true;
  core.shutdown.abort();
  if (!(await core.inflight.drain(options.drainMs ?? 5_000))) {
    core.inflight.stopAll("shutdown");
    await core.inflight.drain(1_000);
  }
}

/** Apply re-read settings; an invalid file keeps the settings in force. */
function applySettings(
  state: ServerState,
  text: string | null,
  path: string,
  log: Logger,
): void {
  const parsed = parseSettings(text ?? "", path);
  if (!parsed.ok) {
    log(`dbport: ${parsed.message}; keeping the settings in force`);
    return;
  }
  const next: Settings = parsed.settings;
  if (next.port !== state.settings.port && next.port !== 0) {
    log(
      `dbport: "port" changed to ${next.port}; it takes effect at the next start`,
    );
  }
  for (const key of ["console", "consolePort"] as const) {
    if (next[key] !== state.settings[key]) {
      log(
        `dbport: "${key}" changed to ${
          JSON.stringify(next[key])
        }; it takes effect at the next start`,
      );
    }
  }
  state.settings = next;
}

/** Write settings (used by the CLI and tests). */
export async function saveSettings(
  home: string,
  settings: Partial<Settings>,
): Promise<void> {
  await writeSettingsFile(inAppDir(home, SETTINGS_FILE), settings);
}
