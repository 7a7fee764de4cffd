/**
 * Opening the driver of a saved connection: the engine's driver for its URL,
 * its password read from where it is kept, its SSH tunnel, its AI login, and
 * its messages redacted for whoever reads them. Nothing connects yet; the
 * pool (pool.ts) keeps the open ones.
 *
 * @module
 */

import { ENGINES } from "./engines.ts";
import { ownerOnly, visibleOf, withVisible } from "./redact.ts";
import { lazyDriver } from "./lazy_driver.ts";
import { splitDriver, withLogin } from "./split_driver.ts";
import {
  describeTarget,
  hostList,
  queryStringPaths,
  queryStringSecrets,
  sqlitePath,
  urlPasswords,
  urlProblem,
} from "./target.ts";
import { DbError } from "./errors.ts";
import type { Driver, Engine } from "./types.ts";
import { readSecret, type SecretSource } from "./secret_source.ts";
import type { Duplex } from "node:stream";
import { deferredStream } from "./ssh/deferred_stream.ts";
import type { SshEnv } from "./ssh/hops.ts";
import { parseJump, type SshSetting } from "./ssh/setting.ts";
import type { SshTunnel } from "./ssh/tunnel.ts";

/** What a driver needs to know about a saved connection. */
export interface DriverSpec {
  id: string;
  engine: Engine;
  url: string;
  password?: string;
  /** The password from an environment variable or a command (secret_source.ts). */
  passwordSource?: SecretSource;
  /** A least-privilege login for every read (`connections harden`). */
  aiLogin?: AiLogin;
  /** Reach the database through SSH (ssh/tunnel.ts). */
  ssh?: SshSetting;
  /** The connection's name, for the commands a message suggests. */
  name?: string;
  /** Columns AI reads may not read (SQLite's authorizer enforces them). */
  privateColumns?: readonly string[];
}

/** Where SSH looks for the user's config and known hosts. */
export interface SshContext {
  env: SshEnv;
  /** Known-hosts files: the user's and dbport's own. */
  knownHostsFiles: readonly string[];
}

/** The SSH context of this process: `$HOME/.ssh`. */
export function defaultSshContext(
  extraKnownHosts: string[] = [],
  sshDir?: string,
): SshContext {
  const home = Deno.env.get("HOME") ?? Deno.env.get("USERPROFILE") ?? ".";
  // DBPORT_SSH_DIR stands for ~/.ssh (tests, or a config kept elsewhere).
  const dir = sshDir ?? Deno.env.get("DBPORT_SSH_DIR") ?? `${home}/.ssh`;
  return {
    env: {
      dir,
      defaultUser: Deno.env.get("USER") ?? Deno.env.get("USERNAME") ?? "root",
    },
    knownHostsFiles: [`${dir}/known_hosts`, ...extraKnownHosts],
  };
}

/** A login for AI reads only. */
export interface AiLogin {
  user: string;
  password: string;
}

/**
 * Open the driver of a connection. Its messages are redacted for `clients`
 * (the default: host, port, database, user and password never leave the
 * process); for the `owner` at the local CLI only the password is, so they
 * can tell what is wrong (docs/security.md "Redaction").
 */
export function openDriver(
  spec: DriverSpec,
  audience: "clients" | "owner" = "clients",
  ssh: SshContext = defaultSshContext(),
  ownFiles?: readonly string[],
): Driver {
  // A saved URL that cannot be used (a hand-edited file: the server kept
  // the connection, app/connections.ts `keepUnusable`): each call fails
  // naming what is wrong, never quoting the URL.
  const problem = urlProblem(spec.engine, spec.url);
  if (problem !== null) {
    return lazyDriver(
      spec.engine,
      () =>
        Promise.reject(
          new DbError(
            "connect",
            `the connection's saved URL ${problem}: fix its url in connections.json`,
          ),
        ),
    );
  }
  if (spec.aiLogin !== undefined && ENGINES[spec.engine].logins) {
    const { aiLogin, passwordSource: _source, ...owner } = spec;
    const reader = openDriver(
      {
        ...owner,
        url: withLogin(spec.url, aiLogin),
        password: aiLogin.password,
      },
      audience,
      ssh,
      ownFiles,
    );
    return splitDriver(
      reader,
      openDriver(
        {
          ...owner,
          ...(spec.passwordSource === undefined
            ? {}
            : { passwordSource: spec.passwordSource }),
        },
        audience,
        ssh,
        ownFiles,
      ),
    );
  }
  const target = describeTarget(spec.engine, spec.url, spec.password);
  const secrets = audience === "owner"
    ? ownerOnly(ownerSecrets(spec))
    : withVisible(
      [
        ...target?.secrets ??
          [
            spec.url,
            ...queryStringSecrets(spec.url),
            ...queryStringPaths(spec.url),
          ],
        ...sshNames(spec.ssh),
      ],
      target?.visible ?? [],
    );
  return OPENERS[spec.engine](spec, secrets, {
    audience,
    ssh,
    ...(ownFiles === undefined ? {} : { ownFiles }),
  });
}

