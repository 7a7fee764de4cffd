/**
 * The drop of a connection's AI login, as its saved login: the statements
 * each engine drops the login harden made with (`DROPS`), and their run
 * when the login is removed (`dbport connections remove`, the console) or
 * a harden whose login does not hold takes it back (harden.ts).
 *
 * @module
 */

import { messageOf } from "../base/message_of.ts";
import { driverSpec, type SavedConnection } from "./connections.ts";
import { quoteIdent } from "../db/sql/identifiers.ts";
import { openDriver } from "../db/open_driver.ts";
import type { Driver, Engine } from "../db/types.ts";
import { literal, READ, WRITE } from "./harden_sql.ts";

/** How each engine drops the AI login it made; null where it has no logins. */
export const DROPS: {
  readonly [E in Engine]:
    | ((owner: Driver, user: string) => Promise<string[]>)
    | null;
} = {
  postgres: (_owner, user) => {
    const role = quoteIdent(user, "postgres");
    return Promise.resolve([
      `DROP OWNED BY ${role}`,
      `DROP ROLE IF EXISTS ${role}`,
    ]);
  },
  mysql: async (owner, user) => {
    const [row] = (await owner.query(
      "SELECT SUBSTRING_INDEX(USER(), '@', -1) AS host",
      READ,
    )).rows;
    const host = literal(String(row?.[0] ?? "localhost"));
    return [`DROP USER IF EXISTS ${literal(user)}@${host}`];
  },
  sqlite: null,
};

/**
 * The statements that drop `connection`'s AI login on the server, as its
 * saved login would run them (empty where there is none).
 */
export async function dropAiLoginStatements(
  connection: SavedConnection,
  owner: Driver,
): Promise<string[]> {
  const drop = DROPS[connection.engine];
  if (connection.aiLogin === undefined || drop === null) return [];
  return await drop(owner, connection.aiLogin.user);
}

/**
 * Drop the AI login `harden` made for `connection`, as its saved login;
 * an error message, or null when it is gone.
 */
export async function dropAiLogin(
  connection: SavedConnection,
  io: { out(line: string): void },
): Promise<string | null> {
  const { aiLogin: _login, ...withoutLogin } = connection;
  const owner = openDriver(driverSpec(withoutLogin), "owner");
  try {
    for (const statement of await dropAiLoginStatements(connection, owner)) {
      io.out(`  ${statement};`);
      await owner.query(statement, WRITE);
    }
    return null;
  } catch (error) {
    return messageOf(error);
  } finally {
    await owner.close();
  }
}
