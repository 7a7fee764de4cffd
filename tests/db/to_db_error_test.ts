/**
 * One toDbError (lib/db/to_db_error.ts) read three ways: each engine's codes
 * sort a failure, its message is redacted, and a DbError passes as it is.
 */
import { assertEquals } from "@std/assert";
import { DbError } from "../../lib/db/errors.ts";
import { toDbError as mysqlError } from "../../lib/db/mysql/mysql_errors.ts";
import { toDbError as postgresError } from "../../lib/db/postgres/pg_errors.ts";
import { toDbError as sqliteError } from "../../lib/db/sqlite/sqlite_cells.ts";

function failure(fields: Record<string, unknown>): Error {
  return Object.assign(new Error(String(fields.message ?? "failed")), fields);
}

function seen(error: DbError): [string, string] {
  return [error.kind, error.message];
}

Deno.test("a DbError passes through every engine's reading unchanged", () => {
  const original = new DbError("changed", "rows changed");
  for (const read of [mysqlError, postgresError, sqliteError]) {
    assertEquals(read(original, []), original);
  }
});

Deno.test("PostgreSQL: SQLSTATE sorts the failure; DETAIL, HINT and the code are shown, secrets redacted", () => {
  assertEquals(
    seen(postgresError(
      failure({
        message: "canceling statement due to statement timeout",
        code: "57014",
      }),
      [],
    )),
    [
      "timeout",
      "canceling statement due to statement timeout [SQLSTATE 57014]",
    ],
  );
  assertEquals(
    seen(postgresError(
      failure({
        message: 'password authentication failed for user "s3cret"',
        code: "28P01",
        detail: "d",
        hint: "h",
      }),
      ["s3cret"],
    )),
    [
      "connect",
      "password authentication failed for user [redacted] (d) Hint: h [SQLSTATE 28P01]",
    ],
  );
  assertEquals(
    postgresError(failure({ code: "25006" }), []).kind,
    "read_only",
  );
  assertEquals(
    postgresError(failure({ code: "42P01" }), []).kind,
    "query",
  );
});

Deno.test("MySQL/MariaDB: error numbers and driver codes sort the failure; a connect timeout is said in dbport's words", () => {
  assertEquals(
    mysqlError(failure({ code: "ER_READ_ONLY", errno: 1792 }), []).kind,
    "read_only",
  );
  assertEquals(
    mysqlError(failure({ code: "ER_QUERY_TIMEOUT", errno: 3024 }), []).kind,
    "timeout",
  );
  const timeout = mysqlError(failure({ code: "ETIMEDOUT" }), []);
  assertEquals(timeout.kind, "connect_timeout");
  assertEquals(timeout.message.startsWith("the database did not answer"), true);
  assertEquals(
    seen(mysqlError(
      failure({ message: "You have an error", code: "ER_PARSE_ERROR" }),
      [],
    )),
    ["query", "You have an error [ER_PARSE_ERROR]"],
  );
});

Deno.test("SQLite/libSQL: extended codes belong to their primary code; an unreachable remote is a connection problem", () => {
  assertEquals(
    sqliteError(failure({ code: "SQLITE_READONLY_DBMOVED" }), []).kind,
    "read_only",
  );
  assertEquals(
    sqliteError(failure({ code: "SQLITE_CANTOPEN_ISDIR" }), []).kind,
    "connect",
  );
  assertEquals(
    sqliteError(failure({ message: "fetch failed", code: "" }), []).kind,
    "connect",
  );
  assertEquals(
    seen(
      sqliteError(
        failure({ message: "no such table: t", code: "SQLITE_ERROR" }),
        [],
      ),
    ),
    ["query", "no such table: t [SQLITE_ERROR]"],
  );
});
