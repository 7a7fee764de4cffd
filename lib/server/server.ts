/**
 * A running dbport server: settings loaded and watched, the app bound on
 * 127.0.0.1, the handshake written, and an orderly stop.
 *
 * @module
 */

import { messageOf } from "../protocol/message_of.ts";
import { type ActivityEntry, ActivityLog } from "../app/activity_log.ts";
import { writeFileAtomic } from "../app/atomic_file.ts";
import { type FileWatch, watchFile } from "../app/file_watch.ts";
import {
  inspectHandshake,
  removeHandshakeIfOurs,
  writeHandshake,
} from "../app/handshake_file.ts";
import { ensureAppDataDir, inAppDir } from "../app/paths.ts";
import { loadSettings, parseSettings, type Settings } from "../app/settings.ts";
import { QueryHistory } from "../app/query_history.ts";
import { openStateDb } from "../app/state_db.ts";
import { TokenStore } from "../app/tokens.ts";
import { ConnectionStore } from "../app/connection_store.ts";
import { loadConnections } from "../app/connections.ts";
import { DriverPool } from "../db/pool.ts";
import type { Catalog } from "../features/catalog.ts";
import { databaseFeatures } from "../features/index.ts";
import type { SubscriptionSource } from "../features/listen.ts";
import { type Logger, stderrLogger } from "../log.ts";
import { CursorCodec } from "../protocol/cursor.ts";
import { HANDSHAKE_VERSION } from "../protocol/handshake.ts";
import {
  CONNECTIONS_FILE,
  HANDSHAKE_FILE,
  SETTINGS_FILE,
} from "../protocol/identity.ts";
import { MODERN_VERSION } from "../protocol/versions.ts";
import { createApp, MCP_PATH } from "./app.ts";
import { BridgeTokens } from "./auth/bridge_tokens.ts";
import { type Rotation, startBridgeRotation } from "./auth/bridge_rotation.ts";
import { Lockout } from "./auth/lockout.ts";
import { TokenSync } from "./auth/token_sync.ts";
import { TokenVerifier } from "./auth/verifier.ts";
import { Approvals } from "./approvals.ts";
import { dialogFor } from "../app/host_dialog.ts";
import { Dispatcher } from "./dispatch.ts";
import { InFlightRegistry } from "./inflight.ts";
import { listen, type Listener } from "./listener.ts";
import { buildMethodTable } from "./methods.ts";
import { SessionStore } from "./sessions.ts";
import type { ServerState } from "./state.ts";

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
  /** Transport idle timeout; the contract's 30 s unless a test shortens it. */
  idleTimeoutMs?: number;
  /** How long in-flight requests may finish at shutdown. */
  drainMs?: number;
  /** Handler deadline; the contract's 330 s unless a test shortens it. */
  deadlineMs?: number;
  /** SSE keep-alive interval; the contract's 15 s unless a test shortens it. */
  keepAliveMs?: number;
  /** Settings and connections re-read interval (default 250 ms). */
  watchIntervalMs?: number;
  /** How often `state.db` is checked for token changes (default 250 ms). */
  tokenPollMs?: number;
  /** How often the bridge token's expiry is checked (default 10 s). */
  rotationCheckMs?: number;
  /** The clock for token expiry, lockouts, bridge rotation, approvals and the log. */
  now?: () => number;
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
  /** The open database drivers. */
  readonly pool: DriverPool;
  /** How many legacy sessions are open. */
  sessionCount(): number;
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
  await ensureAppDataDir(options.home);
  const settingsPath = inAppDir(options.home, SETTINGS_FILE);
  const handshakePath = inAppDir(options.home, HANDSHAKE_FILE);
  const loaded = await loadSettings(settingsPath);
  if (!loaded.ok) throw new Error(loaded.message);
  const connectionsPath = inAppDir(options.home, CONNECTIONS_FILE);
  const saved = await loadConnections(connectionsPath);
  if (!saved.ok) throw new Error(saved.message);
  const connections = new ConnectionStore(saved.connections);
  const pool = new DriverPool();
  // A removed or edited connection's driver closes (edits reopen on next use).
  connections.onChange((all) => {
    pool.retain(new Set(all.map((connection) => connection.id))).catch(
      () => {},
    );
  });

  const now = options.now ?? Date.now;
  const db = await openStateDb(options.home);
  const tokens = new TokenStore(db);
  const activity = new ActivityLog(db, log);
  const record = (entry: ActivityEntry) => activity.record(entry);
  const history = new QueryHistory(db, log);

  const instanceId = crypto.randomUUID();
  const state: ServerState = {
    settings: loaded.settings,
    port: 0,
    stopping: false,
    instanceId,
  };
  const approvals = new Approvals({
    dialog: () => dialogFor(state.settings.hostDialog),
    now,
  });
  const inflight = new InFlightRegistry();
  const sessions = new SessionStore();
  const shutdown = new AbortController();
  const verifier = new TokenVerifier(instanceId, now);
  const tokenSync = new TokenSync({
    store: tokens,
    verifier,
    // Revoking a token ends its requests and its sessions (contract
    // "Authentication" 9, "Request lifecycle").
    onRevoked: (keys) => {
      for (const key of keys) {
        inflight.stopPrincipal(key, "revoked");
        approvals.forget(key);
        sessions.dropPrincipal(key);
      }
    },
    log,
    now,
    ...(options.tokenPollMs === undefined
      ? {}
      : { intervalMs: options.tokenPollMs }),
  });
  try {
    await activity.prune(now());
    await history.prune(now());
    await tokenSync.start();
  } catch (error) {
    db.close();
    throw error;
  }
  const features = databaseFeatures({
    connections,
    pool,
    settings: () => state.settings,
    consent: approvals,
    history,
  });
  const methods = buildMethodTable({
    catalog: options.catalog ?? features.catalog,
    cursors: new CursorCodec(),
    instanceId,
    subscriptionSources: options.subscriptionSources ??
      (options.catalog === undefined ? features.subscriptionSources : []),
  });
  const app = createApp({
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
      shutdown: shutdown.signal,
      log,
      now,
      activity: record,
      ...(options.deadlineMs === undefined
        ? {}
        : { deadlineMs: options.deadlineMs }),
      ...(options.keepAliveMs === undefined
        ? {}
        : { keepAliveMs: options.keepAliveMs }),
    }),
  });

  const port = options.port ?? loaded.settings.port;
  const listener: Listener = await listen(app.fetch, {
    port,
    ...(options.idleTimeoutMs === undefined
      ? {}
      : { idleTimeoutMs: options.idleTimeoutMs }),
  }).catch(async (error: unknown) => {
    await tokenSync.stop();
    db.close();
    const code = (error as { code?: string }).code;
    throw new Error(
      code === "EADDRINUSE"
        ? `Cannot listen on 127.0.0.1:${port}: the port is in use (change "port" in ${settingsPath}, or set it to 0 for a free one)`
        : `Cannot listen on 127.0.0.1:${port}: ${messageOf(error)}`,
      { cause: error },
    );
  });
  state.port = listener.port;

  const previous = await inspectHandshake(handshakePath);
  if (previous.kind === "live") {
    log(
      `dbport: another dbport server (pid ${previous.pid}) also runs; bridges will now reach this one`,
    );
  }
  const startedAt = new Date(now()).toISOString();
  // The handshake is written with the first bridge token, and rewritten with
  // each new one (contract: "Stdio bridge" 3).
  const rotation = await startBridgeRotation({
    tokens: new BridgeTokens(now),
    verifier,
    publish: (token) =>
      writeHandshake(handshakePath, {
        version: HANDSHAKE_VERSION,
        port: listener.port,
        pid: Deno.pid,
        instanceId,
        protocolVersion: MODERN_VERSION,
        startedAt,
        token: token.plaintext,
        expiresAt: new Date(token.expiresAt).toISOString(),
      }),
    log,
    ...(options.rotationCheckMs === undefined
      ? {}
      : { checkMs: options.rotationCheckMs }),
  });

  const watch: FileWatch = watchFile(
    settingsPath,
    await Deno.readTextFile(settingsPath).catch(() => null),
    (text) => applySettings(state, text, settingsPath, log),
    options.watchIntervalMs,
  );
  const connectionsWatch: FileWatch = watchFile(
    connectionsPath,
    await Deno.readTextFile(connectionsPath).catch(() => null),
    (text) => connections.apply(text, connectionsPath, log),
    options.watchIntervalMs,
  );

  let stopped: Promise<void> | null = null;
  return {
    port: listener.port,
    url: `http://127.0.0.1:${listener.port}${MCP_PATH}`,
    instanceId,
    handshakePath,
    state,
    tokens,
    activity,
    history,
    connections,
    pool,
    rotation,
    syncTokens: () => tokenSync.poll(),
    sessionCount: () => sessions.size,
    stop() {
      stopped ??= (async () => {
        state.stopping = true;
        watch.stop();
        connectionsWatch.stop();
        await tokenSync.stop();
        // Long-lived streams (subscriptions/listen) end with a complete result.
        shutdown.abort();
        if (!(await inflight.drain(options.drainMs ?? 5_000))) {
          inflight.stopAll("shutdown");
          await inflight.drain(1_000);
        }
        await listener.close();
        await pool.closeAll();
        // The bridge token dies with the server: forgotten here, and its only
        // copy on disk, the handshake, removed.
        await rotation.stop();
        await removeHandshakeIfOurs(handshakePath, instanceId);
        await activity.close();
        await history.close();
        db.close();
      })();
      return stopped;
    },
  };
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
  state.settings = next;
}

/** Write settings (used by the CLI and tests). */
export async function saveSettings(
  home: string,
  settings: Partial<Settings>,
): Promise<void> {
  await ensureAppDataDir(home);
  await writeFileAtomic(
    inAppDir(home, SETTINGS_FILE),
    JSON.stringify(settings, null, 2) + "\n",
    0o600,
  );
}
