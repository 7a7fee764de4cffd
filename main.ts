// deno-lint-ignore-file no-console
/**
 * dbport's entry: `serve` runs the MCP server; the other commands are the
 * app's management CLI (`deno task dbport <command>`).
 *
 * @module
 */

import { cliCommand } from "./lib/app/cli_command.ts";
import { messageOf } from "./lib/base/message_of.ts";
import { describeDialog } from "./lib/app/host_dialog.ts";
import { appDataDir, ensureAppDataDir, inAppDir } from "./lib/app/paths.ts";
import { explainStartup } from "./lib/app/startup_error.ts";
import { loadSettings } from "./lib/app/settings.ts";
import { openStateDb, type StateDb } from "./lib/app/state_db.ts";
import { tokenStatus } from "./lib/app/tokens.ts";
import { consoleIO, UsageError } from "./lib/cli/io.ts";
import {
  BRIDGE_EXECUTABLE,
  CONNECTIONS_FILE,
  HANDSHAKE_FILE,
  SERVICE_NAME,
  SERVICE_VERSION,
  SETTINGS_FILE,
  START_MCP_URL,
  URL_SCHEME,
} from "./lib/base/identity.ts";
import { sampleLoopDelay } from "./lib/server/loop_delay.ts";
import { startServer } from "./lib/serve.ts";

const USAGE =
  `${SERVICE_NAME} ${SERVICE_VERSION}: the local MCP server of your database client

Usage: ${cliCommand()} <command>

Commands:
  serve              Start the MCP server on 127.0.0.1 (also: deno task serve)
  settings           Print the settings in force and where they live
  settings set KEY VALUE
                     Change one setting in settings.json (checked as the file is)
  connections        Add, list, change, remove and test saved connections (connections --help)
  tokens             Create, list and revoke access tokens (tokens --help)
  queries            Saved queries AI clients call as tools: add, edit, list, remove (queries --help)
  clients            Clients seen in the last 5 minutes [--json]
  activity           The activity log [--limit N] [--follow] [--json]
  history            The statements AI clients ran [--connection C] [--grep TEXT] [--limit N] [--json|--csv]
  console            Open the running server's console in the browser [--print]
  open-url URL       Start the server in the background for ${START_MCP_URL}
  register-url-handler
                     Make ${URL_SCHEME}:// URLs start the server (Linux; prints the macOS/Windows way)
  install-bridge     Install the ${BRIDGE_EXECUTABLE} stdio bridge on the PATH (deno install -g)
  client-config CLIENT
                     Print a configuration snippet for claude-desktop, claude-code,
                     cursor, vscode or http (client-config --help)
  help               Show this help

Environment:
  DBPORT_HOME        The app data directory (default: the platform's app config directory)
  DBPORT_LAUNCH      The command ${BRIDGE_EXECUTABLE} runs to start the server (default: the dbport:// handler,
                     else, run from a checkout, that checkout's serve)`;

/**
 * The saved connections, to name them; none when connections.json cannot be
 * read (the log and history stay readable, with ids instead of names).
 */
async function savedConnections() {
  const { loadConnections } = await import("./lib/app/connections.ts");
  const loaded = await loadConnections(
    inAppDir(appDataDir(), CONNECTIONS_FILE),
  );
  return loaded.ok ? loaded.connections : [];
}

/** Run a command against the app's state database, closing it after. */
async function withStateDb(
  run: (db: StateDb) => Promise<number>,
): Promise<number> {
  const db = await openStateDb(appDataDir());
  try {
    return await run(db);
  } finally {
    db.close();
  }
}

/** An abort signal that fires on Ctrl+C or SIGTERM (for --follow). */
function interrupted(): AbortSignal {
  const controller = new AbortController();
  const stop = () => controller.abort();
  Deno.addSignalListener("SIGINT", stop);
  if (Deno.build.os !== "windows") Deno.addSignalListener("SIGTERM", stop);
  return controller.signal;
}

/**
 * The demo shop (lib/app/demo_db.ts) for a home without connections.json, or
 * null. Its code is loaded only then: a server with saved connections never
 * holds it (docs/performance.md "Memory").
 */
async function demoWithoutConnections(home: string) {
  try {
    await Deno.lstat(inAppDir(home, CONNECTIONS_FILE));
    return null;
  } catch (error) {
    if (!(error instanceof Deno.errors.NotFound)) throw error;
  }
  const { ensureDemo } = await import("./lib/app/demo_db.ts");
  return await ensureDemo(home);
}

