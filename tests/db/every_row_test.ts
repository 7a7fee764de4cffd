/**
 * The judgment of "every row" from the engine's counts (lib/db/every_row.ts):
 * a table's rows before the write, told from its rows after and what the
 * write inserted, updated and deleted; the statement shapes MariaDB and
 * SQLite are judged by; the bounded counts.
 *
 * @module
 */

import { assertEquals } from "@std/assert";
import {
  boundedCount,
  everyRowReason,
  judgeStatement,
  judgeTouch,
  judgeWritten,
  mayCoverTable,
  REPLACING_CAP,
  rowsToCount,
  startJudgment,
  statementJudgment,
  type Touch,
} from "../../lib/db/every_row.ts";
import {
  bodyWrites,
  effectsRoot,
  setColumns,
  setsNew,
} from "../../lib/db/every_row_effects.ts";

const touch = (inserted: number, updated: number, deleted: number): Touch => ({
  table: "t",
  inserted,
  updated,
  deleted,
});

Deno.test("judgeTouch: every row deleted or changed of a table of two or more rows", () => {
  // Three rows deleted, none left.
  assertEquals(judgeTouch(touch(0, 0, 3), 0), {
    table: "t",
    rows: 3,
    how: "deleted",
  });
  // Three updated of three.
  assertEquals(judgeTouch(touch(0, 3, 0), 3), {
    table: "t",
    rows: 3,
    how: "changed",
  });
  // Rewritten: three deleted, three inserted.
  assertEquals(judgeTouch(touch(3, 0, 3), 3)?.rows, 3);
  // An upsert that updated two and added one: both old rows changed.
  assertEquals(judgeTouch(touch(1, 2, 0), 3)?.rows, 2);
});

Deno.test("judgeTouch: a row left untouched, or fewer than two rows, is no whole-table change", () => {
  // Two of three deleted: one left.
  assertEquals(judgeTouch(touch(0, 0, 2), 1), null);
  // Two of three updated (counted up to rowsToCount = 3: three rows now).
  assertEquals(judgeTouch(touch(0, 2, 0), 3), null);
  // The count stopped at its limit: more rows than the write put in.
  assertEquals(judgeTouch(touch(0, 2, 0), rowsToCount(touch(0, 2, 0))), null);
  // A table of one row.
  assertEquals(judgeTouch(touch(0, 0, 1), 0), null);
  assertEquals(judgeTouch(touch(0, 1, 0), 1), null);
  // New rows only.
  assertEquals(judgeTouch(touch(5, 0, 0), 5), null);
  // Inserted, and one changed: fewer than two touched.
  assertEquals(judgeTouch(touch(3, 1, 0), 3), null);
});

Deno.test("judgeTouch: rows inserted and deleted or changed by one write, of a table that looks empty, are asked about", () => {
  const unjudged = (touched: number) => ({
    table: null,
    rows: null,
    how: "unjudged" as const,
    why:
      `it inserted rows into t and deleted or changed ${touched}: whether they were every row it had cannot be told`,
  });
  // Inserted and deleted again: the table was empty, or the inserts were
  // undone (a rolled-back subtransaction still counts them) and three rows
  // it had were deleted (outsider stop 61).
  assertEquals(judgeTouch(touch(3, 0, 3), 0), unjudged(3));
  assertEquals(judgeTouch(touch(10, 0, 3), 0), unjudged(3));
  // Inserted then updated.
  assertEquals(judgeTouch(touch(2, 2, 0), 2), unjudged(2));
  // Exactly two touched, rows before counted as one.
  assertEquals(judgeTouch(touch(1, 0, 2), 0), unjudged(2));
  // No row inserted: a table of one row stays a table of one row.
  assertEquals(judgeTouch(touch(0, 0, 1), 0), null);
});