/** The SSH hosts and users a client must not see (docs/security.md "Redaction"). */
function sshNames(ssh: SshSetting | undefined): string[] {
  if (ssh === undefined) return [];
  return [
    ssh.host,
    ssh.user,
    ssh.configHost,
    ...(parseJump(ssh.jump ?? "") ?? []).flatMap((hop) => [hop.host, hop.user]),
  ]
    .filter((name): name is string => name !== undefined && name !== "");
}

/** What an opener needs beside the spec. */
interface OpenContext {
  audience: "clients" | "owner";
  ssh: SshContext;
  /** The app's own state files: never a SQLite connection's file. */
  ownFiles?: readonly string[];
}

/**
 * The secrets a driver needs at its first call: the password from its
 * source, and the SSH tunnel with its hops resolved. Both are added to the
 * redacted values (for clients, the SSH hosts and users of the hops too).
 */
async function prepare(
  spec: DriverSpec,
  secrets: readonly string[],
  context: OpenContext,
): Promise<{ password?: string; tunnel: SshTunnel | null; secrets: string[] }> {
  // The owner's list keeps its mark: only passwords are masked for them.
  const all = context.audience === "owner"
    ? ownerOnly([...secrets]) as string[]
    : withVisible([...secrets], visibleOf(secrets));
  let password = spec.password;
  const what = `the password of ${
    JSON.stringify(spec.name ?? "the connection")
  }`;
  if (spec.passwordSource !== undefined) {
    password = await readSecret(spec.passwordSource, what, context.audience);
    all.push(password);
  }
  if (spec.ssh === undefined) {
    return {
      ...(password === undefined ? {} : { password }),
      tunnel: null,
      secrets: all,
    };
  }
  // The SSH code (ssh2, ssh-config) is loaded by the first tunnel only.
  const [{ sshHops }, { SshTunnel }, { readKnownHosts, trustCommand }] =
    await Promise.all([
      import("./ssh/hops.ts"),
      import("./ssh/tunnel.ts"),
      import("./ssh/known_hosts.ts"),
    ]);
  const { hops, secret: sshSecret } = await sshHops(
    spec.ssh,
    context.ssh.env,
    spec.name ?? "the connection",
    context.audience,
  );
  for (const secret of [sshSecret, spec.ssh.passphrase, spec.ssh.password]) {
    if (secret !== undefined) all.push(secret);
  }
  if (context.audience === "clients") {
    for (const hop of hops) all.push(hop.host, hop.user);
  }
  const files = context.ssh.knownHostsFiles;
  const tunnel = new SshTunnel({
    hops,
    secrets: all,
    trustCommand: trustCommand(spec.name ?? spec.id),
    knownHosts: () => readKnownHosts(files),
  });
  return {
    ...(password === undefined ? {} : { password }),
    tunnel,
    secrets: all,
  };
}

/** Where the database is, as the last SSH hop reaches it. */
function databaseAddress(spec: DriverSpec): { host: string; port: number } {
  const target = describeTarget(spec.engine, spec.url);
  return {
    host: target?.host?.replace(/^\[|\]$/g, "") ?? "127.0.0.1",
    port: target?.port ?? ENGINES[spec.engine].defaultPort ?? 0,
  };
}

