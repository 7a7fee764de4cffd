/**
 * A connection with an AI login: every read - queries in read-only mode,
 * catalog calls, the parser's catalog checks, fingerprints - runs as the
 * least-privilege login, and only an approved write runs as the user's saved
 * login. The engine's own privileges are then the last wall under dbport's
 * classifier (docs/security.md "AI login").
 *
 * @module
 */

import type { Driver } from "./types.ts";
import { hostList, urlParts } from "./target.ts";

/** `reader` for everything but writes, which go to `writer`. */
export function splitDriver(reader: Driver, writer: Driver): Driver {
  return {
    engine: reader.engine,
    version: (options) => reader.version(options),
    listSchemas: (options) => reader.listSchemas(options),
    listTables: (options) => reader.listTables(options),
    searchSchema: (options) => reader.searchSchema(options),
    describeTable: (table, options) => reader.describeTable(table, options),
    overview: (options) => reader.overview(options),
    fingerprint: (options) => reader.fingerprint(options),
    check: (text, tier, options) => reader.check(text, tier, options),
    ...(reader.checkLocal === undefined ? {} : {
      checkLocal: reader.checkLocal.bind(reader),
    }),
    loginRisks: (options) => reader.loginRisks(options),
    query: (text, options) =>
      (options.mode === "write" ? writer : reader).query(text, options),
    // Exports are reads: the AI login's.
    ...(reader.streamRead === undefined ? {} : {
      streamRead: reader.streamRead.bind(reader),
    }),
    async close() {
      await Promise.allSettled([reader.close(), writer.close()]);
    },
  };
}

/** `url` with its user and password replaced by the AI login's. */
export function withLogin(
  url: string,
  login: { user: string; password: string },
): string {
  // Several hosts with their ports (`h1:5432,h2:5433`) are no WHATWG URL:
  // the user info is replaced as written.
  const parts = hostList(url, 5432) === null ? null : urlParts(url);
  if (parts !== null) {
    return `${parts.scheme}${encodeURIComponent(login.user)}:${
      encodeURIComponent(login.password)
    }@${parts.hosts}${parts.rest}`;
  }
  const parsed = new URL(url);
  parsed.username = encodeURIComponent(login.user);
  parsed.password = encodeURIComponent(login.password);
  return parsed.toString();
}