Deno.test("mayCoverTable and rowsToCount: what is worth counting, and how far", () => {
  assertEquals(mayCoverTable(touch(9, 0, 1)), false);
  assertEquals(mayCoverTable(touch(0, 1, 1)), true);
  assertEquals(mayCoverTable(touch(0, 2, 0)), true);
  assertEquals(mayCoverTable(touch(0, 0, 2)), true);
  assertEquals(rowsToCount(touch(0, 0, 7)), 1);
  assertEquals(rowsToCount(touch(2, 3, 4)), 6);
});

Deno.test("judgeWritten: an upsert or REPLACE that left no more rows than it wrote, in a table of two or more", () => {
  assertEquals(judgeWritten("t", 2, 3, 3), {
    table: "t",
    rows: null,
    how: "changed",
  });
  // One REPLACEd row that took two old ones (two unique keys).
  assertEquals(judgeWritten("t", 2, 1, 1)?.how, "changed");
  assertEquals(judgeWritten("t", 2, 3, 4), null);
  assertEquals(judgeWritten("t", 1, 3, 3), null);
  assertEquals(judgeWritten("t", 0, 3, 3), null);
});

Deno.test("statementJudgment: each shape's way of counting", () => {
  const of = (text: string, dialect: "mysql" | "sqlite") =>
    statementJudgment(text, dialect);
  assertEquals(of("delete from s.t where true", "mysql"), {
    kind: "delete",
    table: { schema: "s", name: "t" },
  });
  assertEquals(of("/* c */ update `t` set a = 1", "mysql"), {
    kind: "update",
    table: { schema: null, name: "t" },
  });
  assertEquals(of("insert or replace into t select * from t", "sqlite"), {
    kind: "written",
    table: { schema: null, name: "t" },
    replaces: true,
  });
  assertEquals(of("replace into t (select * from u)", "mysql").kind, "written");
  assertEquals(
    of("insert into t select * from u on duplicate key update a = 1", "mysql")
      .kind,
    "written",
  );
  // An upsert or REPLACE of VALUES may overwrite every row too; on SQLite
  // any INSERT (a key may say ON CONFLICT REPLACE); on MariaDB a plain
  // INSERT adds rows only. DDL, and a CTE or function named replace, are no
  // write of rows.
  assertEquals(
    of("insert into t values (1) on conflict do update set a = 1", "sqlite")
      .kind,
    "written",
  );
  assertEquals(of("replace t values (1), (2)", "mysql").kind, "written");
  assertEquals(of("insert into t select * from u", "sqlite").kind, "written");
  assertEquals(of("insert into t select * from u", "mysql").kind, "none");
  assertEquals(of("create table t (a int)", "mysql").kind, "none");
  assertEquals(
    of(
      "create trigger x after delete on t for each row delete from u",
      "sqlite",
    )
      .kind,
    "none",
  );
  assertEquals(
    of("with replace as (select 1) delete from w where true", "sqlite"),
    { kind: "delete", table: { schema: null, name: "w" } },
  );
  // SQLite has no stored code; MariaDB's SELECT, CALL, DO, SET may run it.
  assertEquals(of("select f()", "sqlite").kind, "none");
  for (
    const text of [
      "select f()",
      "call p()",
      "do f()",
      "set @a = f()",
      "execute s",
      "with x as (select f()) select * from x",
      "values (f())",
    ]
  ) {
    assertEquals(of(text, "mysql").kind, "unjudged", text);
  }
  assertEquals(of("delete t from t join u on true", "mysql").kind, "unjudged");
  assertEquals(of("update t, u set t.a = 1", "mysql").kind, "unjudged");
});

Deno.test("boundedCount: quoted the engine's way, limited", () => {
  assertEquals(
    boundedCount({ schema: "a`b", name: "t" }, 3, "mysql"),
    "SELECT count(*) AS dbport_n FROM (SELECT 1 FROM `a``b`.`t` LIMIT 3) dbport_rows",
  );
  assertEquals(
    boundedCount({ schema: null, name: 'x"y' }, 1, "sqlite"),
    'SELECT count(*) AS dbport_n FROM (SELECT 1 FROM "x""y" LIMIT 1) dbport_rows',
  );
});

