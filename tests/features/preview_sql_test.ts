/**
 * The SQL side of write previews (preview_sql.ts) for every engine (issue
 * 34): the statement made to return its rows, what a rollback cannot undo,
 * the target and dropped tables as written, a plan's row estimate.
 */
import { assertEquals } from "@std/assert";
import { type Classified, classify } from "../../lib/db/classifier.ts";
import type { Engine } from "../../lib/db/engines.ts";
import {
  droppedTables,
  estimatedRows,
  fromCounted,
  outsideEffect,
  SAMPLE_ROWS,
  targetTable,
  withReturning,
} from "../../lib/features/tools/preview_sql.ts";

function statement(sql: string, engine: Engine = "postgres"): Classified {
  const classified = classify(sql, engine);
  if (!classified.ok) throw new Error(classified.message);
  return classified;
}

const returning = (sql: string, engine: Engine) =>
  withReturning(statement(sql, engine), engine);

for (
  const sql of [
    "INSERT INTO t VALUES (1)",
    "UPDATE t SET a = 1",
    "DELETE FROM t WHERE a = 1",
  ]
) {
  Deno.test(`withReturning(sqlite: ${sql}) appends RETURNING * on its own line`, () => {
    assertEquals(returning(sql, "sqlite"), `${sql}\nRETURNING *`);
  });
  Deno.test(`withReturning(postgres: ${sql}) wraps it in a CTE counting every row and returning ${SAMPLE_ROWS}`, () => {
    assertEquals(
      returning(sql, "postgres"),
      `WITH dbport_changed AS (${sql}\nRETURNING *)
SELECT (SELECT count(*) FROM dbport_changed) AS dbport_rows, *
  FROM dbport_changed LIMIT 5`,
    );
  });
}

Deno.test("withReturning(mysql) returns rows from INSERT and DELETE, not from UPDATE or REPLACE", () => {
  assertEquals(
    returning("INSERT INTO t VALUES (1)", "mysql"),
    "INSERT INTO t VALUES (1)\nRETURNING *",
  );
  assertEquals(
    returning("DELETE FROM t WHERE a = 1", "mysql"),
    "DELETE FROM t WHERE a = 1\nRETURNING *",
  );
  assertEquals(returning("UPDATE t SET a = 1", "mysql"), null);
  assertEquals(returning("REPLACE INTO t VALUES (1)", "mysql"), null);
});

Deno.test("withReturning(mysql: INSERT … ON DUPLICATE KEY UPDATE) gets no RETURNING (its count is two per replaced row)", () => {
  assertEquals(
    returning(
      "INSERT INTO t VALUES (1) ON DUPLICATE KEY UPDATE a = 2",
      "mysql",
    ),
    null,
  );
  assertEquals(
    returning(
      "insert into t values (1) on\n  duplicate key update a = 2",
      "mysql",
    ),
    null,
  );
});

Deno.test("withReturning() leaves a statement that already says RETURNING alone, but not a table named returning_log", () => {
  for (const engine of ["postgres", "sqlite", "mysql"] as const) {
    assertEquals(returning("DELETE FROM t RETURNING id", engine), null);
  }
  assertEquals(
    returning("INSERT INTO returning_log VALUES (1)", "sqlite"),
    "INSERT INTO returning_log VALUES (1)\nRETURNING *",
  );
});

Deno.test("withReturning() answers null for what is not INSERT, UPDATE or DELETE (SELECT, CREATE) on every engine", () => {
  for (const engine of ["postgres", "sqlite", "mysql"] as const) {
    assertEquals(returning("SELECT 1", engine), null);
    assertEquals(returning("CREATE TABLE t (a int)", engine), null);
  }
});

Deno.test("fromCounted() takes the count from the first column and drops that column", () => {
  const result = fromCounted({
    columns: ["dbport_rows", "a"],
    rows: [[12, "x"], [12, "y"]],
    rowsAffected: 2,
    truncated: false,
    truncation: { rows: false, bytes: false, cells: 0 },
  });
  assertEquals(result.rowsAffected, 12);
  assertEquals(result.columns, ["a"]);
  assertEquals(result.rows, [["x"], ["y"]]);
  assertEquals(
    fromCounted({ ...result, columns: ["dbport_rows"], rows: [] }).rowsAffected,
    0,
  );
});

Deno.test("outsideEffect(mysql): DDL commits at once; INSERT, UPDATE, DELETE and REPLACE can be rolled back", () => {
  assertEquals(
    outsideEffect(statement("CREATE TABLE t (a int)", "mysql"), "mysql"),
    "MySQL/MariaDB commits this statement at once, so it cannot be tried and rolled back",
  );
  for (
    const sql of [
      "INSERT INTO t VALUES (1)",
      "UPDATE t SET a = 1 WHERE b = 1",
      "DELETE FROM t WHERE b = 1",
      "REPLACE INTO t VALUES (1)",
    ]
  ) {
    assertEquals(outsideEffect(statement(sql, "mysql"), "mysql"), null, sql);
  }
  assertEquals(
    outsideEffect(statement("CREATE TABLE t (a int)"), "postgres"),
    null,
  );
});

