/**
 * The saved connections a running server serves: replaced whole when
 * `connections.json` changes, kept as they were when the new text is
 * malformed (the problem is logged, naming the field).
 *
 * @module
 */

import type { Logger } from "../base/log.ts";
import { parseConnections, type SavedConnection } from "./connections.ts";

/** The current saved connections, with change listeners. */
export class ConnectionStore {
  #connections: readonly SavedConnection[];
  readonly #listeners = new Set<(all: readonly SavedConnection[]) => void>();

  /** The unusable connections' problems last said: each is said once. */
  #told: ReadonlySet<string>;

  /** `told`: the problems of `initial` already logged. */
  constructor(
    initial: readonly SavedConnection[] = [],
    told: readonly string[] = [],
  ) {
    this.#connections = initial;
    this.#told = new Set(told);
  }

  /** Every saved connection, in file order. */
  all(): readonly SavedConnection[] {
    return this.#connections;
  }

  /** One connection by id (case-insensitive UUID). */
  byId(id: string): SavedConnection | undefined {
    const wanted = id.toLowerCase();
    return this.#connections.find((connection) => connection.id === wanted);
  }

  /** Apply new file text (null: the file is gone, so nothing is saved). */
  apply(text: string | null, source: string, log: Logger): boolean {
    const parsed = parseConnections(text ?? "", source, {
      keepUnusable: true,
    });
    if (!parsed.ok) {
      log(`dbport: ${parsed.message}; keeping the connections in force`);
      return false;
    }
    // Said when it appears, not again at every change of the file.
    const unusable = parsed.unusable ?? [];
    logUnusable(
      unusable.filter((problem) => !this.#told.has(problem)),
      source,
      log,
    );
    this.#told = new Set(unusable);
    this.#connections = parsed.connections;
    for (const listener of this.#listeners) listener(this.#connections);
    return true;
  }

  /** Be told of every change; returns the unsubscribe function. */
  onChange(listener: (all: readonly SavedConnection[]) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }
}

/**
 * Say which saved connections cannot be used (their URL): each fails when
 * used, saying why; the others serve.
 */
export function logUnusable(
  unusable: readonly string[] | undefined,
  source: string,
  log: Logger,
): void {
  for (const problem of unusable ?? []) {
    log(
      `dbport: ${source}: ${problem}; that connection fails when used, the others serve`,
    );
  }
}
