/**
 * The open drivers, one per saved connection: opened on first use, reopened
 * when the connection's URL or password changes, closed when the connection
 * is removed or the server stops. Each engine pools its own sessions and
 * closes idle ones; the pool also remembers whether the database answered.
 *
 * @module
 */

import { ENGINES } from "./engines.ts";
import { ownerOnly, visibleOf, withVisible } from "./redact.ts";
import { DbError } from "./errors.ts";
import { lazyDriver } from "./lazy_driver.ts";
import { splitDriver, withLogin } from "./split_driver.ts";
import { describeTarget, sqlitePath } from "./target.ts";
import type { CallOptions, Driver, Engine } from "./types.ts";
import { NO_OWNER, SessionShare } from "./session_share.ts";
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

/** A database that answered within this long counts as connected. */
const CONNECTED_FOR_MS = 5 * 60_000;

interface Entry {
  id: string;
  key: string;
  driver: Driver;
  /** When the database last answered; null when it last failed to. */
  answeredAt: number | null;
  /** What the reading login may do beyond reading; null until known. */
  risks: string[] | null;
  checkingRisks: boolean;
  /** The gate of its sessions, shared among owners (lib/db/session_share.ts). */
  share: SessionShare;
  /** The driver as each owner sees it (calls tracked and gated). */
  views: Map<string, Driver>;
  /** Its calls not yet settled. */
  calls: number;
  /** What it was opened for: a lost driver's successor is opened so. */
  spec: DriverSpec;
  /** Set once it lost its database: its views' calls go to its successor. */
  lost: boolean;
}

/** Open a driver for a spec (nothing connects yet). */
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
      [...target?.secrets ?? [spec.url], ...sshNames(spec.ssh)],
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
function ownerSecrets(spec: DriverSpec): string[] {
  const secrets = spec.password === undefined ? [] : [spec.password];
  try {
    const url = new URL(spec.url);
    secrets.push(decodeURIComponent(url.password));
    secrets.push(url.searchParams.get("authToken") ?? "");
  } catch { /* a file path has none */ }
  return secrets.filter((secret) => secret !== "");
}

/** A connection's last failure to reach its database. */
export interface ConnectionFailure {
  /** The driver's message, redacted as for clients. */
  message: string;
  /** When it failed (ms since the epoch). */
  at: number;
}

/** The open drivers of the saved connections. */
export class DriverPool {
  readonly #entries = new Map<string, Entry>();
  /** Each connection's last failure to connect, until it answers again. */
  readonly #failures = new Map<string, ConnectionFailure>();
  /** When a try made outside the pool (a test) last reached the database. */
  readonly #testedAt = new Map<string, number>();
  readonly #open: (spec: DriverSpec) => Driver;
  readonly #now: () => number;
  readonly #riskListeners: ((id: string, risks: string[]) => void)[] = [];
  /** Drivers being closed after they were replaced (awaited by closeAll). */
  readonly #closing = new Set<Promise<void>>();
  /** Drivers that lost their database, closed once their calls settle. */
  readonly #retiring = new Set<Entry>();

  constructor(
    options: {
      open?: (spec: DriverSpec) => Driver;
      now?: () => number;
      ssh?: SshContext;
      /** The app's own state files: never a SQLite connection's file. */
      ownFiles?: readonly string[];
    } = {},
  ) {
    const ssh = options.ssh ?? defaultSshContext();
    this.#open = options.open ??
      ((spec) => openDriver(spec, "clients", ssh, options.ownFiles));
    this.#now = options.now ?? Date.now;
  }

  /**
   * The driver for a connection, opening (or reopening) it as needed. Its
   * calls share the connection's sessions with other `owner`s' (an opaque
   * key: one owner never holds every session while another's call waits).
   */
  get(spec: DriverSpec, owner: string = NO_OWNER): Driver {
    const key = JSON.stringify([
      spec.engine,
      spec.url,
      spec.password ?? null,
      spec.aiLogin ?? null,
      spec.passwordSource ?? null,
      spec.ssh ?? null,
      spec.privateColumns ?? null,
    ]);
    const entry = this.#entries.get(spec.id);
    if (entry !== undefined && entry.key === key) {
      return this.#view(entry, owner);
    }
    if (entry !== undefined) this.#retire(entry.driver);
    const fresh: Entry = {
      id: spec.id,
      key,
      driver: this.#open(spec),
      answeredAt: null,
      risks: null,
      checkingRisks: false,
      share: new SessionShare(),
      views: new Map(),
      calls: 0,
      spec,
      lost: false,
    };
    this.#entries.set(spec.id, fresh);
    return this.#view(fresh, owner);
  }

