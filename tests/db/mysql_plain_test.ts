/**
 * MySQL/MariaDB reads given back without RESET CONNECTION (issue 38): only a
 * plain SELECT, by allowlist (lib/db/mysql/mysql_plain.ts), which is one statement
 * and one round trip on the read-only session; anything that could leave
 * state on the session runs in a read-only transaction and is still reset,
 * and nothing a read set reaches the next read.
 */

import { assert, assertEquals } from "@std/assert";
import mysql from "mysql2";
import net from "node:net";
import type { Duplex } from "node:stream";
import { openMysql } from "../../lib/db/mysql/mysql.ts";
import { leavesNoState } from "../../lib/db/mysql/mysql_plain.ts";
import { setUp, simple } from "../../lib/db/mysql/mysql_session.ts";
import { needs, openFixture, READ_OPTIONS } from "../_db.ts";

/**
 * The commands a client sends, counted on the wire: each packet with
 * sequence number 0 starts one, its first byte names it (3: COM_QUERY,
 * 0x1f: COM_RESET_CONNECTION).
 */
function countingStream(url: string, seen: number[]): () => Duplex {
  const { hostname, port } = new URL(url);
  return () => {
    const socket = net.connect(Number(port || 3306), hostname);
    const write = socket.write.bind(socket) as (...args: unknown[]) => boolean;
    (socket as unknown as { write: unknown }).write = (
      chunk: Uint8Array,
      ...rest: unknown[]
    ) => {
      for (let at = 0; at + 4 < chunk.length;) {
        if (chunk[at + 3] === 0) seen.push(chunk[at + 4]!);
        at += 4 + (chunk[at]! | chunk[at + 1]! << 8 | chunk[at + 2]! << 16);
      }
      return write(chunk, ...rest);
    };
    return socket;
  };
}

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

Deno.test({
  name:
    "mysql: a plain read is one statement and one round trip; any other read runs in a read-only transaction and is reset",
  ...needs("mysql"),
  async fn() {
    await using fixture = await openFixture("mysql");
    const seen: number[] = [];
    const driver = openMysql({
      url: fixture.url,
      secrets: [],
      stream: countingStream(fixture.url, seen),
    });
    try {
      // The session opened and set up first.
      await driver.query("select 1", READ_OPTIONS);
      seen.length = 0;
      for (let i = 0; i < 5; i++) {
        assertEquals(
          (await driver.query("select count(*) from authors", READ_OPTIONS))
            .rows,
          [["2"]],
        );
      }
      assertEquals(seen, [3, 3, 3, 3, 3], "one COM_QUERY a plain read");
      // Bound: prepared, executed and closed before the session's next read.
      seen.length = 0;
      assertEquals(
        (await driver.query("select name from authors where id = ?", {
          ...READ_OPTIONS,
          params: [1],
        })).rows,
        [["Ada"]],
      );
      await driver.query("select 1", READ_OPTIONS);
      // (mysql2's unprepare sends COM_STMT_CLOSE twice: its cache closes
      // what it drops, and so does unprepare; the server ignores the second.)
      assertEquals(
        [...new Set(seen)],
        [0x16, 0x17, 0x19, 3],
        "prepared, executed, closed, then the next read",
      );
      seen.length = 0;
      await driver.query("select @y := 1", READ_OPTIONS);
      // A statement reading a table (it clears what the session's last
      // statement left: FOUND_ROWS(), the warning count), START TRANSACTION
      // READ ONLY, the read, RESET CONNECTION, the set-up.
      assertEquals(seen, [3, 3, 3, 0x1f, 3]);
    } finally {
      await driver.close();
    }
  },
});

Deno.test({
  name:
    "mysql: every pooled session is read-only and autocommits, so a plain read's own transaction is read-only and ends with it",
  ...needs("mysql"),
  async fn() {
    await using fixture = await openFixture("mysql");
    const driver = openMysql({ url: fixture.url, secrets: [] });
    try {
      for (let i = 0; i < 3; i++) {
        await driver.query("select 1", READ_OPTIONS);
        assertEquals(
          (await driver.query(
            "select @@session.tx_read_only as r, @@session.autocommit as a",
            READ_OPTIONS,
          )).rows,
          [["1", "1"]],
        );
      }
      // A row committed after a plain read is seen by the next: no
      // snapshot outlives the read on its session.
      const before = await driver.query(
        "select count(*) from authors",
        READ_OPTIONS,
      );
      await fixture.admin(
        "insert into authors (name) values ('Grace')",
      );
      const after = await driver.query(
        "select count(*) from authors",
        READ_OPTIONS,
      );
      assertEquals([before.rows, after.rows], [[["2"]], [["3"]]]);
    } finally {
      await driver.close();
    }
  },
});

Deno.test({
  name:
    "mysql: a session as set up refuses a write and DDL outside any transaction (the engine's wall under a plain read)",
  ...needs("mysql"),
  async fn() {
    await using fixture = await openFixture("mysql");
    const connection = mysql.createConnection({ uri: fixture.url });
    try {
      await new Promise<void>((resolve, reject) =>
        connection.connect((error) => error ? reject(error) : resolve())
      );
      await setUp(connection);
      for (
        const text of [
          "insert into authors (name) values ('Mallory')",
          "update authors set name = 'Mallory'",
          "create table m38_never (a int)",
        ]
      ) {
        const error = await simple(connection, text).then(
          () => null,
          (error: { errno?: number }) => error,
        );
        assert(error !== null, `${text} ran on a read-only session`);
        assertEquals(error.errno, 1792, text);
      }
      assertEquals(
        await fixture.admin("select count(*) as n from authors"),
        [{ n: 2 }],
      );
    } finally {
      connection.destroy();
    }
  },
});
