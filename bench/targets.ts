/**
 * The servers a benchmark run starts, each in its own process on a free
 * loopback port, against the same databases: dbport (`main.ts serve`), MCP
 * Toolbox for Databases (its Go binary from npm), the SDK v2 peer, and a
 * bare Hono app. Each is stopped with the run.
 *
 * @module
 */

import { MYSQL_URL, POSTGRES_URL } from "../tests/_db.ts";
import { freePort } from "../tests/_server.ts";
import type { SavedConnection } from "../lib/app/connections.ts";
import { saveConnections } from "../lib/app/connections.ts";
import { inAppDir } from "../lib/app/paths.ts";
import { openStateDb } from "../lib/app/state_db.ts";
import { type Level, TokenStore } from "../lib/app/tokens.ts";
import { SERVE_PERMISSIONS } from "../lib/cli/integration.ts";
import { CONNECTIONS_FILE } from "../lib/base/identity.ts";
import { saveSettings } from "../lib/serve.ts";
import type { Settings } from "../lib/app/settings.ts";

const ROOT = new URL("../", import.meta.url).pathname;

/**
 * The tree whose `main.ts serve` is measured: this one, or another checkout
 * named by `DBPORT_BENCH_ROOT` (the "before" of a change, measured by the
 * same harness).
 */
const DBPORT_ROOT = (() => {
  const root = Deno.env.get("DBPORT_BENCH_ROOT");
  return root === undefined ? ROOT : root.endsWith("/") ? root : `${root}/`;
})();

/** A started server process. */
export interface Target extends AsyncDisposable {
  readonly name: string;
  readonly url: string;
  readonly pid: number;
  /** Extra headers every request carries (Authorization for dbport). */
  readonly headers: Record<string, string>;
}

