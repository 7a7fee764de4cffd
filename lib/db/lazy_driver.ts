/**
 * A driver whose engine module is imported on its first call. Each driver
 * package weighs 15-25 MiB resident once loaded (postgres.js, mysql2, the
 * PostgreSQL parser's WASM), so an idle `serve` loads none until a
 * connection of that engine is used (bench "idle RSS";
 * docs/performance.md "Memory").
 *
 * @module
 */

import { DbError } from "./errors.ts";
import type { Driver, Engine } from "./types.ts";

/** A driver without `streamRead` (a remote libSQL database). */
function cannotStream(driver: Driver): Promise<never> {
  return Promise.reject(
    new DbError(
      "query",
      `this ${driver.engine} connection cannot stream a result to a file`,
    ),
  );
}

/** `load()` runs at the first call; a failed load is tried again at the next. */
export function lazyDriver(
  engine: Engine,
  load: () => Promise<Driver>,
): Driver {
  let loaded: Driver | null = null;
  let loading: Promise<Driver> | null = null;
  // Once loaded, a call goes straight to the driver: no await of its own on
  // every later call of the hot path.
  const on = <T>(call: (driver: Driver) => Promise<T>): Promise<T> => {
    if (loaded !== null) return call(loaded);
    loading ??= load().then(
      (driver) => loaded = driver,
      (error: unknown) => {
        loading = null;
        throw error;
      },
    );
    return loading.then(call);
  };
  return {
    engine,
    version: (options) => on((d) => d.version(options)),
    listSchemas: (options) => on((d) => d.listSchemas(options)),
    listTables: (options) => on((d) => d.listTables(options)),
    searchSchema: (options) => on((d) => d.searchSchema(options)),
    describeTable: (table, options) =>
      on((d) => d.describeTable(table, options)),
    overview: (options) => on((d) => d.overview(options)),
    fingerprint: (options) => on((d) => d.fingerprint(options)),
    check: (text, tier, options) => on((d) => d.check(text, tier, options)),
    // Only a loaded driver answers alone: loading it is the pool's to gate.
    checkLocal: (text, tier) =>
      loaded?.checkLocal?.(text, tier) ?? Promise.resolve(null),
    loginRisks: (options) => on((d) => d.loginRisks(options)),
    query: (text, options) => on((d) => d.query(text, options)),
    streamRead: (text, options, onBatch) =>
      on((d) => d.streamRead?.(text, options, onBatch) ?? cannotStream(d)),
    async close() {
      // Never loaded: nothing to close, and nothing worth importing for it.
      if (loading === null) return;
      const driver = await loading.catch(() => null);
      await driver?.close();
    },
  };
}
