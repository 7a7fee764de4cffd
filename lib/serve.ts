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

import { MCP_PATH } from "./base/identity.ts";
import { removeHandshakeIfOurs } from "./app/handshake_file.ts";
import { stderrLogger } from "./base/log.ts";
import { startBrowserConsole } from "./serve/console.ts";
import { buildCore, type Core } from "./serve/core.ts";
import { bind, buildApp } from "./serve/endpoint.ts";
import { watchFiles } from "./serve/files.ts";
import { publishHandshake } from "./serve/handshake.ts";
import type { RunningServer, StartOptions } from "./serve/options.ts";
import { keepChosenPorts } from "./serve/ports.ts";
import { openStores } from "./serve/stores.ts";
export type { RunningServer, StartOptions } from "./serve/options.ts";
export { saveSettings } from "./serve/files.ts";

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