/**
 * A database server's driver, opened at its first call with its password
 * read and its tunnel made; `forward` opens a channel to the database
 * through the tunnel (null without SSH).
 */
function serverDriver(
  spec: DriverSpec,
  secrets: readonly string[],
  context: OpenContext,
  open: (
    base: { url: string; secrets: string[]; password?: string },
    forward: (() => Promise<Duplex>) | null,
  ) => Promise<Driver>,
): Driver {
  return lazyDriver(spec.engine, async () => {
    // A tunnel forwards to one address; a URL of several hosts was
    // forwarded to the list's text, failing as an unknown host.
    const listed = spec.ssh === undefined
      ? null
      : hostList(spec.url, ENGINES[spec.engine].defaultPort ?? 0);
    if (listed !== null) {
      throw new DbError(
        "connect",
        `an SSH tunnel reaches one database host, and the connection's URL names ${listed.hosts.length}: keep one host in the URL, or reach the hosts without the tunnel`,
      );
    }
    const { password, tunnel, secrets: all } = await prepare(
      spec,
      secrets,
      context,
    );
    const { host, port } = databaseAddress(spec);
    const driver = await open(
      {
        url: spec.url,
        secrets: all,
        ...(password === undefined ? {} : { password }),
      },
      tunnel === null ? null : () => tunnel.forward(host, port),
    );
    return withTunnel(driver, tunnel);
  });
}

/** Close the tunnel with the driver. */
function withTunnel(driver: Driver, tunnel: SshTunnel | null): Driver {
  if (tunnel === null) return driver;
  return {
    ...driver,
    close: async () => {
      await driver.close().catch(() => {});
      await tunnel.close();
    },
  };
}

/**
 * How each engine's driver is opened (nothing connects yet, and its module is
 * imported only at its first call: lazy_driver.ts). The engine's other facts
 * are in `engines.ts`, which loads no driver.
 */
const OPENERS: {
  readonly [E in Engine]: (
    spec: DriverSpec,
    secrets: readonly string[],
    context: OpenContext,
  ) => Driver;
} = {
  postgres: (spec, secrets, context) =>
    serverDriver(
      spec,
      secrets,
      context,
      async (base, forward) =>
        (await import("./postgres/postgres.ts")).openPostgres({
          ...base,
          ...(forward === null ? {} : { socket: forward }),
        }),
    ),
  mysql: (spec, secrets, context) =>
    serverDriver(
      spec,
      secrets,
      context,
      async (base, forward) =>
        (await import("./mysql/mysql.ts")).openMysql({
          ...base,
          // mysql2 takes its stream from a synchronous function.
          ...(forward === null
            ? {}
            : { stream: () => deferredStream(forward) }),
        }),
    ),
  sqlite: (spec, secrets, context) => {
    const path = sqlitePath(spec.url);
    if (path !== null) {
      return lazyDriver(
        "sqlite",
        async () =>
          (await import("./sqlite/sqlite.ts")).openSqlite({
            path,
            secrets,
            ...(spec.privateColumns === undefined
              ? {}
              : { privateColumns: spec.privateColumns }),
            ...(context.ownFiles === undefined
              ? {}
              : { ownFiles: context.ownFiles }),
          }),
      );
    }
    const token = new URL(spec.url).searchParams.get("authToken") ??
      spec.password;
    const url = spec.url.replace(/[?&]authToken=[^&]*/, "");
    return lazyDriver(
      "sqlite",
      async () =>
        (await import("./sqlite/libsql_remote.ts")).openLibsqlRemote({
          url,
          secrets,
          ...(token === undefined ? {} : { authToken: token }),
        }),
    );
  },
};

/** What even the owner's own terminal never shows: passwords and tokens. */
export function ownerSecrets(spec: DriverSpec): string[] {
  const secrets = spec.password === undefined ? [] : [spec.password];
  // Read apart from a WHATWG URL: several hosts with their ports are none.
  secrets.push(...urlPasswords(spec.url));
  // authToken, sslpassword: read from the query string even where the URL
  // does not parse (several hosts).
  secrets.push(...queryStringSecrets(spec.url));
  return secrets.filter((secret) => secret !== "");
}
