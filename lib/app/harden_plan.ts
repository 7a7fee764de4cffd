/**
 * The plan of a connection's AI login (docs/security.md "AI login"), one
 * maker per engine: the login to make, with a new random password, and the
 * statements that make it a least-privilege reader of the database's own
 * schemas (harden_private.ts: of their columns that are not private), with
 * what the new login must read and must be refused once made (harden.ts
 * `prove`) and what the plan cannot do, said to the owner. Nothing here
 * runs a statement that changes the server.
 *
 * @module
 */

import { toBase64Url } from "../protocol/base64.ts";
import { quoteIdent } from "../db/sql/identifiers.ts";
import type { Driver, Engine } from "../db/types.ts";
import { mysqlPrivateGrants, postgresPrivateGrants } from "./harden_private.ts";
import { literal, READ } from "./harden_sql.ts";

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
export function newPassword(): string {
  return toBase64Url(crypto.getRandomValues(new Uint8Array(24)));
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
export const PLANS: {
  readonly [E in Engine]:
    | ((
      owner: Driver,
      user: string,
      password: string,
      privateColumns?: readonly string[],
    ) => Promise<HardenPlan>)
    | null;
} = { postgres: postgresPlan, mysql: mysqlPlan, sqlite: null };
