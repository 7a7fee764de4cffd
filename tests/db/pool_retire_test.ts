/**
 * A driver whose call lost its database leaves the pool at once (the next
 * call opens a fresh one) but is closed only once its other calls settled:
 * they are its own to answer — a PostgreSQL driver replaces the pool of a
 * lost session and asks its waiting reads again of the new one — and closing
 * it under them failed them `not_connected` though nothing of them had run
 * (the stop-47 outsider: 6 of ~100 reads answered with one session ended
 * every 150 ms; through MCP in tests/e2e/session_lost_mcp_test.ts).
 */

import { assertEquals, assertRejects } from "@std/assert";
import { DbError } from "../../lib/db/errors.ts";
import { DriverPool } from "../../lib/db/pool.ts";
import type { QueryOptions, QueryResult } from "../../lib/db/types.ts";
import { FakeDriver } from "../_fake_driver.ts";

/** A driver whose reads wait until the test settles them. */
class HeldDriver extends FakeDriver {
  closes = 0;
  readonly held: {
    sql: string;
    answer: () => void;
    fail: (error: Error) => void;
  }[] = [];

  override query(sql: string, _options: QueryOptions): Promise<QueryResult> {
    return new Promise((resolve, reject) => {
      this.held.push({
        sql,
        answer: () => resolve(this.result),
        fail: reject,
      });
    });
  }

  override close(): Promise<void> {
    this.closes++;
    return Promise.resolve();
  }
}

const OPTIONS: QueryOptions = {
  mode: "read",
  signal: new AbortController().signal,
  timeoutMs: 10_000,
  maxRows: 10,
  maxBytes: 1_000_000,
  maxCellChars: 1_000,
};

/** Calls pass the session share's gate a tick later. */
const tick = () => new Promise((resolve) => setTimeout(resolve, 0));

const lost = () =>
  new DbError("connect", "the database session closed during the read");

Deno.test("DriverPool: a driver that lost its database is closed once its other calls settled, not under them", async () => {
  const opened: HeldDriver[] = [];
  const pool = new DriverPool({
    open: () => {
      const driver = new HeldDriver("postgres");
      opened.push(driver);
      return driver;
    },
  });
  const spec = {
    id: "c1",
    engine: "postgres" as const,
    url: "postgres://x@127.0.0.1/db",
  };
  try {
    const first = pool.get(spec, "alice").query("select 1", OPTIONS);
    const second = pool.get(spec, "bob").query("select 2", OPTIONS);
    const third = pool.get(spec, "carol").query("select 3", OPTIONS);
    await tick();
    const old = opened[0]!;
    assertEquals(old.held.length, 3);
    old.held[0]!.fail(lost());
    await assertRejects(() => first, DbError, "closed during the read");
    assertEquals(old.closes, 0, "closed while two calls still ran on it");
    // The next call opens a fresh driver; the old one's calls go on.
    const next = pool.get(spec, "dave").query("select 4", OPTIONS);
    assertEquals(opened.length, 2, "a fresh driver for the next call");
    await tick();
    opened[1]!.held[0]!.answer();
    assertEquals((await next).rows, [[1]]);
    old.held[1]!.answer();
    assertEquals((await second).rows, [[1]]);
    assertEquals(old.closes, 0, "closed while a call still ran on it");
    old.held[2]!.fail(new DbError("query", "relation missing"));
    await assertRejects(() => third, DbError, "relation missing");
    assertEquals(old.closes, 1, "closed once its last call settled");
    assertEquals(opened[1]!.closes, 0);
  } finally {
    await pool.closeAll();
  }
  assertEquals(opened.map((driver) => driver.closes), [1, 1]);
});

Deno.test("DriverPool: a driver that lost its database with no other call is closed at once", async () => {
  const opened: HeldDriver[] = [];
  const pool = new DriverPool({
    open: () => {
      const driver = new HeldDriver("postgres");
      opened.push(driver);
      return driver;
    },
  });
  const spec = { id: "c1", engine: "postgres" as const, url: "postgres://x/" };
  try {
    const only = pool.get(spec).query("select 1", OPTIONS);
    await tick();
    opened[0]!.held[0]!.fail(lost());
    await assertRejects(() => only, DbError);
    assertEquals(opened[0]!.closes, 1);
  } finally {
    await pool.closeAll();
  }
});

Deno.test("DriverPool: closing the pool, or removing the connection, closes a driver still waiting for its calls", async () => {
  for (const how of ["closeAll", "retain"] as const) {
    const opened: HeldDriver[] = [];
    const pool = new DriverPool({
      open: () => {
        const driver = new HeldDriver("postgres");
        opened.push(driver);
        return driver;
      },
    });
    const spec = { id: "c1", engine: "postgres" as const, url: "pg://x/" };
    const failed = pool.get(spec, "a").query("select 1", OPTIONS);
    const running = pool.get(spec, "b").query("select 2", OPTIONS)
      .catch((error) => error);
    await tick();
    opened[0]!.held[0]!.fail(lost());
    await assertRejects(() => failed, DbError);
    assertEquals(opened[0]!.closes, 0);
    if (how === "closeAll") await pool.closeAll();
    else await pool.retain(new Set(["other"]));
    assertEquals(opened[0]!.closes, 1, how);
    // The call's own settling later closes nothing twice.
    opened[0]!.held[1]!.answer();
    await running;
    assertEquals(opened[0]!.closes, 1, `${how}: closed once`);
    await pool.closeAll();
  }
});

Deno.test("DriverPool: a view held across another call's lost database sends its next call to the connection's driver now, never to the lost one", async () => {
  const opened: HeldDriver[] = [];
  const pool = new DriverPool({
    open: () => {
      const driver = new HeldDriver("postgres");
      opened.push(driver);
      return driver;
    },
  });
  const spec = { id: "c1", engine: "postgres" as const, url: "pg://x/" };
  try {
    // A tool call holds its view between its check and its statement.
    const held = pool.get(spec, "alice");
    const lostRead = pool.get(spec, "bob").query("select 1", OPTIONS);
    await tick();
    opened[0]!.held[0]!.fail(lost());
    await assertRejects(() => lostRead, DbError);
    assertEquals(opened[0]!.closes, 1, "nothing ran on it: closed");
    const next = held.query("select 2", OPTIONS);
    await tick();
    assertEquals(opened.length, 2, "a fresh driver");
    assertEquals(opened[1]!.held.map((call) => call.sql), ["select 2"]);
    opened[1]!.held[0]!.answer();
    assertEquals((await next).rows, [[1]]);
    // Lost, then edited: the held view's call is not sent to the edited
    // connection's driver.
    pool.get({ ...spec, url: "pg://y/" }, "carol");
    const again = pool.get(spec, "dave"); // the edit undone: a third driver
    assertEquals(opened.length, 4);
    const lostAgain = again.query("select 3", OPTIONS);
    await tick();
    opened[3]!.held[0]!.fail(lost());
    await assertRejects(() => lostAgain, DbError);
    pool.get({ ...spec, url: "pg://z/" }, "erin");
    const stale = again.query("select 4", OPTIONS);
    await tick();
    assertEquals(opened.length, 5);
    assertEquals(opened[4]!.held.length, 0, "not sent to the edited one");
    assertEquals(opened[3]!.held.map((call) => call.sql), [
      "select 3",
      "select 4",
    ]);
    opened[3]!.held[1]!.fail(new DbError("connect", "closed"));
    await assertRejects(() => stale, DbError);
  } finally {
    await pool.closeAll();
  }
});
