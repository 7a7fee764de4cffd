/**
 * The open drivers, one per saved connection: opened on first use, reopened
 * when the connection's URL or password changes, closed when the connection
 * is removed or the server stops. Each engine pools its own sessions and
 * closes idle ones; the pool also remembers whether the database answered.
 *
 * @module
 */

import { ENGINES } from "./engines.ts";
import { ownerOnly } from "./redact.ts";
import { DbError } from "./errors.ts";
import { lazyDriver } from "./lazy_driver.ts";
import { splitDriver, withLogin } from "./split_driver.ts";
import { describeTarget, sqlitePath } from "./target.ts";
import type { Driver, Engine } from "./types.ts";

/** What a driver needs to know about a saved connection. */
export interface DriverSpec {
  id: string;
  engine: Engine;
  url: string;
  password?: string;
  /** A least-privilege login for every read (`connections harden`). */
  aiLogin?: AiLogin;
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
): Driver {
  if (spec.aiLogin !== undefined && ENGINES[spec.engine].logins) {
    const { aiLogin, ...owner } = spec;
    const reader = openDriver({
      id: spec.id,
      engine: spec.engine,
      url: withLogin(spec.url, aiLogin),
      password: aiLogin.password,
    }, audience);
    return splitDriver(reader, openDriver(owner, audience));
  }
  const target = describeTarget(spec.engine, spec.url, spec.password);
  const secrets = audience === "owner"
    ? ownerOnly(ownerSecrets(spec))
    : target?.secrets ?? [spec.url];
  return OPENERS[spec.engine](spec, secrets);
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
  ) => Driver;
} = {
  postgres: ({ url, password }, secrets) =>
    lazyDriver(
      "postgres",
      async () =>
        (await import("./postgres.ts")).openPostgres({
          url,
          secrets,
          ...(password === undefined ? {} : { password }),
        }),
    ),
  mysql: ({ url, password }, secrets) =>
    lazyDriver("mysql", async () =>
      (await import("./mysql.ts")).openMysql({
        url,
        secrets,
        ...(password === undefined ? {} : { password }),
      })),
  sqlite: (spec, secrets) => {
    const path = sqlitePath(spec.url);
    if (path !== null) {
      return lazyDriver(
        "sqlite",
        async () => (await import("./sqlite.ts")).openSqlite({ path, secrets }),
      );
    }
    const token = new URL(spec.url).searchParams.get("authToken") ??
      spec.password;
    const url = spec.url.replace(/[?&]authToken=[^&]*/, "");
    return lazyDriver(
      "sqlite",
      async () =>
        (await import("./libsql_remote.ts")).openLibsqlRemote({
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

/** The open drivers of the saved connections. */
export class DriverPool {
  readonly #entries = new Map<string, Entry>();
  readonly #open: (spec: DriverSpec) => Driver;
  readonly #now: () => number;
  readonly #riskListeners: ((id: string, risks: string[]) => void)[] = [];

  constructor(
    options: { open?: (spec: DriverSpec) => Driver; now?: () => number } = {},
  ) {
    this.#open = options.open ?? openDriver;
    this.#now = options.now ?? Date.now;
  }

  /** The driver for a connection, opening (or reopening) it as needed. */
  get(spec: DriverSpec): Driver {
    const key = JSON.stringify([
      spec.engine,
      spec.url,
      spec.password ?? null,
      spec.aiLogin ?? null,
    ]);
    const entry = this.#entries.get(spec.id);
    if (entry !== undefined && entry.key === key) return entry.driver;
    if (entry !== undefined) entry.driver.close().catch(() => {});
    const fresh: Entry = {
      id: spec.id,
      key,
      driver: this.#open(spec),
      answeredAt: null,
      risks: null,
      checkingRisks: false,
    };
    fresh.driver = this.#observed(fresh);
    this.#entries.set(spec.id, fresh);
    return fresh.driver;
  }

  /** Whether the connection's database answered recently. */
  isConnected(id: string): boolean {
    const answeredAt = this.#entries.get(id)?.answeredAt ?? null;
    return answeredAt !== null && this.#now() - answeredAt < CONNECTED_FOR_MS;
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
    const gone = [...this.#entries].filter(([id]) => !ids.has(id));
    for (const [id] of gone) this.#entries.delete(id);
    await Promise.allSettled(gone.map(([, entry]) => entry.driver.close()));
  }

  /** Close every driver. */
  async closeAll(): Promise<void> {
    await this.retain(new Set());
  }

  /** Wrap a driver so each call's outcome updates `answeredAt`. */
  #observed(entry: Entry): Driver {
    const inner = entry.driver;
    const track = <T>(promise: Promise<T>): Promise<T> =>
      promise.then(
        (value) => {
          entry.answeredAt = this.#now();
          this.#learnRisks(entry);
          return value;
        },
        (error: unknown) => {
          if (
            error instanceof DbError &&
            (error.kind === "connect" || error.kind === "connect_timeout")
          ) entry.answeredAt = null;
          else entry.answeredAt = this.#now();
          throw error;
        },
      );
    return {
      engine: inner.engine,
      version: (options) => track(inner.version(options)),
      listSchemas: (options) => track(inner.listSchemas(options)),
      listTables: (options) => track(inner.listTables(options)),
      searchSchema: (options) => track(inner.searchSchema(options)),
      describeTable: (table, options) =>
        track(inner.describeTable(table, options)),
      overview: (options) => track(inner.overview(options)),
      fingerprint: (options) => track(inner.fingerprint(options)),
      check: (text, tier, options) => track(inner.check(text, tier, options)),
      loginRisks: (options) => inner.loginRisks(options),
      query: (text, options) => track(inner.query(text, options)),
      close: () => inner.close(),
    };
  }
}
