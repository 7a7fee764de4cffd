// deno-lint-ignore-file no-console
/**
 * What the suite's PostgreSQL fixtures take for granted in the shared
 * `test` database, made sure of before the tests start (scripts/test_all.ts):
 * PL/pgSQL (an owner's functions and DO blocks in set-ups), file_fdw and
 * dblink (the owner's foreign tables and remote calls that attacks aim at).
 * A fresh server has PL/pgSQL; a `test` database made without it, or one an
 * earlier run's attack emptied, had none (stop 56: every fixture that
 * created a plpgsql function failed). Each is created only when missing; a
 * server that is down is left to the tests, which say so.
 *
 * @module
 */

import postgres from "postgres";
import { POSTGRES_URL } from "./_db_urls.ts";

const EXTENSIONS = ["plpgsql", "file_fdw", "dblink"];

const sql = postgres(POSTGRES_URL, {
  max: 1,
  onnotice: () => {},
  connect_timeout: 5,
});
try {
  for (const extension of EXTENSIONS) {
    try {
      await sql.unsafe(`create extension if not exists ${extension}`);
    } catch (error) {
      // Another process made it at the same moment: it is there.
      if (!/already exists|duplicate key/.test(String(error))) throw error;
    }
  }
} catch (error) {
  console.error(
    `tests/_prepare_databases.ts: could not make sure of ${
      EXTENSIONS.join(", ")
    } in the test database: ${error instanceof Error ? error.message : error}`,
  );
} finally {
  await sql.end({ timeout: 1 });
}