Deno.test("outsideEffect() names a reach as what a rollback cannot undo", () => {
  const reaching = { ...statement("SELECT 1"), reach: "reads files" };
  assertEquals(
    outsideEffect(reaching, "postgres"),
    "it reads files, which a rollback cannot undo",
  );
});

for (
  const name of [
    "nextval",
    "setval",
    "pg_advisory_lock",
    "pg_advisory_lock_shared",
    "pg_advisory_xact_lock",
    "pg_try_advisory_lock",
    "dblink_exec",
    "pg_terminate_backend",
    "pg_cancel_backend",
    "GET_LOCK",
    "release_lock",
    "sleep",
    "pg_sleep",
  ]
) {
  Deno.test(`outsideEffect(UPDATE t SET a = ${name}(1)) says it calls ${name}()`, () => {
    assertEquals(
      outsideEffect(
        // reach: null, so the function list answers (not the classifier's reach)
        {
          ...statement(`UPDATE t SET a = ${name} (1) WHERE b = 1`),
          reach: null,
        },
        "postgres",
      ),
      `it calls ${name}(), whose effect a rollback does not undo`,
    );
  });
}

Deno.test("outsideEffect() ignores a name that only contains one: my_nextval(), nextvalue", () => {
  assertEquals(
    outsideEffect(
      statement("UPDATE t SET a = my_nextval(1) WHERE b = 1"),
      "postgres",
    ),
    null,
  );
  assertEquals(
    outsideEffect(
      statement("UPDATE t SET nextvalue = 1 WHERE b = 1"),
      "postgres",
    ),
    null,
  );
});

Deno.test("estimatedRows(): PostgreSQL's ModifyTable input rows, as JSON text or parsed", () => {
  const plan = [{
    Plan: {
      "Node Type": "ModifyTable",
      "Plan Rows": 0,
      Plans: [{ "Plan Rows": 42 }],
    },
  }];
  assertEquals(estimatedRows(plan), 42);
  assertEquals(estimatedRows(JSON.stringify(plan)), 42);
  assertEquals(estimatedRows({ Plan: { "Plan Rows": 7 } }), 7);
  assertEquals(
    estimatedRows([{ Plan: { Plans: [{ "Plan Rows": "many" }] } }]),
    null,
  );
});

Deno.test("estimatedRows(): MySQL's query_block.table.rows, else rows_examined_per_scan", () => {
  assertEquals(estimatedRows({ query_block: { table: { rows: 9 } } }), 9);
  assertEquals(
    estimatedRows([{ query_block: { table: { rows_examined_per_scan: 3 } } }]),
    3,
  );
  assertEquals(estimatedRows({ query_block: { table: {} } }), null);
  assertEquals(estimatedRows({ query_block: {} }), null);
});

Deno.test("estimatedRows(): null for no plan, bad JSON text, a number", () => {
  assertEquals(estimatedRows(null), null);
  assertEquals(estimatedRows("not json"), null);
  assertEquals(estimatedRows(5), null);
  assertEquals(estimatedRows([]), null);
  assertEquals(estimatedRows({ Plan: null }), null);
});

for (
  const [sql, table] of [
    ["UPDATE t SET a = 1", "t"],
    ["update ONLY s.t set a = 1", "s.t"],
    ["DELETE FROM s . t WHERE a = 1", "s.t"],
    ["DELETE FROM ONLY t", "t"],
    ["INSERT INTO db.s.t VALUES (1)", "db.s.t"],
    ["INSERT IGNORE INTO t VALUES (1)", "t"],
    ["REPLACE INTO t VALUES (1)", "t"],
    ['UPDATE "My Table" SET a = 1', '"My Table"'],
    [
      'UPDATE "my schema" . "My ""Quoted"" Table" SET a = 1',
      '"my schema"."My ""Quoted"" Table"',
    ],
    ["INSERT INTO `my db`.`my table` VALUES (1)", "`my db`.`my table`"],
    ["SELECT 1", null],
  ] as const
) {
  Deno.test(`targetTable(${sql}) is ${JSON.stringify(table)}`, () => {
    assertEquals(targetTable(statement(sql)), table);
  });
}

for (
  const [sql, dropped] of [
    ["DROP TABLE a, s.b", { tables: ["a", "s.b"], ifExists: false }],
    ["DROP TABLE IF EXISTS a CASCADE", { tables: ["a"], ifExists: true }],
    ["DROP TABLE a RESTRICT", { tables: ["a"], ifExists: false }],
    ["TRUNCATE a", { tables: ["a"], ifExists: false }],
    ["TRUNCATE TABLE ONLY a RESTART IDENTITY", {
      tables: ["a"],
      ifExists: false,
    }],
    ["TRUNCATE a, b CONTINUE IDENTITY CASCADE", {
      tables: ["a", "b"],
      ifExists: false,
    }],
    ['DROP TABLE "My Table"', { tables: ['"My Table"'], ifExists: false }],
    ["DROP TABLE a.b.c.d", null],
    ["DROP VIEW v", null],
  ] as [string, { tables: string[]; ifExists: boolean } | null][]
) {
  Deno.test(`droppedTables(${sql}) is ${JSON.stringify(dropped)}`, () => {
    assertEquals(droppedTables(statement(sql)), dropped);
  });
}
