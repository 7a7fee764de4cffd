/**
 * The open drivers, one per saved connection: opened on first use, reopened
 * when the connection's URL or password changes, closed when the connection
 * is removed or the server stops. Each engine pools its own sessions and
 * closes idle ones; the pool also remembers whether the database answered.
 *
 * @module
 */

import { DbError } from "./errors.ts";
import type { CallOptions, Driver } from "./types.ts";
import { NO_OWNER, SessionShare } from "./session_share.ts";
import {
  defaultSshContext,
  type DriverSpec,
  openDriver,
  type SshContext,
} from "./open_driver.ts";

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
  /** The last spec found to have its `key` (see {@linkcode sameKey}). */
  seen: DriverSpec;
}

/**
 * Whether `b` has `a`'s key because each field the key is made of is the
 * same value or object: a connection unchanged since its last call (its
 * saved connection's objects are kept until it changes). False says nothing:
 * the key is then made and compared.
 */
function sameKey(a: DriverSpec, b: DriverSpec): boolean {
  return a.engine === b.engine && a.url === b.url &&
    a.password === b.password && a.aiLogin === b.aiLogin &&
    a.passwordSource === b.passwordSource && a.ssh === b.ssh &&
    a.privateColumns === b.privateColumns;
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
    const entry = this.#entries.get(spec.id);
    if (entry !== undefined && sameKey(entry.seen, spec)) {
      return this.#view(entry, owner);
    }
    const key = JSON.stringify([
      spec.engine,
      spec.url,
      spec.password ?? null,
      spec.aiLogin ?? null,
      spec.passwordSource ?? null,
      spec.ssh ?? null,
      spec.privateColumns ?? null,
    ]);
    if (entry !== undefined && entry.key === key) {
      entry.seen = spec;
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
      seen: spec,
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
    // A driver that lost its database waits for its last call - unless its
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
   * calls - reads of other clients waiting for a session, statements running
   * on healthy sessions - are the driver's to answer (a PostgreSQL driver
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
   * connection's driver now, opened afresh for the same spec if none is -
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
