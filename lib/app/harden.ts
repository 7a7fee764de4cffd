/**
 * The AI login of a connection (docs/security.md "AI login"): the plan that
 * makes a least-privilege login for AI reads, so that the engine's own
 * privileges — not only dbport's classifier — keep AI clients from reading
 * server files, running programs or ending other sessions; its run as the
 * saved login, the proof that the new login reads and holds no such power,
 * its save with the connection, and its drop. Shared by `dbport connections
 * harden` (lib/cli/harden.ts) and the console's Harden button.
 *
 * @module
 */

import { messageOf } from "../base/message_of.ts";
import {
  driverSpec,
  editConnections,
  previewMode,
  type SavedConnection,
} from "./connections.ts";
import { toBase64Url } from "../protocol/base64.ts";
import { ENGINES } from "../db/engines.ts";
import { quoteIdent } from "../db/sql/identifiers.ts";
import { openDriver } from "../db/open_driver.ts";
import type { Driver, Engine } from "../db/types.ts";
import {
  changesDatabaseSelect,
  endMysqlSessions,
  mysqlPrivateGrants,
  postgresPrivateGrants,
} from "./harden_private.ts";

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
  /**
   * Statements about one schema, by statement: a schema dropped between
   * the plan and its run (another session's) is passed over, not a failure.
   */
  schemaOf?: Map<string, string>;
  /**
   * What the new login must be able to read, proved after the run: the
   * first of these relations that still exists (one per schema; a
   * relation another session dropped meanwhile is passed over).
   */
  mustRead?: ReadSample[];
  /** What it must be refused by the engine (credential catalogs). */
  mustNotRead?: string[];
  /**
   * Whether the plan creates the login (none of that name exists; its first
   * statement makes it): a run that does not hold drops it again. A login
   * made by an earlier harden is never dropped by a later one. Unset when
   * the saved login cannot tell (MySQL/MariaDB without read access to
   * mysql.user): nothing is dropped.
   */
  creates?: boolean;
}

