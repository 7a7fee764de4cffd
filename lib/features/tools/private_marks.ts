/**
 * Private columns marked where AI clients learn a schema (docs/security.md
 * "Private columns"): `describe_table`, `search_schema`, the schema
 * resource and the prompts show them `private: true`, so a model writes
 * queries that leave them out. No value of a column is ever shown by these
 * (they read the catalog only); the engine refuses the values themselves.
 *
 * @module
 */

import { privateMatch, privatePatterns } from "../../db/private_columns.ts";
import type { Driver } from "../../db/types.ts";

/**
 * `driver` with its catalog answers marked: each column a pattern of
 * `entries` makes private carries `private: true`.
 */
export function markPrivate(
  driver: Driver,
  entries: readonly string[] | undefined,
): Driver {
  if (entries === undefined || entries.length === 0) return driver;
  const patterns = privatePatterns(entries);
  const mark = <C extends { name: string }>(
    schema: string,
    table: string,
    column: C,
  ): C =>
    privateMatch(patterns, schema, table, column.name, driver.engine) === null
      ? column
      : { ...column, private: true };
  return {
    ...driver,
    describeTable: async (table, options) => {
      const detail = await driver.describeTable(table, options);
      return detail === null ? null : {
        ...detail,
        columns: detail.columns.map((c) => mark(detail.schema, detail.name, c)),
      };
    },
    overview: async (options) => {
      const overview = await driver.overview(options);
      return {
        ...overview,
        tables: overview.tables.map((t) => ({
          ...t,
          columns: t.columns.map((c) => mark(t.schema, t.name, c)),
        })),
      };
    },
    searchSchema: async (options) => {
      const found = await driver.searchSchema(options);
      return {
        ...found,
        matches: found.matches.map((m) =>
          m.column !== null &&
            privateMatch(
                patterns,
                m.schema,
                m.table,
                m.column,
                driver.engine,
              ) !== null
            ? { ...m, private: true }
            : m
        ),
      };
    },
  };
}

/** `{ private: true }` for a marked column, else nothing (spread into JSON). */
export function privateFlag(
  column: { private?: boolean },
): { private?: true } {
  return column.private === true ? { private: true } : {};
}