Deno.test("judgeStatement and startJudgment: the counts asked for, and a count that fails is unjudged", async () => {
  const asked: number[] = [];
  const counter = (rows: number) => (limit: number) => {
    asked.push(limit);
    return Promise.resolve(Math.min(rows, limit));
  };
  const del = { kind: "delete" as const, table: { schema: null, name: "t" } };
  assertEquals(await judgeStatement(del, 3, null, counter(0)), [
    { table: "t", rows: 3, how: "deleted" },
  ]);
  assertEquals(asked, [1]);
  // One row deleted: not counted at all.
  assertEquals(await judgeStatement(del, 1, null, counter(0)), []);
  assertEquals(asked, [1]);
  const upd = { kind: "update" as const, table: { schema: "s", name: "t" } };
  assertEquals(await judgeStatement(upd, 4, null, counter(9)), []);
  assertEquals(asked, [1, 5]);
  assertEquals(await judgeStatement(upd, 4, null, counter(4)), [
    { table: "s.t", rows: 4, how: "changed" },
  ]);
  const failing = () => Promise.reject(new Error("permission denied"));
  assertEquals(await judgeStatement(upd, 4, null, failing), [{
    table: null,
    rows: null,
    how: "unjudged",
    why: "the rows of s.t could not be counted",
  }]);
  // A session that answers no number (MariaDB's sql_select_limit = 0), or
  // a number no count is.
  assertEquals(
    (await judgeStatement(upd, 4, null, () => Promise.resolve(-1)))[0]?.how,
    "unjudged",
  );
  assertEquals(
    (await judgeStatement(upd, 4, null, () => Promise.resolve(Number.NaN)))[0]
      ?.how,
    "unjudged",
  );
  // SQLite's UPDATE OR REPLACE: the rows before, counted first, and now.
  const replacing = {
    kind: "update" as const,
    table: { schema: null, name: "t" },
    replacing: true,
  };
  assertEquals(await judgeStatement(replacing, 3, 3, counter(1)), [
    { table: "t", rows: 3, how: "changed" },
  ]);
  assertEquals(await judgeStatement(replacing, 1, 3, counter(3)), []);
  assertEquals(
    await judgeStatement(replacing, 3, REPLACING_CAP, counter(1)),
    [],
  );
  // Tables of up to 100,000 rows are judged (docs/security.md), larger not.
  assertEquals(
    (await judgeStatement(replacing, 100_000, 100_000, counter(1)))[0]?.rows,
    100_000,
  );
  assertEquals(
    await judgeStatement(replacing, 100_001, 100_001, counter(1)),
    [],
  );
  assertEquals(
    statementJudgment("update or replace t set u = 1 where true", "sqlite"),
    replacing,
  );
  // Counted first: by its words (OR REPLACE), or a key the catalog says
  // replaces on conflict; a plain UPDATE of a plain table is not.
  for (
    const [sql, keyReplaces, counts] of [
      ["update or replace t set u = 1 where true", false, [REPLACING_CAP, 3]],
      ["update t set u = 1 where true", true, [REPLACING_CAP, 3]],
      ["update t set u = 1 where true", false, [4]],
    ] as const
  ) {
    const limits: number[] = [];
    const judge = await startJudgment(
      statementJudgment(sql, "sqlite"),
      (_table, limit) => {
        limits.push(limit);
        return Promise.resolve(Math.min(3, limit));
      },
      () => {},
      { replaces: () => Promise.resolve(keyReplaces) },
    );
    assertEquals((await judge(3))[0]?.how, "changed", sql);
    assertEquals(limits, [...counts], sql);
  }
  const written = {
    kind: "written" as const,
    table: { schema: null, name: "t" },
    replaces: false,
  };
  assertEquals(await judgeStatement(written, 3, 1, counter(3)), []);
  assertEquals(
    (await judgeStatement(written, 3, null, counter(3)))[0]?.how,
    "unjudged",
  );
  assertEquals(
    (await judgeStatement(written, 3, 2, counter(3)))[0]?.how,
    "changed",
  );
  // startJudgment counts an upsert's table before it runs, at most 2 rows.
  const limits: number[] = [];
  const told: unknown[] = [];
  const judge = await startJudgment(
    statementJudgment("replace into t select * from t", "mysql"),
    (table, limit) => {
      limits.push(limit);
      assertEquals(table, { schema: null, name: "t" });
      return Promise.resolve(Math.min(3, limit));
    },
    (found) => told.push(...found),
  );
  assertEquals(told, []);
  assertEquals(limits, [2]);
  assertEquals((await judge(3))[0]?.how, "changed");
  assertEquals(limits, [2, 4]);
  const none = await startJudgment(
    statementJudgment("create table t (a int)", "mysql"),
    () => {
      throw new Error("never counted");
    },
    (found) => told.push(...found),
  );
  assertEquals(await none(1), []);
  // What cannot be counted is told before anything runs; the catalog's
  // reasons too (a MyISAM table).
  const call = await startJudgment(
    statementJudgment("call p()", "mysql"),
    () => {
      throw new Error("never counted");
    },
    (found) => told.push(...found),
  );
  assertEquals(told, [{
    table: null,
    rows: null,
    how: "unjudged",
    why: "stored code it calls changes rows no count names",
  }]);
  assertEquals(await call(5), []);
  told.length = 0;
  await startJudgment(
    statementJudgment("delete from t where true", "mysql"),
    () => Promise.resolve(0),
    (found) => told.push(...found),
    { check: (table) => Promise.resolve(`${table.name} is a MyISAM table`) },
  );
  assertEquals(told, [{
    table: null,
    rows: null,
    how: "unjudged",
    why: "t is a MyISAM table",
  }]);
});

