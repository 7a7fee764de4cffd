/**
 * A driver whose engine module is imported on its first call. Each driver
 * package weighs 15–25 MiB resident once loaded (postgres.js, mysql2, the
 * PostgreSQL parser's WASM), so an idle `serve` loads none until a
 * connection of that engine is used (bench "idle RSS";
 * docs/performance.md "Memory").
 *
 * @module
 */

import type { Driver, Engine } from "./types.ts";

/** `load()` runs at the first call; a failed load is tried again at the next. */
export function lazyDriver(
  engine: Engine,
  load: () => Promise<Driver>,
): Driver {
  let loading: Promise<Driver> | null = null;
  const driver = () =>
    loading ??= load().catch((error: unknown) => {
      loading = null;
      throw error;
    });
  return {
    engine,
    version: async (options) => (await driver()).version(options),
    listSchemas: async (options) => (await driver()).listSchemas(options),
    listTables: async (options) => (await driver()).listTables(options),
    searchSchema: async (options) => (await driver()).searchSchema(options),
    describeTable: async (table, options) =>
      (await driver()).describeTable(table, options),
    overview: async (options) => (await driver()).overview(options),
    fingerprint: async (options) => (await driver()).fingerprint(options),
    check: async (text, tier, options) =>
      (await driver()).check(text, tier, options),
    loginRisks: async (options) => (await driver()).loginRisks(options),
    query: async (text, options) => (await driver()).query(text, options),
    async close() {
      // Never loaded: nothing to close, and nothing worth importing for it.
      if (loading === null) return;
      const loaded = await loading.catch(() => null);
      await loaded?.close();
    },
  };
}
