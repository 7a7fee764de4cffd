/**
 * What the login can do and what the database holds, for MySQL/MariaDB:
 * the login's risky grants, the server's version, and the schema listings
 * (lib/db/mysql/mysql_schema.ts), each on a pooled session with the caller's
 * limits.
 *
 * @module
 */

import {
  describeMysqlTable,
  listMysqlSchemas,
  listMysqlTables,
  mysqlColumns,
  mysqlFingerprint,
  searchMysql,
} from "./mysql_schema.ts";
import { exec, type MysqlState } from "./mysql_session.ts";
import { assembleOverview } from "../overview.ts";
import type { Driver } from "../types.ts";

/** The driver's methods that read the login and the catalog. */
export type MysqlIntrospection = Pick<
  Driver,
  | "loginRisks"
  | "version"
  | "listSchemas"
  | "listTables"
  | "searchSchema"
  | "describeTable"
  | "overview"
  | "fingerprint"
>;

/** The catalog-reading methods of a driver over `state`. */
export function mysqlIntrospection(state: MysqlState): MysqlIntrospection {
  type Limits = { signal: AbortSignal; timeoutMs: number };
  const runner = (options: Limits) => (text: string, params: unknown[]) =>
    exec(state, text, params, options);
  return {
    async loginRisks(options) {
      const rows = await exec(
        state,
        "SHOW GRANTS FOR CURRENT_USER()",
        [],
        options,
      );
      return mysqlRisks(rows.map((row) => String(Object.values(row)[0])));
    },
    async version(options) {
      const [row] = await exec(state, "select version() as v", [], options);
      const version = String(row?.v ?? "");
      return `${/mariadb/i.test(version) ? "MariaDB" : "MySQL"} ${version}`;
    },
    listSchemas: (options) => listMysqlSchemas(runner(options)),
    listTables: (options) => listMysqlTables(runner(options), options),
    searchSchema: (options) => searchMysql(runner(options), options),
    describeTable: (table, options) =>
      describeMysqlTable(runner(options), table, options.schema),
    async overview(options) {
      const run = runner(options);
      const schema = options.schema === undefined
        ? {}
        : { schema: options.schema };
      const page = await listMysqlTables(run, {
        rowCounts: false,
        limit: options.maxTables,
        ...schema,
      });
      const columns = await mysqlColumns(
        run,
        options.schema,
        page.tables.at(-1) ?? null,
      );
      return assembleOverview(page, options.maxTables, columns);
    },
    fingerprint: (options) => mysqlFingerprint(runner(options)),
  };
}

/** Global privileges that reach past reading data, in words. */
const GLOBAL_POWERS: Record<string, string> = {
  "ALL PRIVILEGES": "holds ALL PRIVILEGES on every database",
  FILE: "holds FILE (reads and writes files on the server)",
  SUPER: "holds SUPER",
  PROCESS: "holds PROCESS (sees every session's statements)",
  SHUTDOWN: "holds SHUTDOWN",
  "CONNECTION ADMIN": "holds CONNECTION ADMIN (can end other sessions)",
};

/** The risks in `SHOW GRANTS` lines (only grants ON *.* reach that far). */
export function mysqlRisks(grants: readonly string[]): string[] {
  const risks = new Set<string>();
  for (const grant of grants) {
    const match = /^GRANT (.+?) ON \*\.\* TO /i.exec(grant);
    if (match === null) continue;
    const privileges = match[1]!.toUpperCase().split(/\s*,\s*/);
    for (const privilege of privileges) {
      const power = GLOBAL_POWERS[privilege];
      if (power !== undefined) risks.add(power);
    }
  }
  return [...risks];
}
