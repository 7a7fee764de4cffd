/**
 * The SQL side of write previews (preview_sql.ts) for every engine (issue
 * 34): what a rollback cannot undo,
 * the target and dropped tables as written, a plan's row estimate.
 */
import { assertEquals } from "@std/assert";
import { type Classified, classify } from "../../lib/db/sql/classifier.ts";
import type { Engine } from "../../lib/db/engines.ts";
import { DIALECTS } from "../../lib/db/dialect.ts";
import { mysqlWriteRows, postgresWriteRows } from "../../lib/db/explain.ts";
import {
  droppedTables,
  outsideEffect,
  targetTable,
} from "../../lib/features/tools/preview_sql.ts";

function statement(sql: string, engine: Engine = "postgres"): Classified {
  const classified = classify(sql, engine);
  if (!classified.ok) throw new Error(classified.message);
  return classified;
}

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

Deno.test("the PostgreSQL dialect's write estimate: ModifyTable's input rows, as JSON text or parsed", () => {
  const plan = [{
    Plan: {
      "Node Type": "ModifyTable",
      "Plan Rows": 0,
      Plans: [{ "Plan Rows": 42 }],
    },
  }];
  assertEquals(postgresWriteRows(plan), 42);
  assertEquals(postgresWriteRows(JSON.stringify(plan)), 42);
  assertEquals(postgresWriteRows({ Plan: { "Plan Rows": 7 } }), 7);
  assertEquals(
    postgresWriteRows([{ Plan: { Plans: [{ "Plan Rows": "many" }] } }]),
    null,
  );
});

Deno.test("the MySQL dialect's write estimate: query_block.table.rows, else rows_examined_per_scan", () => {
  assertEquals(mysqlWriteRows({ query_block: { table: { rows: 9 } } }), 9);
  assertEquals(
    mysqlWriteRows([{ query_block: { table: { rows_examined_per_scan: 3 } } }]),
    3,
  );
  assertEquals(mysqlWriteRows({ query_block: { table: {} } }), null);
  assertEquals(mysqlWriteRows({ query_block: {} }), null);
});

Deno.test("write estimates: null for no plan, bad JSON text, a number; SQLite asks for none", () => {
  for (const writeRows of [postgresWriteRows, mysqlWriteRows]) {
    assertEquals(writeRows(null), null);
    assertEquals(writeRows("not json"), null);
    assertEquals(writeRows(5), null);
    assertEquals(writeRows([]), null);
    assertEquals(writeRows({ Plan: null }), null);
  }
  assertEquals(DIALECTS.postgres.writeRows, postgresWriteRows);
  assertEquals(DIALECTS.mysql.writeRows, mysqlWriteRows);
  assertEquals(DIALECTS.sqlite.writeRows, null);
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
