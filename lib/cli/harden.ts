/**
 * `dbport connections harden NAME [--apply]`: a least-privilege login for AI
 * reads, so that the engine's own privileges — not only dbport's classifier —
 * keep AI clients from reading server files, running programs or ending
 * other sessions (docs/security.md "AI login"). Without `--apply` it shows
 * what it would run; with it, it runs that as the saved login, proves the new
 * login can read and holds no such power, and saves it with the connection.
 *
 * @module
 */

import { cliCommand } from "../app/cli_command.ts";
import { messageOf } from "../protocol/message_of.ts";
import {
  driverSpec,
  loadConnections,
  saveConnections,
  type SavedConnection,
} from "../app/connections.ts";
import { toBase64Url } from "../protocol/base64.ts";
import { DbError } from "../db/errors.ts";
import { quoteIdent } from "../db/identifiers.ts";
import { openDriver } from "../db/pool.ts";
import type { Driver, Engine } from "../db/types.ts";
import { previewMode } from "../features/tools/preview.ts";
import { parseFlags, stringFlag } from "./args.ts";
import { type CliIO, UsageError } from "./io.ts";

const CALL = { signal: new AbortController().signal, timeoutMs: 30_000 };
const WRITE = {
  ...CALL,
  mode: "write" as const,
  maxRows: 100,
  maxBytes: 1_000_000,
  maxCellChars: 10_000,
};
const READ = { ...WRITE, mode: "read" as const };

/** A plan: the login to make and the statements that make it. */
export interface HardenPlan {
  user: string;
  password: string;
  statements: string[];
  /** What the plan cannot do, said to the owner. */
  notes: string[];
}

/** A new random password: 32 characters of base64url. */
function newPassword(): string {
  return toBase64Url(crypto.getRandomValues(new Uint8Array(24)));
}

/** A SQL string literal. */
function literal(text: string): string {
  return `'${text.replaceAll("'", "''")}'`;
}

/** The default login name: `dbport_ai_` and the connection id's first part. */
export function aiUserName(connection: SavedConnection): string {
  return `dbport_ai_${connection.id.slice(0, 8)}`;
}

/** PostgreSQL: a role that can log in, read, and nothing else. */
export async function postgresPlan(
  owner: Driver,
  user: string,
  password: string,
): Promise<HardenPlan> {
  const [row] = (await owner.query(
    "SELECT current_setting('server_version_num')::int AS v, current_database() AS db, EXISTS (SELECT 1 FROM pg_roles WHERE rolname = " +
      literal(user) + ") AS present",
    READ,
  )).rows;
  const [version, database, present] = [
    Number(row?.[0]),
    String(row?.[1]),
    row?.[2] === true,
  ];
  const role = quoteIdent(user, "postgres");
  const statements = [
    present
      ? `ALTER ROLE ${role} LOGIN PASSWORD ${literal(password)}`
      : `CREATE ROLE ${role} LOGIN PASSWORD ${literal(password)}`,
    `ALTER ROLE ${role} NOSUPERUSER NOCREATEDB NOCREATEROLE NOREPLICATION NOBYPASSRLS CONNECTION LIMIT 8`,
    `ALTER ROLE ${role} SET default_transaction_read_only = on`,
    `GRANT CONNECT ON DATABASE ${quoteIdent(database, "postgres")} TO ${role}`,
  ];
  const notes: string[] = [];
  if (version >= 140000) {
    statements.push(`GRANT pg_read_all_data TO ${role}`);
  } else {
    const { schemas } = await owner.listSchemas(CALL);
    for (const schema of schemas) {
      const name = quoteIdent(schema.name, "postgres");
      statements.push(
        `GRANT USAGE ON SCHEMA ${name} TO ${role}`,
        `GRANT SELECT ON ALL TABLES IN SCHEMA ${name} TO ${role}`,
        `ALTER DEFAULT PRIVILEGES IN SCHEMA ${name} GRANT SELECT ON TABLES TO ${role}`,
      );
    }
    notes.push(
      "PostgreSQL before 14 has no pg_read_all_data: SELECT is granted per schema, and tables made later by other roles need a GRANT of their own.",
    );
  }
  return { user, password, statements, notes };
}

/** MySQL/MariaDB: a user with SELECT and SHOW VIEW only. */
export async function mysqlPlan(
  owner: Driver,
  user: string,
  password: string,
): Promise<HardenPlan> {
  const [row] = (await owner.query(
    "SELECT DATABASE() AS db, SUBSTRING_INDEX(USER(), '@', -1) AS host",
    READ,
  )).rows;
  const database = typeof row?.[0] === "string" ? row[0] : null;
  // The host the server sees dbport connect from, not '%' (any host).
  const account = `${literal(user)}@${
    literal(String(row?.[1] ?? "localhost"))
  }`;
  const scope = database === null
    ? "*.*"
    : `${quoteIdent(database, "mysql")}.*`;
  return {
    user,
    password,
    statements: [
      `CREATE USER IF NOT EXISTS ${account} IDENTIFIED BY ${literal(password)}`,
      `ALTER USER ${account} IDENTIFIED BY ${
        literal(password)
      } WITH MAX_USER_CONNECTIONS 8`,
      `GRANT SELECT, SHOW VIEW ON ${scope} TO ${account}`,
    ],
    notes: database === null
      ? [
        "The URL names no database: SELECT is granted on every database (still no FILE, SUPER or PROCESS).",
      ]
      : [],
  };
}

