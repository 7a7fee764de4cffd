/**
 * Steps 3 and 4 of a start: the features, the method table and the MCP
 * endpoint over them (the Hono app and the `POST /mcp` fast path), bound on
 * 127.0.0.1.
 *
 * @module
 */

import { thrown } from "../base/thrown.ts";
import { messageOf } from "../base/message_of.ts";
import type { ActivityEntry } from "../app/activity_log.ts";
import { inAppDir } from "../app/paths.ts";
import type { FeatureDeps } from "../features/deps.ts";
import type { Logger } from "../base/log.ts";
import { CursorCodec } from "../protocol/cursor.ts";
import { EXPORTS_DIR } from "../base/identity.ts";
import type { AppDeps } from "../server/app.ts";
import { createMcpPost } from "../server/mcp_post.ts";
import { Lockout } from "../server/auth/lockout.ts";
import type { HistoryEntry } from "../app/query_history.ts";
import { Dispatcher } from "../server/dispatch.ts";
import { listen, type Listener } from "../server/listener.ts";
import { buildMethodTable } from "../server/methods.ts";
import type { Core } from "./core.ts";
import type { StartOptions } from "./options.ts";
import { givingWay } from "./ports.ts";
import type { Stores } from "./stores.ts";

/** Step 3: the features, the method table and the Hono app over them. */
export function buildApp(
  options: StartOptions,
  stores: Stores,
  core: Core,
  now: () => number,
  log: Logger,
) {
  const { state, inflight, sessions, verifier, tokenSync } = core;
  // The console's open pages follow the log as it grows.
  const record = (entry: ActivityEntry) => {
    stores.activity.record(entry);
    core.browser?.events.changed("activity");
  };
  // One key for the list methods' cursors and list_tables': a cursor of one
  // is still refused by the other, by the method it names.
  const cursors = new CursorCodec();
  const featureDeps = featureDepsOf(options, stores, core, cursors);
  const methods = buildMethodTable({
    // The features' code (the tools, the SQL classifier, the prompts, the
    // views: a third of dbport's) is imported at the first method that needs
    // it, not at start: an idle server does not hold it (docs/performance.md
    // "Memory").
    catalog: options.catalog ?? (async () => {
      const { databaseFeatures } = await import("../features/index.ts");
      const features = databaseFeatures(featureDeps);
      return {
        catalog: features.catalog,
        subscriptionSources: options.subscriptionSources ??
          features.subscriptionSources,
      };
    }),
    cursors,
    instanceId: state.instanceId,
    ...(options.subscriptionSources === undefined
      ? {}
      : { subscriptionSources: options.subscriptionSources }),
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
    dispatcher: dispatcherOf(options, core, now, log, record),
  };
  return { fetchApp: lazyApp(deps), mcpPost: createMcpPost(deps) };
}

/** What the features are given: the stores, the settings, the consent. */
function featureDepsOf(
  options: StartOptions,
  stores: Stores,
  core: Core,
  cursors: CursorCodec,
): FeatureDeps {
  const { state } = core;
  // The console's open pages follow the history as it grows.
  const history = {
    record: (entry: HistoryEntry) => {
      stores.history.record(entry);
      core.browser?.events.changed("history");
    },
    recent: (id: string, limit: number) => stores.history.recent(id, limit),
  };
  return {
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
  };
}

/** The dispatcher of the endpoint's calls, with the start's timings. */
function dispatcherOf(
  options: StartOptions,
  core: Core,
  now: () => number,
  log: Logger,
  record: (entry: ActivityEntry) => void,
): Dispatcher {
  const { state, inflight } = core;
  return new Dispatcher({
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
  });
}

/**
 * The Hono app over `deps`. It answers only what the fast path leaves to
 * it (preflights, other methods and paths): it and Hono are loaded at the
 * first such request, not at start (docs/performance.md "Memory").
 */
function lazyApp(
  deps: AppDeps,
): (request: Request) => Promise<Response> {
  let app: Promise<(request: Request) => Response | Promise<Response>> | null =
    null;
  return async (request: Request) => {
    app ??= import("../server/app.ts").then((module) => {
      const built = module.createApp(deps);
      return (r: Request) => built.fetch(r);
    });
    return (await app)(request);
  };
}

/** Step 4: listen on 127.0.0.1; a port in use is said in one sentence. */
export async function bind(
  options: StartOptions,
  stores: Stores,
  { fetchApp, mcpPost }: ReturnType<typeof buildApp>,
  log: Logger,
): Promise<Listener> {
  const port = options.port ?? stores.settings.port;
  const bindOn = (port: number) =>
    listen(fetchApp, {
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