/** Wait until something accepts connections on `port`. */
async function waitForPort(port: number, child: Deno.ChildProcess) {
  let exited = false;
  void child.status.then(() => exited = true);
  for (let i = 0; i < 300; i++) {
    if (exited) throw new Error(`the server on port ${port} exited early`);
    try {
      const conn = await Deno.connect({ hostname: "127.0.0.1", port });
      conn.close();
      return;
    } catch {
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }
  throw new Error(`nothing listens on 127.0.0.1:${port} after 15 s`);
}

/**
 * Spawn a server that will listen on `port`, wait until it does, and return
 * it as a target stopped (SIGTERM) on dispose.
 */
async function spawnTarget(
  name: string,
  port: number,
  command: string,
  args: string[],
  options: { env?: Record<string, string>; headers?: Record<string, string> } =
    {},
): Promise<Target> {
  const child = new Deno.Command(command, {
    args,
    ...(options.env === undefined ? {} : { env: options.env }),
    stdin: "null",
    stdout: "null",
    stderr: "null",
  }).spawn();
  await waitForPort(port, child);
  return {
    name,
    url: `http://127.0.0.1:${port}/mcp`,
    pid: child.pid,
    headers: options.headers ?? {},
    async [Symbol.asyncDispose]() {
      try {
        child.kill("SIGTERM");
      } catch { /* already gone */ }
      await child.status;
    },
  };
}

/** The connections dbport serves in a benchmark home. */
export interface BenchHome {
  home: string;
  sqlitePath: string;
  ids: { postgres: string; mysql: string; sqlite: string };
  token: string;
}

/** A dbport home with PostgreSQL, MariaDB and SQLite connections and a readOnly token. */
export async function benchHome(
  dir: string,
  mysqlUrl: string,
  postgresUrl: string = POSTGRES_URL,
): Promise<BenchHome> {
  const home = `${dir}/dbport-home`;
  const sqlitePath = `${dir}/bench.db`;
  const base = {
    externalAccess: "readOnly",
    aiPolicy: "alwaysAllow",
    safeMode: "silent",
  } as const;
  const connections: SavedConnection[] = [
    {
      id: crypto.randomUUID(),
      name: "pg",
      engine: "postgres",
      url: postgresUrl,
      ...base,
    },
    {
      id: crypto.randomUUID(),
      name: "maria",
      engine: "mysql",
      url: mysqlUrl,
      ...base,
    },
    {
      id: crypto.randomUUID(),
      name: "lite",
      engine: "sqlite",
      url: sqlitePath,
      ...base,
    },
  ];
  await saveSettings(home, { queryHistory: true });
  await saveConnections(inAppDir(home, CONNECTIONS_FILE), connections);
  return {
    home,
    sqlitePath,
    ids: {
      postgres: connections[0]!.id,
      mysql: connections[1]!.id,
      sqlite: connections[2]!.id,
    },
    token: await mintToken(home, "readOnly", "bench"),
  };
}

/** A token of `level` in `home`'s state database; its plaintext. */
export async function mintToken(
  home: string,
  level: Level,
  name: string,
): Promise<string> {
  const db = await openStateDb(home);
  try {
    const { plaintext } = await new TokenStore(db).create({
      name,
      level,
      connections: null,
      expiresAt: null,
    });
    return plaintext;
  } finally {
    db.close();
  }
}

/** Where a bench server writes its event-loop delay samples. */
export function loopDelayFile(bench: BenchHome): string {
  return `${bench.home}/loop-delay.json`;
}

/** `deno run main.ts serve` in `home`, as users run it. */
export async function startDbport(
  bench: BenchHome,
  extraFlags: string[] = [],
  settings: Partial<Settings> = {},
  root: string = DBPORT_ROOT,
): Promise<Target> {
  const port = freePort();
  await saveSettings(bench.home, { ...settings, port, queryHistory: true });
  return await spawnTarget(
    "dbport",
    port,
    Deno.execPath(),
    [
      "run",
      ...SERVE_PERMISSIONS,
      ...extraFlags,
      `${root.endsWith("/") ? root : `${root}/`}main.ts`,
      "serve",
    ],
    {
      env: {
        DBPORT_HOME: bench.home,
        NO_COLOR: "1",
        // The server's own event-loop delay probe (lib/server/loop_delay.ts).
        DBPORT_LOOP_DELAY_FILE: loopDelayFile(bench),
      },
      headers: { authorization: `Bearer ${bench.token}` },
    },
  );
}

/** The Toolbox binary shipped in `@toolbox-sdk/server-linux-x64`. */
async function toolboxBinary(): Promise<string> {
  // Deno resolves an npm specifier to the package in its cache.
  const path = new URL(
    "bin/toolbox",
    import.meta.resolve(
      "npm:@toolbox-sdk/server-linux-x64@1.12.0/package.json",
    ),
  ).pathname;
  try {
    await Deno.chmod(path, 0o755);
  } catch (error) {
    throw new Error(
      `MCP Toolbox binary not found at ${path}: run deno install (${error})`,
    );
  }
  return path;
}

/** MCP Toolbox for Databases with postgres, mysql and sqlite execute-sql tools. */
export async function startToolbox(
  dir: string,
  sqlitePath: string,
  mysql: { user: string; password: string },
  urls: { postgres: string; mysql: string } = {
    postgres: POSTGRES_URL,
    mysql: MYSQL_URL,
  },
): Promise<Target> {
  const port = freePort();
  const pg = new URL(urls.postgres);
  const my = new URL(urls.mysql);
  // Toolbox requires a password; PostgreSQL here trusts loopback, MariaDB
  // gets the bench user the harness created.
  const config = `sources:
  pg:
    kind: postgres
    host: ${pg.hostname}
    port: ${pg.port || 5432}
    database: ${pg.pathname.slice(1)}
    user: ${decodeURIComponent(pg.username) || "postgres"}
    password: ${decodeURIComponent(pg.password) || "bench"}
  my:
    kind: mysql
    host: ${my.hostname}
    port: ${my.port || 3306}
    database: ${my.pathname.slice(1)}
    user: ${mysql.user}
    password: ${mysql.password}
  lite:
    kind: sqlite
    database: ${sqlitePath}
tools:
  pg_execute_sql:
    kind: postgres-execute-sql
    source: pg
    description: Execute SQL on PostgreSQL.
  mysql_execute_sql:
    kind: mysql-execute-sql
    source: my
    description: Execute SQL on MariaDB.
  sqlite_execute_sql:
    kind: sqlite-execute-sql
    source: lite
    description: Execute SQL on SQLite.
  pg_list_tables:
    kind: postgres-list-tables
    source: pg
    description: List PostgreSQL tables.
`;
  const file = `${dir}/tools.yaml`;
  await Deno.writeTextFile(file, config);
  return await spawnTarget("Toolbox", port, await toolboxBinary(), [
    "--config",
    file,
    "--port",
    String(port),
    "--address",
    "127.0.0.1",
    "--disable-version-check",
    "--disable-reload",
    "--log-level",
    "ERROR",
  ]);
}

/** A Deno script of `bench/peers/` on a free port. */
async function startPeer(
  name: string,
  script: string,
  args: string[],
): Promise<Target> {
  const port = freePort();
  return await spawnTarget(name, port, Deno.execPath(), [
    "run",
    // The peers' packages (Hono, the MCP SDK server) are dev dependencies.
    `--config=${ROOT}deno.dev.json`,
    "--allow-net=127.0.0.1",
    "--allow-env",
    "--allow-read",
    "--allow-sys",
    `${ROOT}bench/peers/${script}`,
    String(port),
    ...args,
  ]);
}

/** The minimal SDK v2 server with one execute_query tool. */
export function startSdkV2Peer(
  postgresUrl: string = POSTGRES_URL,
): Promise<Target> {
  return startPeer("SDK v2 server", "sdk_v2_server.ts", [postgresUrl]);
}

/** `Deno.serve` answering a fixed body of `bytes` (the HTTP floor without node:http). */
export function startBareDenoServe(bytes: number): Promise<Target> {
  return startPeer("bare Deno.serve", "bare_deno_serve.ts", [String(bytes)]);
}

/** A bare Hono app answering a fixed body of `bytes`. */
export function startBareHono(bytes: number): Promise<Target> {
  return startPeer("bare Hono", "bare_hono.ts", [String(bytes)]);
}