  /** The entry's driver as `owner` sees it, made once. */
  #view(entry: Entry, owner: string): Driver {
    let view = entry.views.get(owner);
    if (view === undefined) {
      view = this.#observed(entry, owner);
      entry.views.set(owner, view);
    }
    return view;
  }

  /**
   * Why the connection's database could not be reached at its last try (a
   * call, a test); null once it answered since. A driver of the owner's own
   * (`<id>:owner`, the console) counts for its connection.
   */
  lastFailure(id: string): ConnectionFailure | null {
    return this.#failures.get(id) ?? null;
  }

  /** Record the outcome of a try made outside the pool (`connections test`). */
  noteOutcome(id: string, failure: string | null): void {
    const key = id.replace(/:owner$/, "");
    if (failure === null) {
      this.#failures.delete(key);
      this.#testedAt.set(key, this.#now());
    } else {
      this.#failures.set(key, { message: failure, at: this.#now() });
      this.#testedAt.delete(key);
    }
  }

  /** Whether the connection's database answered recently. */
  isConnected(id: string): boolean {
    if (this.#failures.has(id)) return false;
    const answeredAt = Math.max(
      this.#entries.get(id)?.answeredAt ?? -Infinity,
      this.#entries.get(`${id}:owner`)?.answeredAt ?? -Infinity,
      this.#testedAt.get(id) ?? -Infinity,
    );
    return this.#now() - answeredAt < CONNECTED_FOR_MS;
  }

  /**
   * What the connection's reading login may do beyond reading, once known:
   * it is asked once, after the database first answers (null until then).
   */
  risks(id: string): string[] | null {
    return this.#entries.get(id)?.risks ?? null;
  }

  /**
   * Be told what a connection's reading login may do beyond reading, once it
   * is learnt (after its first answer): `serve` says it on the terminal then,
   * rather than connecting to every saved database at start.
   */
  onRisks(listener: (id: string, risks: string[]) => void): void {
    this.#riskListeners.push(listener);
  }

  /** Ask the login's risks once, in the background. */
  #learnRisks(entry: Entry): void {
    if (entry.risks !== null || entry.checkingRisks) return;
    entry.checkingRisks = true;
    entry.driver.loginRisks({
      signal: AbortSignal.timeout(10_000),
      timeoutMs: 10_000,
    }).then(
      (risks) => {
        entry.risks = risks;
        for (const listener of this.#riskListeners) listener(entry.id, risks);
      },
      () => {},
    ).finally(() => (entry.checkingRisks = false));
  }

  /** Close the drivers of connections that are no longer saved. */
  async retain(ids: ReadonlySet<string>): Promise<void> {
    for (const id of [...this.#failures.keys(), ...this.#testedAt.keys()]) {
      if (!ids.has(id)) {
        this.#failures.delete(id);
        this.#testedAt.delete(id);
      }
    }
    const gone = [...this.#entries].filter(([id]) => !ids.has(id))
      .map(([, entry]) => entry);
    for (const entry of gone) this.#entries.delete(entry.id);
    // A driver that lost its database waits for its last call — unless its
    // connection is gone or the pool closes.
    for (const entry of this.#retiring) {
      if (!ids.has(entry.id)) {
        this.#retiring.delete(entry);
        gone.push(entry);
      }
    }
    await Promise.allSettled(gone.map((entry) => entry.driver.close()));
  }

  /** Close every driver. */
  async closeAll(): Promise<void> {
    await this.retain(new Set());
    await Promise.allSettled([...this.#closing]);
  }

  /** Close a replaced driver in the background; closeAll waits for it. */
  #retire(driver: Driver): void {
    const closing = driver.close().catch(() => {}).finally(() =>
      this.#closing.delete(closing)
    );
    this.#closing.add(closing);
  }

  /**
   * Take a driver that lost its database out of the pool (the next call
   * opens a fresh one), and close it once its last call settled: its other
   * calls — reads of other clients waiting for a session, statements running
   * on healthy sessions — are the driver's to answer (a PostgreSQL driver
   * replaces the pool of a lost session and asks its waiting reads again of
   * the new one); closing it under them failed them `not_connected` though
   * nothing of them had run (tests/db/pool_retire_test.ts).
   */
  #lost(entry: Entry): void {
    if (this.#entries.get(entry.id) !== entry) return;
    entry.lost = true;
    this.#entries.delete(entry.id);
    if (entry.calls === 0) this.#retire(entry.driver);
    else this.#retiring.add(entry);
  }

  /**
   * What a view of a driver that lost its database calls instead: the
   * connection's driver now, opened afresh for the same spec if none is —
   * a tool call holds its driver's view from its check to its statement
   * (and a consent between), and another client's lost session in between
   * failed that statement "the connection was closed" though nothing of it
   * had run (outsider stop48). None once the connection was edited since:
   * the call fails as closed rather than run on what the user changed.
   */
  #successor(entry: Entry, owner: string): Driver | null {
    const now = this.#entries.get(entry.id);
    if (now !== undefined && now.key !== entry.key) return null;
    return this.get(entry.spec, owner);
  }

  /** One of `entry`'s calls settled. */
  #settled(entry: Entry): void {
    entry.calls--;
    if (entry.calls === 0 && this.#retiring.delete(entry)) {
      this.#retire(entry.driver);
    }
  }

  /**
   * Wrap a driver so each call waits for `owner`'s share of the sessions
   * and its outcome updates `answeredAt`.
   */
  #observed(entry: Entry, owner: string): Driver {
    const inner = entry.driver;
    const gated = <T, O extends CallOptions>(
      options: O,
      work: (driver: Driver, options: O) => Promise<T>,
    ): Promise<T> => {
      const successor = entry.lost ? this.#successor(entry, owner) : null;
      if (successor !== null) return work(successor, options);
      entry.calls++;
      return track(
        entry.share.run(owner, options, (o) => work(inner, o)).finally(() =>
          this.#settled(entry)
        ),
      );
    };
    const track = <T>(promise: Promise<T>): Promise<T> =>
      promise.then(
        (value) => {
          entry.answeredAt = this.#now();
          this.noteOutcome(entry.id, null);
          this.#learnRisks(entry);
          return value;
        },
        (error: unknown) => {
          if (
            error instanceof DbError &&
            (error.kind === "connect" || error.kind === "connect_timeout")
          ) {
            // A driver that lost its database starts over at the next call:
            // a secret from a command is read again (a rotated password), a
            // tunnel reconnects, and postgres.js forgets sessions that died
            // (tests/db/session_gone_test.ts).
            entry.answeredAt = null;
            this.noteOutcome(entry.id, error.message);
            this.#lost(entry);
          } else {
            entry.answeredAt = this.#now();
            this.noteOutcome(entry.id, null);
          }
          throw error;
        },
      );
    return {
      engine: inner.engine,
      version: (options) => gated(options, (d, o) => d.version(o)),
      listSchemas: (options) => gated(options, (d, o) => d.listSchemas(o)),
      listTables: (options) => gated(options, (d, o) => d.listTables(o)),
      searchSchema: (options) => gated(options, (d, o) => d.searchSchema(o)),
      describeTable: (table, options) =>
        gated(options, (d, o) => d.describeTable(table, o)),
      overview: (options) => gated(options, (d, o) => d.overview(o)),
      fingerprint: (options) => gated(options, (d, o) => d.fingerprint(o)),
      // A check the engine answers without a session (its parser alone)
      // takes none of the connection's: only one that asks the catalog waits.
      check: (text, tier, options) =>
        inner.checkLocal === undefined
          ? gated(options, (d, o) => d.check(text, tier, o))
          : inner.checkLocal(text, tier).then((local) =>
            local ?? gated(options, (d, o) => d.check(text, tier, o))
          ),
      loginRisks: (options) => inner.loginRisks(options),
      query: (text, options) => gated(options, (d, o) => d.query(text, o)),
      ...(inner.streamRead === undefined ? {} : {
        streamRead: (text, options, onBatch) =>
          gated(options, (d, o) => d.streamRead!(text, o, onBatch)),
      }),
      close: () => inner.close(),
    };
  }
}
