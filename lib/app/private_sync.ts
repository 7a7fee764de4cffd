/**
 * Keeping the AI login's grants in step with a connection's private columns
 * (docs/security.md "Private columns"): run as the saved login, then proved
 * as the AI login — every private column and withheld view must be refused
 * by the engine. Run by `connections set --private`, by the server at start
 * and whenever connections.json changes (server/private_sync.ts), and, as
 * part of its plan, by `harden --apply`.
 *
 * @module
 */

import { driverSpec, type SavedConnection } from "./connections.ts";
import { type Engine, ENGINES } from "../db/engines.ts";
import { openDriver } from "../db/open_driver.ts";
import type { Driver } from "../db/types.ts";
import { messageOf } from "../base/message_of.ts";
import { cliCommand } from "./cli_command.ts";
import {
  changesDatabaseSelect,
  endMysqlSessions,
  mysqlPrivateGrants,
  postgresPrivateGrants,
  type PrivateGrants,
} from "./harden_private.ts";

const OPTIONS = {
  signal: new AbortController().signal,
  timeoutMs: 30_000,
  maxRows: 100,
  maxBytes: 1_000_000,
  maxCellChars: 10_000,
};

/** What a re-sync did, and why it does not hold (null: it holds). */
export interface PrivateSync {
  statements: string[];
  columns: string[];
  views: string[];
  notes: string[];
  problem: string | null;
}

/** Why `connection` cannot have private columns; null when it can. */
export function privateColumnsProblem(
  connection: SavedConnection,
): string | null {
  if ((connection.privateColumns ?? []).length === 0) return null;
  if (ENGINES[connection.engine].privateColumnsHeldBy === "authorizer") {
    return /^libsql:|^https?:|^wss?:/i.test(connection.url)
      ? `"${connection.name}" is a remote libSQL database: dbport cannot install an authorizer there, so it cannot keep columns private`
      : null;
  }
  if (connection.aiLogin === undefined) {
    return `private columns on "${connection.name}" need its AI login, which the engine holds to them: run ${cliCommand()} connections harden "${connection.name}" --apply first`;
  }
  return null;
}

/** How the saved login reads the grants that keep `user` from the private columns. */
type GrantsReader = (
  owner: Driver,
  connection: SavedConnection,
  user: string,
) => Promise<PrivateGrants>;

/**
 * Each engine's grants; null where the columns are held by dbport's
 * authorizer (`ENGINES[e].privateColumnsHeldBy`), with nothing to grant.
 * A new engine is named here by the compiler.
 */
const GRANTS: { readonly [E in Engine]: GrantsReader | null } = {
  postgres: (owner, connection, user) =>
    postgresPrivateGrants(owner, user, connection.privateColumns),
  mysql: mysqlGrants,
  sqlite: null,
};

async function mysqlGrants(
  owner: Driver,
  connection: SavedConnection,
  user: string,
): Promise<PrivateGrants> {
  const [row] = (await owner.query(
    "SELECT DATABASE() AS db, SUBSTRING_INDEX(USER(), '@', -1) AS host",
    { ...OPTIONS, mode: "read" },
  )).rows;
  const host = String(row?.[1] ?? "localhost");
  const database = typeof row?.[0] === "string" ? row[0] : null;
  const lit = (t: string) => `'${t.replaceAll("'", "''")}'`;
  return await mysqlPrivateGrants(
    owner,
    `${lit(user)}@${lit(host)}`,
    user,
    host,
    database,
    connection.privateColumns,
  );
}

/**
 * Bring the AI login's grants in step with `connection.privateColumns` and
 * prove them; SQLite and connections without an AI login have nothing to
 * run (the first is held by its authorizer, the second refused earlier).
 */
export async function syncPrivateColumns(
  connection: SavedConnection,
): Promise<PrivateSync> {
  const done: PrivateSync = {
    statements: [],
    columns: [],
    views: [],
    notes: [],
    problem: privateColumnsProblem(connection),
  };
  const login = connection.aiLogin;
  const grantsFor = GRANTS[connection.engine];
  if (done.problem !== null || grantsFor === null || login === undefined) {
    return done;
  }
  const { aiLogin: _login, ...withoutLogin } = connection;
  const owner = openDriver(driverSpec(withoutLogin), "owner");
  let grants: PrivateGrants;
  try {
    grants = await grantsFor(owner, connection, login.user);
    for (const { sql } of grants.statements) {
      await grant(owner, sql);
      done.statements.push(sql);
    }
    if (
      ENGINES[connection.engine].sessionsKeepDatabaseGrants &&
      done.statements.some(changesDatabaseSelect)
    ) {
      const left = await endMysqlSessions(owner, login.user);
      if (left !== null) grants.notes.push(left);
    }
  } catch (error) {
    return { ...done, problem: messageOf(error) };
  } finally {
    await owner.close();
  }
  done.columns = grants.columns;
  done.views = grants.views;
  done.notes = grants.notes;
  done.problem = await refused(connection, grants.mustNotRead);
  return done;
}

/**
 * Run one GRANT or REVOKE as the saved login. Another re-sync granting on
 * the same table at once (the CLI and a running server) makes PostgreSQL
 * say "tuple concurrently updated": tried again. A table dropped since the
 * catalog was read has nothing to keep.
 */
async function grant(owner: Driver, sql: string): Promise<void> {
  for (let attempt = 1;; attempt++) {
    try {
      await owner.query(sql, { ...OPTIONS, mode: "write" });
      return;
    } catch (error) {
      const message = messageOf(error);
      if (/does not exist|doesn't exist|\[(42P01|3F000)\]/.test(message)) {
        return;
      }
      if (
        attempt >= 5 ||
        !/concurrently updated|\[SQLSTATE (XX000|40001|40P01)\]|Deadlock/i
          .test(message)
      ) throw error;
      await new Promise((resolve) => setTimeout(resolve, 50 * attempt));
    }
  }
}

/** Whether the AI login is refused each read; why not. */
async function refused(
  connection: SavedConnection,
  reads: string[],
): Promise<string | null> {
  if (reads.length === 0) return null;
  const reader = openDriver(driverSpec(connection), "owner");
  try {
    for (const sql of reads) {
      const read = await reader.query(sql, { ...OPTIONS, mode: "read" }).then(
        () => true,
        () => false,
      );
      if (read) {
        return `the AI login can still run ${sql} (a grant to PUBLIC or to a role it belongs to?)`;
      }
    }
    return null;
  } finally {
    await reader.close();
  }
}