/** How each engine makes a reading login; null where it has no logins. */
const PLANS: {
  readonly [E in Engine]:
    | ((owner: Driver, user: string, password: string) => Promise<HardenPlan>)
    | null;
} = { postgres: postgresPlan, mysql: mysqlPlan, sqlite: null };

/** How each engine drops the AI login it made; null where it has no logins. */
const DROPS: {
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
  io: CliIO,
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

/** Run `connections harden` against the connections file at `path`. */
export async function hardenCommand(
  path: string,
  args: string[],
  io: CliIO,
): Promise<number> {
  const parsed = parseFlags("connections harden", args, {
    apply: { type: "boolean" },
    user: { type: "string" },
  });
  const loaded = await loadConnections(path);
  if (!loaded.ok) throw new Error(`${loaded.message}; fix it by hand first`);
  const key = parsed.positionals[0]?.toLowerCase();
  if (key === undefined) {
    throw new UsageError("connections harden: name a connection id or name");
  }
  const connection = loaded.connections.find((c) => c.id === key) ??
    loaded.connections.find((c) => c.name.toLowerCase() === key);
  if (connection === undefined) {
    throw new UsageError(
      `connections harden: no saved connection has the id or name "${
        parsed.positionals[0]
      }"`,
    );
  }
  const makePlan = PLANS[connection.engine];
  if (makePlan === null) {
    io.out(
      `"${connection.name}" is a SQLite database: it has no logins. AI reads run on a read-only handle (PRAGMA query_only); keep the file readable only by you.`,
    );
    return 0;
  }
  const { aiLogin: _current, ...withoutLogin } = connection;
  const owner = openDriver(driverSpec(withoutLogin), "owner");
  try {
    const user = stringFlag(parsed, "user") ?? aiUserName(connection);
    const password = newPassword();
    const plan = await makePlan(owner, user, password);
    const masked = (sql: string) => sql.replaceAll(password, "********");
    io.out(
      `${parsed.flags.apply ? "Creating" : "Would create"} the login ${
        JSON.stringify(user)
      } for AI reads on "${connection.name}":`,
    );
    for (const statement of plan.statements) io.out(`  ${masked(statement)};`);
    for (const note of plan.notes) io.out(`Note: ${note}`);
    if (parsed.flags.apply !== true) {
      io.out(
        "Nothing was changed. Run again with --apply to create it (as the saved login) and use it for every AI read.",
      );
      return 0;
    }
    for (const statement of plan.statements) {
      await owner.query(statement, WRITE);
    }
    // The dry run would run as the saved login before anyone approves:
    // with an AI login the preview becomes the estimate, written down.
    const estimate = previewMode(connection) === "dryRun";
    const hardened: SavedConnection = {
      ...connection,
      aiLogin: { user, password },
      ...(estimate ? { writePreview: "estimate" as const } : {}),
    };
    const proven = await prove(hardened);
    if (proven !== null) {
      io.err(`The new login does not hold: ${proven}. Nothing was saved.`);
      return 1;
    }
    await saveConnections(
      path,
      loaded.connections.map((c) => c.id === connection.id ? hardened : c),
    );
    io.out(
      `Saved: every AI read on "${connection.name}" now runs as ${
        JSON.stringify(user)
      }; approved writes run as the saved login.`,
    );
    if (estimate) {
      io.out(
        `Write previews on "${connection.name}" are now the engine's estimate (a dry run would run as the saved login before you approve); to have the dry run back: ${cliCommand()} connections set "${connection.name}" --write-preview dryRun`,
      );
    }
    return 0;
  } catch (error) {
    const message = error instanceof DbError || error instanceof Error
      ? error.message
      : String(error);
    io.err(`connections harden: ${message}`);
    return 1;
  } finally {
    await owner.close();
  }
}

/** Whether the AI login reads and holds no power past reading; why not. */
async function prove(connection: SavedConnection): Promise<string | null> {
  const reader = openDriver(driverSpec(connection), "owner");
  try {
    await reader.query("SELECT 1", READ);
    const risks = await reader.loginRisks(CALL);
    return risks.length === 0 ? null : `it ${risks.join(", ")}`;
  } catch (error) {
    return messageOf(error);
  } finally {
    await reader.close();
  }
}