Deno.test("everyRowReason: what the user is told", () => {
  assertEquals(
    everyRowReason([
      { table: "t", rows: 3, how: "deleted" },
      { table: "u", rows: null, how: "changed" },
      { table: null, rows: null, how: "unjudged", why: "stored code" },
    ]),
    "it deletes every row of t (3 rows); it changes every row of u; dbport cannot count which rows it changes (stored code): tried and rolled back, not committed",
  );
});

Deno.test("a trigger body's writes: DELETE and INSERT targets by name; UPDATE, REPLACE, CALL and multi-table DELETE are not counted (lib/db/every_row_effects.ts)", () => {
  const read = (body: string) => bodyWrites(body, "mysql", "db");
  assertEquals(read("delete from t"), {
    deletes: [{ schema: "db", name: "t" }],
    inserts: [],
  });
  assertEquals(
    read("begin insert into `a`.audit values (new.id, now()); end"),
    { deletes: [], inserts: [{ schema: "a", name: "audit" }] },
  );
  assertEquals(
    read(
      "begin if new.id > 0 then delete low_priority from x where id = new.id; end if; end",
    ),
    { deletes: [{ schema: "db", name: "x" }], inserts: [] },
  );
  for (
    const body of [
      "update t set v = 1",
      "replace into t values (1)",
      "call p()",
      "delete t from t join u on t.id = u.id",
      "insert into t values (1) on duplicate key update v = 2",
    ]
  ) assertEquals(typeof read(body), "string", body);
  // REPLACE() the function, INSERT() the function: not writes.
  assertEquals(read("set new.v = replace(new.v, 'a', 'b')"), {
    deletes: [],
    inserts: [],
  });
});