/** A relation the new login must read: how to read it, how to tell it is gone. */
export interface ReadSample {
  /** Reads it (no rows). */
  read: string;
  /** A row while it still exists (a catalog read any login may make). */
  exists: string;
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

/**
 * The database's own schemas (not pg_catalog, information_schema, pg_toast,
 * temporary ones), each with the roles whose tables made later the AI login
 * should read: its owner, its tables' owners and the saved login, those the
 * saved login may act for (predefined pg_ roles, such as public's
 * pg_database_owner, make no tables); and one table or view of it, if any.
 */
const PG_SCHEMAS = `
SELECT n.nspname AS name,
       to_json(ARRAY(SELECT o.role FROM (
               SELECT pg_get_userbyid(n.nspowner) AS role
               UNION SELECT pg_get_userbyid(c.relowner) FROM pg_class c
                WHERE c.relnamespace = n.oid AND c.relkind IN ('r','v','m','p','f')
               UNION SELECT current_user::text) o
              WHERE pg_has_role(current_user, o.role, 'MEMBER')
                AND o.role !~ '^pg_'
              ORDER BY o.role))::text AS owners,
       to_json(ARRAY(SELECT o.role FROM (
               SELECT pg_get_userbyid(n.nspowner) AS role
               UNION SELECT pg_get_userbyid(c.relowner) FROM pg_class c
                WHERE c.relnamespace = n.oid AND c.relkind IN ('r','v','m','p','f')) o
              WHERE NOT pg_has_role(current_user, o.role, 'MEMBER')
                AND o.role !~ '^pg_'
              ORDER BY o.role))::text AS others,
       (SELECT c.relname FROM pg_class c
         WHERE c.relnamespace = n.oid AND c.relkind IN ('r','v','m','p')
         ORDER BY c.relname LIMIT 1) AS sample
  FROM pg_namespace n
 WHERE n.nspname !~ '^pg_' AND n.nspname <> 'information_schema'
 ORDER BY n.nspname`;

/**
 * PostgreSQL: a role that can log in and read the database's own schemas,
 * and nothing else: USAGE and SELECT on each schema's tables and views, the
 * same for tables made later (ALTER DEFAULT PRIVILEGES), never
 * `pg_read_all_data` (it reads pg_authid's password verifiers), and
 * `default_transaction_read_only` on as a second belt.
 */
export async function postgresPlan(
  owner: Driver,
  user: string,
  password: string,
  privateColumns?: readonly string[],
): Promise<HardenPlan> {
  const [row] = (await owner.query(
    "SELECT current_database() AS db, EXISTS (SELECT 1 FROM pg_roles WHERE rolname = " +
      literal(user) + ") AS present, " +
      "COALESCE((SELECT pg_has_role(" + literal(user) +
      ", oid, 'MEMBER') FROM pg_roles WHERE rolname = 'pg_read_all_data' AND EXISTS (SELECT 1 FROM pg_roles WHERE rolname = " +
      literal(user) + ")), false) AS reads_all",
    READ,
  )).rows;
  const [database, present, readsAll] = [
    String(row?.[0]),
    row?.[1] === true,
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
  // A login made by an earlier dbport read everything: no longer.
  if (readsAll) statements.push(`REVOKE pg_read_all_data FROM ${role}`);
  const schemaOf = new Map<string, string>();
  const mustRead: ReadSample[] = [];
  // Private columns: SELECT on the other columns only (harden_private.ts).
  const grants = await postgresPrivateGrants(owner, user, privateColumns);
  const notes: string[] = [...grants.notes];
  const schemas = (await owner.query(PG_SCHEMAS, READ)).rows;
  for (const [name, owners, others, sample] of schemas) {
    const schema = quoteIdent(String(name), "postgres");
    const forSchema = [
      `GRANT USAGE ON SCHEMA ${schema} TO ${role}`,
      ...grants.statements.filter((g) => g.schema === name).map((g) => g.sql),
      ...roles(owners).map((by) =>
        `ALTER DEFAULT PRIVILEGES FOR ROLE ${
          quoteIdent(by, "postgres")
        } IN SCHEMA ${schema} GRANT SELECT ON TABLES TO ${role}`
      ),
    ];
    for (const statement of forSchema) schemaOf.set(statement, String(name));
    statements.push(...forSchema);
    if (
      typeof sample === "string" && !grants.views.includes(`${name}.${sample}`)
    ) {
      mustRead.push({
        read: `SELECT 1 FROM ${schema}.${
          quoteIdent(sample, "postgres")
        } LIMIT 0`,
        exists:
          `SELECT 1 FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = ${
            literal(String(name))
          } AND c.relname = ${literal(sample)}`,
      });
    }
    if (roles(others).length > 0) {
      notes.push(
        `Tables that ${
          roles(others).join(", ")
        } make later in ${name} need a GRANT of their own (the saved login cannot set their default privileges).`,
      );
    }
  }
  return {
    user,
    password,
    statements,
    notes,
    creates: !present,
    schemaOf,
    mustRead,
    mustNotRead: [
      "SELECT rolname, rolpassword FROM pg_catalog.pg_authid",
      ...grants.mustNotRead,
    ],
  };
}

/** A JSON array of role names, as strings. */
function roles(value: unknown): string[] {
  const parsed: unknown = typeof value === "string" ? JSON.parse(value) : [];
  return Array.isArray(parsed) ? parsed.map(String) : [];
}

/** MySQL/MariaDB: a user with SELECT and SHOW VIEW only. */
export async function mysqlPlan(
  owner: Driver,
  user: string,
  password: string,
  privateColumns?: readonly string[],
): Promise<HardenPlan> {
  const [row] = (await owner.query(
    "SELECT DATABASE() AS db, SUBSTRING_INDEX(USER(), '@', -1) AS host",
    READ,
  )).rows;
  const database = typeof row?.[0] === "string" ? row[0] : null;
  // The host the server sees dbport connect from, not '%' (any host).
  const host = String(row?.[1] ?? "localhost");
  const account = `${literal(user)}@${literal(host)}`;
  // Private columns: SELECT table by table, on the other columns only.
  const grants = await mysqlPrivateGrants(
    owner,
    account,
    user,
    host,
    database,
    privateColumns,
  );
  // Whether the account exists, where the saved login may read mysql.user:
  // a run that fails drops again a login it created, never one made before.
  const present = await owner.query(
    `SELECT COUNT(*) FROM mysql.user WHERE User = ${literal(user)} AND Host = ${
      literal(host)
    }`,
    READ,
  ).then(({ rows }) => Number(rows[0]?.[0]) > 0, () => null);
  const alter = `ALTER USER ${account} IDENTIFIED BY ${
    literal(password)
  } WITH MAX_USER_CONNECTIONS 8`;
  const create = present === null
    ? [
      `CREATE USER IF NOT EXISTS ${account} IDENTIFIED BY ${literal(password)}`,
    ]
    : present
    ? []
    // Fails, making nothing, should another session make it meanwhile.
    : [`CREATE USER ${account} IDENTIFIED BY ${literal(password)}`];
  const notes = database === null
    ? [
      "The URL names no database: SELECT is granted on every database (still no FILE, SUPER or PROCESS).",
    ]
    : grants.notes;
  return {
    user,
    password,
    statements: [...create, alter, ...grants.statements.map((g) => g.sql)],
    notes: present === null
      ? [
        ...notes,
        `The saved login cannot read mysql.user, so dbport cannot tell whether ${
          JSON.stringify(user)
        } exists: should a statement fail, the login stays.`,
      ]
      : notes,
    mustNotRead: grants.mustNotRead,
    ...(present === null ? {} : { creates: !present }),
  };
}

/** How each engine makes a reading login; null where it has no logins. */
const PLANS: {
  readonly [E in Engine]:
    | ((
      owner: Driver,
      user: string,
      password: string,
      privateColumns?: readonly string[],
    ) => Promise<HardenPlan>)
    | null;
} = { postgres: postgresPlan, mysql: mysqlPlan, sqlite: null };

/** A plan made against a connection, to show and then apply. */
export interface PreparedHarden {
  connection: SavedConnection;
  plan: HardenPlan;
  /** The plan's statements with the new password masked, for showing. */
  shown: string[];
}

/** The new login was made but does not hold as it should: nothing saved. */
export class HardenRefused extends Error {
  override name = "HardenRefused";
}

/**
 * Plan the AI login of `connection` (null for an engine without logins):
 * what the CLI prints and the console shows before anyone applies it.
 */
export async function prepareHarden(
  connection: SavedConnection,
  user: string = aiUserName(connection),
): Promise<PreparedHarden | null> {
  const makePlan = PLANS[connection.engine];
  if (makePlan === null) return null;
  const owner = ownerDriver(connection);
  try {
    const plan = await makePlan(
      owner,
      user,
      newPassword(),
      connection.privateColumns,
    );
    return {
      connection,
      plan,
      shown: plan.statements.map((sql) =>
        sql.replaceAll(plan.password, "********")
      ),
    };
  } finally {
    await owner.close();
  }
}

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

/** The saved login's driver (never the AI login), for the owner's eyes. */
function ownerDriver(connection: SavedConnection): Driver {
  const { aiLogin: _current, ...withoutLogin } = connection;
  return openDriver(driverSpec(withoutLogin), "owner");
}

/**
 * Run a prepared plan as the saved login, prove the new login reads and can
 * do no more, and return the connection with it (not saved yet); throws
 * with why it does not hold. A schema dropped meanwhile is passed over.
 */
export async function applyHarden(
  prepared: PreparedHarden,
): Promise<{ connection: SavedConnection; skipped: string[] }> {
  const { plan } = prepared;
  const owner = ownerDriver(prepared.connection);
  let skipped: string[];
  try {
    skipped = ENGINES[prepared.connection.engine].transactionalLogins
      ? await runAsOne(owner, plan)
      : await runEach(owner, plan);
    // A login made before: its sessions would keep an old database grant.
    if (
      ENGINES[prepared.connection.engine].sessionsKeepDatabaseGrants &&
      plan.statements.some(changesDatabaseSelect)
    ) {
      const left = await endMysqlSessions(owner, plan.user);
      if (left !== null) plan.notes.push(left);
    }
  } finally {
    await owner.close();
  }
  // The dry run would run as the saved login before anyone approves:
  // with an AI login the preview becomes the estimate, written down.
  const estimate = previewMode(prepared.connection) === "dryRun";
  const hardened: SavedConnection = {
    ...prepared.connection,
    aiLogin: { user: plan.user, password: plan.password },
    ...(estimate ? { writePreview: "estimate" as const } : {}),
  };
  const proven = await prove(hardened, plan);
  if (proven !== null) {
    // Nothing is saved, so a login this run created does not stay on the
    // server either: a role with a password nobody has (a failed proof
    // left one per try).
    let dropped = "";
    if (plan.creates === true) {
      const left = await dropAiLogin(hardened, { out: () => {} });
      dropped = left === null
        ? `; ${JSON.stringify(plan.user)} was dropped again`
        : `; dropping ${
          JSON.stringify(plan.user)
        } failed too (${left}): drop it yourself`;
    }
    throw new HardenRefused(
      `The new login does not hold: ${proven}${dropped}`,
    );
  }
  return { connection: hardened, skipped: [...new Set(skipped)] };
}

/**
 * Save the AI login of `hardened` with its connection in the file at
 * `path`; the rest of the entry is the file's own (a policy changed
 * meanwhile stays). A connection removed or pointed elsewhere meanwhile is
 * refused: the login was made where the plan ran.
 */
export async function saveHardened(
  path: string,
  hardened: SavedConnection,
): Promise<void> {
  // Under the connections file's lock, on the file as saved now: only the
  // AI login is set (the user may have changed the rest meanwhile).
  await editConnections(path, (fresh) => {
    const current = fresh.find((c) => c.id === hardened.id);
    if (
      current === undefined || current.url !== hardened.url ||
      current.engine !== hardened.engine
    ) {
      throw new Error(
        `"${hardened.name}" was removed or changed while its AI login was made; nothing was saved (run harden again)`,
      );
    }
    return fresh.map((c) =>
      c.id === hardened.id && hardened.aiLogin !== undefined
        ? {
          ...c,
          aiLogin: hardened.aiLogin,
          ...(hardened.writePreview === undefined
            ? {}
            : { writePreview: hardened.writePreview }),
        }
        : c
    );
  });
}

/** A plan's statement as the owner may see it: the new password masked. */
function masked(plan: HardenPlan, sql: string): string {
  return sql.replaceAll(plan.password, "********");
}

/**
 * PostgreSQL, whose CREATE ROLE and GRANTs are transactional: the plan as
 * one DO block, in the one transaction of one write, so that a statement
 * that fails leaves nothing — no login, no grant, an earlier login's
 * password as it was (a run whose statements failed after CREATE ROLE left
 * the login on the server: outsider stop 50). Each statement runs in a
 * block of its own: one about a schema another session dropped since the
 * plan is passed over (its subtransaction rolled back); any other failure
 * ends the block, naming the statement. Returns the schemas passed over.
 */
async function runAsOne(owner: Driver, plan: HardenPlan): Promise<string[]> {
  const steps = plan.statements.map((sql) => {
    const failed = `RAISE EXCEPTION USING ERRCODE = SQLSTATE, MESSAGE = ${
      literal(`${masked(plan, sql)} failed: `)
    } || SQLERRM;`;
    const schema = plan.schemaOf?.get(sql);
    const onError = schema === undefined
      ? failed
      : `IF EXISTS (SELECT FROM pg_catalog.pg_namespace WHERE nspname = ${
        literal(schema)
      }) THEN ${failed} END IF;`;
    return `BEGIN EXECUTE ${
      literal(sql)
    }; EXCEPTION WHEN OTHERS THEN ${onError} END;`;
  });
  const body = `BEGIN\n${steps.join("\n")}\nEND`;
  let tag = "$dbport_harden$";
  while (body.includes(tag)) {
    tag = `$dbport_${
      toBase64Url(crypto.getRandomValues(new Uint8Array(6))).replace(
        /[^A-Za-z0-9]/g,
        "x",
      )
    }$`;
  }
  try {
    await owner.query(`DO ${tag}${body}${tag}`, WRITE);
  } catch (error) {
    throw new HardenRefused(
      `The plan did not run: ${
        masked(plan, messageOf(error))
      }; ${await pgLeftOver(owner, plan)}`,
    );
  }
  const schemas = [...new Set(plan.schemaOf?.values() ?? [])];
  if (schemas.length === 0) return [];
  const { rows } = await owner.query(
    `SELECT s FROM unnest(ARRAY[${
      schemas.map(literal).join(", ")
    }]::text[]) AS s WHERE NOT EXISTS (SELECT FROM pg_catalog.pg_namespace WHERE nspname = s) ORDER BY s`,
    READ,
  );
  return rows.map((row) => String(row[0]));
}

/** What a PostgreSQL run that failed left, said to the owner. */
async function pgLeftOver(owner: Driver, plan: HardenPlan): Promise<string> {
  const name = JSON.stringify(plan.user);
  const rolledBack = "it ran as one transaction, which was rolled back";
  if (plan.creates !== true) {
    return `${rolledBack}: the login ${name}, made before, is as it was`;
  }
  // Looked at, not assumed: the write's end may have been lost with its
  // session, and another harden may have made the login meanwhile.
  const present = await owner.query(
    `SELECT 1 FROM pg_catalog.pg_roles WHERE rolname = ${literal(plan.user)}`,
    READ,
  ).then(({ rows }) => rows.length > 0, () => null);
  return present === false
    ? `${rolledBack}: nothing was left on the server (no login ${name})`
    : present === true
    ? `${rolledBack}, yet a login ${name} is on the server (another run's, or this one's if its end was lost): drop it with DROP OWNED BY and DROP ROLE if nobody else made it`
    : `${rolledBack}; whether a login ${name} is on the server could not be read: look for it`;
}

/**
 * MySQL/MariaDB, whose CREATE USER and GRANTs are not transactional: the
 * statements one by one; when one fails, a login this run created (its
 * plan's plain CREATE USER ran) is dropped again — never one an earlier
 * harden made — and the owner is told what failed and what is left.
 * Returns the schemas passed over (a dropped schema's statements).
 */
async function runEach(owner: Driver, plan: HardenPlan): Promise<string[]> {
  const skipped: string[] = [];
  const ran: string[] = [];
  let created = false;
  for (const statement of plan.statements) {
    try {
      await owner.query(statement, WRITE);
      ran.push(statement);
      if (plan.creates === true && statement === plan.statements[0]) {
        created = true;
      }
    } catch (error) {
      const schema = plan.schemaOf?.get(statement);
      if (schema === undefined || await schemaExists(owner, schema)) {
        const failed = `${masked(plan, statement)} failed: ${
          masked(plan, messageOf(error))
        }`;
        throw new HardenRefused(
          `The plan did not run: ${failed}; ${await mysqlLeftOver(
            owner,
            plan,
            ran,
            created,
          )}`,
        );
      }
      skipped.push(schema);
    }
  }
  return skipped;
}

/** What a MySQL/MariaDB run that failed left, said to the owner. */
async function mysqlLeftOver(
  owner: Driver,
  plan: HardenPlan,
  ran: readonly string[],
  created: boolean,
): Promise<string> {
  const name = JSON.stringify(plan.user);
  if (ran.length === 0) {
    return "nothing had run: nothing was left on the server";
  }
  if (created) {
    const drops = await DROPS.mysql!(owner, plan.user);
    const failed = await (async () => {
      for (const drop of drops) await owner.query(drop, WRITE);
    })().then(() => null, (error: unknown) => messageOf(error));
    return failed === null
      ? `the login ${name} this run created was dropped again: nothing was left on the server`
      : `dropping the login ${name} this run created failed too (${failed}): drop it yourself (${
        drops.join("; ")
      })`;
  }
  const done = ran.map((sql) => masked(plan, sql)).join("; ");
  return plan.creates === false
    ? `the login ${name}, made before, stays, with what ran before the failure: ${done}: run harden --apply again`
    : `what ran before the failure stays (${done}); whether the login ${name} was made by this run is unknown (the saved login cannot read mysql.user): drop it yourself (DROP USER) if no earlier harden made it`;
}

async function schemaExists(owner: Driver, schema: string): Promise<boolean> {
  const { rows } = await owner.query(
    `SELECT 1 FROM pg_namespace WHERE nspname = ${literal(schema)}`,
    READ,
  );
  return rows.length > 0;
}

/**
 * Whether the AI login reads, holds no power past reading and is refused
 * the credential catalogs by the engine; why not.
 */
async function prove(
  connection: SavedConnection,
  plan: HardenPlan,
): Promise<string | null> {
  const reader = openDriver(driverSpec(connection), "owner");
  try {
    await reader.query("SELECT 1", READ);
    for (const sample of plan.mustRead ?? []) {
      const refused = await reader.query(sample.read, READ).then(
        () => null,
        (error: unknown) => error,
      );
      if (refused === null) break;
      // Dropped since the plan (another session's): the next one proves it.
      if ((await reader.query(sample.exists, READ)).rows.length > 0) {
        throw refused;
      }
    }
    const risks = await reader.loginRisks(CALL);
    if (risks.length > 0) return `it ${risks.join(", ")}`;
    for (const sql of plan.mustNotRead ?? []) {
      const read = await reader.query(sql, READ).then(() => true, () => false);
      if (read) return `it can run ${sql}`;
    }
    return null;
  } catch (error) {
    return messageOf(error);
  } finally {
    await reader.close();
  }
}