async function serve(): Promise<number> {
  const home = appDataDir();
  let started;
  try {
    // A fresh machine has no app directory yet: make it (0700) first.
    await ensureAppDataDir(home);
    // With no connections file at all, serve the embedded demo shop.
    const demo = await demoWithoutConnections(home);
    started = {
      demo,
      server: await startServer({ home, keepAddress: true }),
    };
  } catch (error) {
    const port = await loadSettings(inAppDir(home, SETTINGS_FILE))
      .then((loaded) => loaded.ok ? loaded.settings.port : undefined)
      .catch(() => undefined);
    console.error(
      `${SERVICE_NAME}: cannot start: ${
        explainStartup(error, { home, ...(port === undefined ? {} : { port }) })
      }`,
    );
    return 1;
  }
  const { demo, server } = started;
  const base = server.url.slice(0, -"/mcp".length);
  console.log(`${SERVICE_NAME} ${SERVICE_VERSION} is listening on ${base}`);
  console.log(`  MCP endpoint:   ${server.url}`);
  console.log(`  Handshake file: ${server.handshakePath}`);
  console.log(`  Settings:       ${inAppDir(home, SETTINGS_FILE)}`);
  console.log(
    `  Connections:    ${
      inAppDir(home, CONNECTIONS_FILE)
    } (${server.connections.all().length} saved)`,
  );
  if (server.console !== null) {
    console.log(
      `  Console:        ${server.console.url} (open it: ${cliCommand()} console)`,
    );
  }
  console.log(
    `  Approvals:      ${
      describeDialog(
        server.state.settings.hostDialog,
        undefined,
        server.console?.url ?? null,
      )
    }`,
  );
  if (demo !== null) {
    console.log(
      `  Created the demo connection "${demo.name}" (SQLite: ${demo.url}).`,
    );
  }
  console.log("");
  const active = (await server.tokens.list()).filter((token) =>
    tokenStatus(token, Date.now()) === "active"
  );
  if (server.state.settings.requireAuth && active.length === 0) {
    console.log(
      `No access token yet. Create one for each HTTP client:\n  ${cliCommand()} tokens create --name NAME --level readOnly`,
    );
  }
  console.log(
    'Next: point an MCP client at the endpoint with "Authorization: Bearer <token>" (see README.md, "Connect a client", and docs/clients.md).',
  );
  console.log("Press Ctrl+C to stop.");
  warnAboutLogins(server);
  // The bench's event-loop delay probe (loop_delay.ts); off unless asked for.
  const delayFile = Deno.env.get("DBPORT_LOOP_DELAY_FILE");
  const stopSampling = delayFile ? sampleLoopDelay(delayFile) : () => {};
  const stopped = new Promise<void>((resolve) => {
    const stop = () => {
      console.log(`\n${SERVICE_NAME}: stopping\u2026`);
      stopSampling();
      server.stop().then(resolve);
    };
    Deno.addSignalListener("SIGINT", stop);
    if (Deno.build.os !== "windows") Deno.addSignalListener("SIGTERM", stop);
  });
  await stopped;
  return 0;
}

/**
 * Say on the terminal which saved logins can do more than read (a superuser,
 * server files, programs, other sessions), with the command that makes a
 * least-privilege login for AI reads. Said when the pool learns it, after the
 * connection's first use: connecting to every saved database at start would
 * load every engine's driver into an idle server (docs/performance.md
 * "Memory"), and a database that does not answer is simply not mentioned.
 */
function warnAboutLogins(server: Awaited<ReturnType<typeof startServer>>) {
  server.pool.onRisks((id, risks) => {
    const connection = server.connections.byId(id);
    if (connection === undefined || risks.length === 0) return;
    console.log(
      `Warning: the login of "${connection.name}" ${
        risks.join(", ")
      }; only dbport's checks keep AI reads read-only. Make a least-privilege login for them:\n  ${cliCommand()} connections harden "${connection.name}" --apply`,
    );
  });
}

async function settings(args: string[]): Promise<number> {
  const home = appDataDir();
  const path = inAppDir(home, SETTINGS_FILE);
  if (args.length > 0) return await setSettings(home, path, args);
  const loaded = await loadSettings(path);
  if (!loaded.ok) {
    console.error(loaded.message);
    return 1;
  }
  console.log(`# ${path}`);
  console.log(JSON.stringify(loaded.settings, null, 2));
  return 0;
}

/** `settings set KEY VALUE`: checked as the file is, then saved. */
async function setSettings(
  home: string,
  path: string,
  args: string[],
): Promise<number> {
  const [verb, key, value, ...extra] = args;
  if (
    verb !== "set" || key === undefined || value === undefined ||
    extra.length > 0
  ) {
    throw new UsageError(
      `settings: usage: settings [set KEY VALUE]; got "${args.join(" ")}"`,
    );
  }
  const { setSetting, settingValue } = await import("./lib/app/settings.ts");
  await ensureAppDataDir(home);
  const saved = await setSetting(path, key, settingValue(value));
  if (!saved.ok) {
    console.error(`settings set: ${saved.message}`);
    return 1;
  }
  const setting = saved.settings[key as keyof typeof saved.settings];
  console.log(`Saved "${key}": ${JSON.stringify(setting)} in ${path}`);
  if (["port", "console", "consolePort"].includes(key)) {
    console.log("A running server takes it at its next start.");
  }
  return 0;
}

/** A command with subcommands: its usage and what runs it. */
interface WithUsage {
  usage: string;
  run(args: string[]): Promise<number>;
}