Deno.test("an UPDATE's SET list is read for the columns it changes; an upsert's too (lib/db/every_row_effects.ts)", () => {
  assertEquals(
    setColumns("update t set id = 10, `v` = v + 1 where id = 1", "mysql"),
    ["id", "v"],
  );
  assertEquals(setColumns("update t set t.v = 5 where id = 1", "mysql"), ["v"]);
  assertEquals(
    setColumns(
      "insert into t values (1, 2) on duplicate key update v = 3",
      "mysql",
    ),
    ["v"],
  );
  assertEquals(
    setColumns(
      "insert into t values (1) on conflict (id) do update set v = excluded.v",
      "sqlite",
    ),
    ["v"],
  );
  assertEquals(setColumns("update t set (a, b) = (1, 2)", "sqlite"), null);
});

Deno.test("setColumns and setsNew: the statement's own SET, never a subquery's FOR UPDATE; a trigger that sets NEW's columns (outsider stop 62)", () => {
  assertEquals(
    setColumns(
      "update p set id = id + 100 where id = 1 and exists (select 1 from q for update)",
      "mysql",
    ),
    ["id"],
  );
  assertEquals(
    setColumns(
      "insert into p values (1, 2) on duplicate key update v = (select 1 from q for update)",
      "mysql",
    ),
    ["v"],
  );
  // Nothing read after the last UPDATE: a form not understood.
  assertEquals(setColumns("update p for update", "mysql"), null);
  assertEquals(setsNew("set new.id = new.id + 100"), true);
  assertEquals(setsNew("BEGIN SET @a = 1, NEW.v = 2; END"), true);
  assertEquals(
    setsNew("if new.id = 5 then insert into log values (1); end if"),
    false,
  );
  assertEquals(setsNew("insert into log values (new.id)"), false);
  // MariaDB takes a backquoted `new` for the NEW row (outsider stop 63).
  assertEquals(
    setsNew("lbl: begin set `new`.id = new.id + 100; end lbl"),
    true,
  );
});

Deno.test("effectsRoot: what a MariaDB or SQLite write sets off on its table, one reading for both (REPLACE and OR REPLACE delete the rows they conflict with)", () => {
  const t = { schema: null, name: "t" };
  for (const dialect of ["mysql", "sqlite"] as const) {
    assertEquals(effectsRoot("delete from t where id = 1", dialect), {
      table: t,
      rule: "DELETE",
      events: ["DELETE"],
      sets: null,
    });
    assertEquals(effectsRoot("update t set v = 1 where id = 2", dialect), {
      table: t,
      rule: "UPDATE",
      events: ["UPDATE"],
      sets: ["v"],
    });
    assertEquals(effectsRoot("replace into t values (1, 2)", dialect), {
      table: t,
      rule: "DELETE",
      events: ["INSERT", "DELETE"],
      sets: null,
    });
    assertEquals(effectsRoot("insert into t values (1)", dialect), {
      table: t,
      rule: null,
      events: ["INSERT"],
      sets: null,
    });
    assertEquals(effectsRoot("select 1", dialect), null);
  }
  assertEquals(
    effectsRoot(
      "insert into t values (1) on duplicate key update v = 2",
      "mysql",
    ),
    { table: t, rule: "UPDATE", events: ["INSERT", "UPDATE"], sets: ["v"] },
  );
  assertEquals(
    effectsRoot(
      "insert into t values (1) on conflict (id) do update set v = excluded.v",
      "sqlite",
    ),
    { table: t, rule: "UPDATE", events: ["INSERT", "UPDATE"], sets: ["v"] },
  );
  assertEquals(effectsRoot("update or replace t set u = 'x'", "sqlite"), {
    table: t,
    rule: "UPDATE",
    events: ["UPDATE", "DELETE"],
    sets: ["u"],
  });
  assertEquals(effectsRoot("insert or replace into t values (1)", "sqlite"), {
    table: t,
    rule: "DELETE",
    events: ["INSERT", "DELETE"],
    sets: null,
  });
  assertEquals(
    effectsRoot("delete t from t join u on t.id = u.id", "mysql"),
    null,
  );
});
