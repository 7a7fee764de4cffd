/**
 * MySQL/MariaDB reads given back without RESET CONNECTION (issue 38): only a
 * plain SELECT, by allowlist (lib/db/mysql_plain.ts); anything that could
 * leave state on the session is still reset, and nothing a read set reaches
 * the next read.
 */

import { assertEquals } from "@std/assert";
import { openMysql } from "../../lib/db/mysql.ts";
import { leavesNoState } from "../../lib/db/mysql_plain.ts";
import { needs, openFixture, READ_OPTIONS } from "../_db.ts";

Deno.test("mysql: which reads are plain", () => {
  for (
    const text of [
      "select 1",
      "SELECT a, count(*) FROM t WHERE b IN (1, 2) GROUP BY a",
      "select * from (select 1 as x) d where exists (select 1)",
      "select concat(name, '@') from t",
    ]
  ) assertEquals(leavesNoState(text), true, text);
  for (
    const text of [
      "select @x := 1",
      "select @@session.sql_mode",
      "select 1 into @x",
      "select * from t for update",
      "select * from t lock in share mode",
      "select get_lock('a', 1)",
      "select last_insert_id(5)",
      "select nextval(s)",
      "select my_function(1)",
      "show tables",
      "with q as (select 1) select * from q",
      "select 1; select 2",
      "select /*!50000 sleep(1) */ 1",
    ]
  ) assertEquals(leavesNoState(text), false, text);
});

Deno.test({
  name:
    "mysql: a read's user variable never reaches the next read; plain reads are served",
  ...needs("mysql"),
  async fn() {
    await using fixture = await openFixture("mysql");
    const driver = openMysql({ url: fixture.url, secrets: [] });
    try {
      for (let i = 0; i < 3; i++) {
        assertEquals(
          (await driver.query("select @x := 42 as x", READ_OPTIONS)).rows,
          [[42]],
        );
        assertEquals(
          (await driver.query("select 1 as one", READ_OPTIONS)).rows,
          [[1]],
        );
        assertEquals(
          (await driver.query("select @x as x", READ_OPTIONS)).rows,
          [[null]],
        );
      }
      // A failed plain read rolls back and its session serves the next one.
      await driver.query("select nope from authors", READ_OPTIONS).catch(
        () => {},
      );
      assertEquals(
        (await driver.query("select count(*) as n from authors", READ_OPTIONS))
          .rows.length,
        1,
      );
    } finally {
      await driver.close();
    }
  },
});