/**
 * A command with subcommands: with no arguments its usage and exit status 2,
 * with --help its usage and 0, else `run`. Its module is loaded when the
 * command runs: a `serve` process never holds the CLI's code (docs/performance.md
 * "Memory").
 */
function withUsage(
  load: () => Promise<WithUsage>,
): (args: string[]) => Promise<number> {
  return async (args) => {
    const { usage, run } = await load();
    if (args.length === 0 || args.includes("--help")) {
      console.log(usage);
      return args.length === 0 ? 2 : 0;
    }
    return await run(args);
  };
}

const COMMANDS: Record<string, (args: string[]) => Promise<number>> = {
  serve,
  settings,
  tokens: withUsage(async () => {
    const { TOKENS_USAGE, tokensCommand } = await import(
      "./lib/cli/tokens.ts"
    );
    return {
      usage: TOKENS_USAGE,
      run: (args) => withStateDb((db) => tokensCommand(db, args, consoleIO)),
    };
  }),
  connections: withUsage(async () => {
    const { CONNECTIONS_USAGE, connectionsCommand } = await import(
      "./lib/cli/connections.ts"
    );
    return {
      usage: CONNECTIONS_USAGE,
      run: (args) =>
        connectionsCommand(
          inAppDir(appDataDir(), CONNECTIONS_FILE),
          args,
          consoleIO,
        ),
    };
  }),
  queries: withUsage(async () => {
    const { QUERIES_USAGE, queriesCommand } = await import(
      "./lib/cli/queries.ts"
    );
    const { QUERIES_FILE } = await import("./lib/app/queries.ts");
    return {
      usage: QUERIES_USAGE,
      run: (args) =>
        queriesCommand(
          {
            connections: inAppDir(appDataDir(), CONNECTIONS_FILE),
            queries: inAppDir(appDataDir(), QUERIES_FILE),
          },
          args,
          consoleIO,
        ),
    };
  }),
  clients: async (args) => {
    const { clientsCommand } = await import("./lib/cli/activity.ts");
    return await withStateDb((db) => clientsCommand(db, args, consoleIO));
  },
  activity: async (args) => {
    const { activityCommand } = await import("./lib/cli/activity.ts");
    const connections = await savedConnections();
    return await withStateDb((db) =>
      activityCommand(db, args, consoleIO, {
        ...(args.includes("--follow") ? { stop: interrupted() } : {}),
        connectionName: (id) => connections.find((c) => c.id === id)?.name,
      })
    );
  },
  history: async (args) => {
    const { HISTORY_USAGE, historyCommand } = await import(
      "./lib/cli/history.ts"
    );
    if (args.includes("--help")) {
      console.log(HISTORY_USAGE);
      return 0;
    }
    const connections = await savedConnections();
    return await withStateDb((db) =>
      historyCommand(db, connections, args, consoleIO)
    );
  },
  console: async (args) => {
    const { consoleCommand } = await import("./lib/cli/console.ts");
    const { openBrowser } = await import("./lib/app/open_browser.ts");
    const { hostEnv } = await import("./lib/app/host_dialog.ts");
    return await consoleCommand(
      inAppDir(appDataDir(), HANDSHAKE_FILE),
      args,
      consoleIO,
      (url) => openBrowser(url, hostEnv()),
    );
  },
  "open-url": async (args) =>
    (await import("./lib/cli/integration.ts")).openUrl(args, consoleIO),
  "register-url-handler": async () =>
    (await import("./lib/cli/integration.ts")).registerUrlHandler(consoleIO),
  "install-bridge": async () =>
    (await import("./lib/cli/integration.ts")).installBridge(consoleIO),
  "client-config": withUsage(async () => {
    const { CLIENT_CONFIG_USAGE, clientConfigCommand } = await import(
      "./lib/cli/client_config.ts"
    );
    return {
      usage: CLIENT_CONFIG_USAGE,
      run: (args) => {
        const home = appDataDir();
        return clientConfigCommand(
          home,
          () => openStateDb(home),
          args,
          consoleIO,
        );
      },
    };
  }),
  help: () => {
    console.log(USAGE);
    return Promise.resolve(0);
  },
};

if (import.meta.main) {
  const [first = "help", ...rest] = Deno.args;
  // A newcomer's first try is `dbport --help`: it is the help, not an error.
  const name = first === "--help" || first === "-h" ? "help" : first;
  const command = COMMANDS[name];
  if (
    command === undefined ||
    (![
      "tokens",
      "connections",
      "queries",
      "client-config",
      "history",
    ].includes(name) &&
      rest.includes("--help"))
  ) {
    if (command === undefined) console.error(`Unknown command "${name}"\n`);
    console.log(USAGE);
    Deno.exit(command === undefined ? 2 : 0);
  }
  try {
    Deno.exit(await command(rest));
  } catch (error) {
    if (error instanceof UsageError) {
      console.error(error.message);
      Deno.exit(2);
    }
    console.error(
      `${SERVICE_NAME}: ${messageOf(error)}`,
    );
    Deno.exit(1);
  }
}
