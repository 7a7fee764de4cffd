/**
 * MariaDB credential catalogs (lib/db/mysql/mysql_credentials.ts): `mysql.user`
 * and `mysql.global_priv` are denied to AI clients in any quoting or case,
 * through views and views of views, for reads and writes alike; everything
 * else (USER(), a column named user) is not.
 */

import { assertEquals, assertMatch } from "@std/assert";
import { checkStatement } from "../../lib/db/sql/statement_check.ts";
import { openMysql } from "../../lib/db/mysql/mysql.ts";
import {
  credentialUse,
  RESERVED_WORDS,
} from "../../lib/db/mysql/mysql_credentials.ts";
import { needs, openFixture } from "../_db.ts";

const OPTIONS = { signal: new AbortController().signal, timeoutMs: 20_000 };

Deno.test(
  "mysql: mysql.user and mysql.global_priv are denied, however named and through views",
  needs("mysql"),
  async () => {
    await using fixture = await openFixture("mysql");
    for (
      const statement of [
        "create view v_users as select User, authentication_string from mysql.user",
        "create view v_over as select * from v_users",
        "create view v_priv as select * from `mysql`.`global_priv`",
        "create table people (id int, user varchar(80))",
      ]
    ) await fixture.admin(statement);
    const driver = openMysql({ url: fixture.url, secrets: [] });
    try {
      for (
        const sql of [
          "select User, authentication_string from mysql.user",
          "SELECT * FROM `MySQL`.`User`",
          "select * from mysql . global_priv",
          "select Priv from `mysql`.`global_priv` where User = 'root'",
          "select * from v_users",
          "select * from v_over",
          "select * from v_priv",
          "select count(*) from authors where exists (select 1 from mysql.user)",
          "insert into people (id, user) select 1, User from mysql.user",
        ]
      ) {
        const checked = await checkStatement(sql, driver, OPTIONS);
        assertEquals(checked.ok, false, sql);
        if (!checked.ok) {
          assertEquals(checked.code, "denied", sql);
          assertMatch(checked.message, /credential catalog/, sql);
        }
      }
      for (
        const sql of [
          "select user(), current_user()",
          "select id, user from people",
          "select * from authors",
          "select * from book_titles",
        ]
      ) {
        const checked = await checkStatement(sql, driver, OPTIONS);
        assertEquals(checked.ok, true, `${sql}: ${JSON.stringify(checked)}`);
      }
    } finally {
      await driver.close();
    }
  },
);

Deno.test("mysql: a statement of keywords and literals costs no view look-up; any name does", async () => {
  const asked: string[][] = [];
  const views = (names: string[]) => {
    asked.push(names);
    return Promise.resolve([]);
  };
  for (
    const sql of [
      "select 1",
      "SELECT 1, NULL IS NULL, TRUE AND NOT FALSE",
      "select current_date, current_user, 2 div 1 from dual where 1 = 1",
    ]
  ) {
    assertEquals(await credentialUse(sql, "app", views), null, sql);
  }
  // DUAL is no keyword of the list: a name, looked up.
  assertEquals(asked, [["dual"]]);
  asked.length = 0;
  await credentialUse("select * from `select`, app.from, x", "app", views);
  assertEquals(asked.map((names) => names.sort()), [["from", "select", "x"]]);
});

Deno.test(
  "mysql: every word the view look-up skips is reserved on the server; quoted or qualified, it names a view that is followed",
  needs("mysql"),
  async () => {
    await using fixture = await openFixture("mysql");
    for (const word of RESERVED_WORDS) {
      const error = await fixture.admin(`select 1 from ${word}`).then(
        () => null,
        (error: { errno?: number }) => error,
      );
      assertEquals(error?.errno, 1064, `${word} can name a table unquoted`);
    }
    await fixture.admin(
      "create view `select` as select User from mysql.user",
    );
    const driver = openMysql({ url: fixture.url, secrets: [] });
    try {
      for (
        const sql of [
          "select * from `select`",
          `select * from ${fixture.schema}.select`,
        ]
      ) {
        const checked = await checkStatement(sql, driver, OPTIONS);
        assertEquals(checked.ok ? "ran" : checked.code, "denied", sql);
      }
    } finally {
      await driver.close();
    }
  },
);
