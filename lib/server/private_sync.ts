/**
 * The server's side of private columns (docs/security.md "Private
 * columns"): the AI login's grants re-synced with each connection's list at
 * start and whenever connections.json changes (a column added since that
 * matches a pattern becomes private), and AI reads on a connection refused
 * while its private columns are not held - a re-sync that failed or could
 * not prove them is never passed over.
 *
 * @module
 */

import type { ConnectionStore } from "../app/connection_store.ts";
import type { SavedConnection } from "../app/connections.ts";
import { ENGINES } from "../db/engines.ts";
import type { PrivateSync } from "../app/private_sync.ts";
import type { Logger } from "../base/log.ts";
import { messageOf } from "../base/message_of.ts";

interface State {
  /** What the grants were last synced for. */
  key: string;
  /** The sync's outcome: why the list is not held (null: it is). */
  done: Promise<string | null>;
  /** When the sync started. */
  at: number;
  /** The schema's fingerprint as last seen after this sync (undefined: not yet). */
  schema?: string;
  /** When the fingerprint was last looked at. */
  lookedAt?: number;
}

/** How often a read looks at the schema's fingerprint, at most. */
const LOOK_MS = 1_000;

/** A re-sync that failed (the database was down, say) is tried again after this. */
const RETRY_MS = 15_000;

/** What makes a re-sync necessary: the list, the login, the place. */
function keyOf(connection: SavedConnection): string {
  return JSON.stringify([
    connection.privateColumns ?? [],
    connection.aiLogin?.user ?? null,
    connection.url,
  ]);
}

/**
 * The re-sync of lib/app/private_sync.ts, its code (the grant planners of
 * each engine) imported at its first use: a server none of whose connections
 * lists private columns never holds it (docs/performance.md "Memory").
 */
async function syncPrivateColumns(
  connection: SavedConnection,
): Promise<PrivateSync> {
  const { syncPrivateColumns } = await import("../app/private_sync.ts");
  return await syncPrivateColumns(connection);
}

/** Re-syncs each connection's grants; says whether its list is held. */
export class PrivateColumnGuard {
  readonly #states = new Map<string, State>();
  readonly #log: Logger;
  readonly #sync: (connection: SavedConnection) => Promise<PrivateSync>;
  readonly #now: () => number;

  constructor(
    store: ConnectionStore,
    log: Logger,
    sync: (connection: SavedConnection) => Promise<PrivateSync> =
      syncPrivateColumns,
    now: () => number = Date.now,
  ) {
    this.#log = log;
    this.#sync = sync;
    this.#now = now;
    this.#update(store.all(), true);
    store.onChange((all) => this.#update(all, false));
  }

  /**
   * Why AI reads on `connection` may not run now (its private columns are
   * not held), or null; waits for a re-sync under way. With `fingerprint`
   * (the schema's, as the AI login sees it) a schema changed since the last
   * sync - a table or column added - is synced again first, so a new column
   * matching a pattern is private before the read runs.
   */
  async problem(
    connection: SavedConnection,
    fingerprint?: () => Promise<string>,
  ): Promise<string | null> {
    if ((connection.privateColumns ?? []).length === 0) return null;
    const state = this.#states.get(connection.id);
    if (state === undefined || state.key !== keyOf(connection)) {
      return "its private columns are being put in place";
    }
    const problem = await state.done;
    if (problem === null) {
      return fingerprint === undefined ||
          ENGINES[connection.engine].privateColumnsHeldBy === "authorizer"
        ? null
        : await this.#followSchema(connection, state, fingerprint);
    }
    if (this.#now() - state.at < RETRY_MS) return problem;
    // Failed a while ago: the database may answer now.
    if (this.#states.get(connection.id) === state) {
      this.#start(connection, state.key);
    }
    const next = this.#states.get(connection.id);
    return next === undefined ? problem : await next.done;
  }

  /**
   * Sync again when the schema changed since the last look (at most once a
   * second). The first look after a sync syncs again too: a table made
   * between the sync's catalog read and that look would be missed.
   */
  async #followSchema(
    connection: SavedConnection,
    state: State,
    fingerprint: () => Promise<string>,
  ): Promise<string | null> {
    const now = this.#now();
    if (state.lookedAt !== undefined && now - state.lookedAt < LOOK_MS) {
      return null;
    }
    state.lookedAt = now;
    // A database that does not answer fails the read itself.
    const seen = await fingerprint().catch(() => null);
    if (seen === null || seen === state.schema) return null;
    if (this.#states.get(connection.id) !== state) return null;
    this.#start(connection, state.key);
    const next = this.#states.get(connection.id)!;
    next.schema = seen;
    next.lookedAt = now;
    return await next.done;
  }

  /** Every re-sync under way, finished (the server waits for them at stop). */
  async settled(): Promise<void> {
    await Promise.allSettled([...this.#states.values()].map((s) => s.done));
  }

  #update(all: readonly SavedConnection[], start: boolean): void {
    const ids = new Set(all.map((c) => c.id));
    for (const id of this.#states.keys()) {
      if (!ids.has(id)) this.#states.delete(id);
    }
    for (const connection of all) {
      const key = keyOf(connection);
      const before = this.#states.get(connection.id);
      if (before?.key === key) continue;
      const listed = (connection.privateColumns ?? []).length > 0;
      // At start only connections with a list; later, a list emptied too
      // (the login reads those columns again).
      if (!listed && (start || before === undefined)) {
        this.#states.set(connection.id, {
          key,
          done: Promise.resolve(null),
          at: this.#now(),
        });
        continue;
      }
      this.#start(connection, key);
    }
  }

  /** Re-sync `connection`'s grants in the background. */
  #start(connection: SavedConnection, key: string): void {
    const done = this.#sync(connection).then(
      (result) => {
        if (result.problem !== null) {
          this.#log(
            `dbport: the private columns of "${connection.name}" are not held: ${result.problem}; AI reads on it are refused until they are`,
          );
        } else if (result.statements.length > 0) {
          this.#log(
            `dbport: re-synced the AI login's grants of "${connection.name}" (${result.columns.length} private columns, ${result.views.length} views withheld)`,
          );
        }
        return result.problem;
      },
      (error: unknown) => messageOf(error),
    );
    this.#states.set(connection.id, { key, done, at: this.#now() });
  }
}
