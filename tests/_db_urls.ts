/**
 * The test databases' URLs (`DBPORT_TEST_POSTGRES_URL`,
 * `DBPORT_TEST_MYSQL_URL`), apart from tests/_db.ts, which loads every
 * driver: tests/_prepare_databases.ts needs only the URL.
 *
 * @module
 */

export const POSTGRES_URL = Deno.env.get("DBPORT_TEST_POSTGRES_URL") ??
  "postgres://postgres@127.0.0.1:5432/test";
export const MYSQL_URL = Deno.env.get("DBPORT_TEST_MYSQL_URL") ??
  "mysql://root@127.0.0.1:3306/test";
