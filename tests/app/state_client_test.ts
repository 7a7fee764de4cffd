/**
 * The state database's client waits for another process's write lock off
 * the event loop (lib/app/state_client.ts).
 */

import { assert, assertEquals, assertRejects } from "@std/assert";
import { StateClient } from "../../lib/app/state_client.ts";
import { holdWriteLock } from "../_sqlite_lock.ts";

/** The longest gap between ticks of a 10 ms interval while `work` runs. */
async function longestStall<T>(work: () => Promise<T>) {
  let last = performance.now();
  let longest = 0;
  const timer = setInterval(() => {
    const now = performance.now();
    longest = Math.max(longest, now - last);
    last = now;
  }, 10);
  try {
    const value = await work();
    // A loop blocked to the end never ticked: count the gap up to now.
    return { value, longest: Math.max(longest, performance.now() - last) };
  } finally {
    clearInterval(timer);
  }
}

Deno.test("a write waiting for another process's lock on the state database leaves the event loop free", async () => {
  const dir = await Deno.makeTempDir({ prefix: "dbport-state-" });
  const path = `${dir}/state.db`;
  const client = new StateClient(path, 5_000);
  try {
    await client.execute("PRAGMA journal_mode = WAL");
    await client.execute("create table t (x)");
    {
      await using _lock = await holdWriteLock(path, 1.5);
      const started = performance.now();
      const { longest } = await longestStall(() =>
        client.batch([{ sql: "insert into t values (?)", args: [1] }], "write")
      );
      const waited = performance.now() - started;
      assert(waited > 300, `the write did not wait: ${waited} ms`);
      assert(longest < 250, `the event loop stalled ${longest.toFixed(0)} ms`);
    }
    const [row] = (await client.execute("select count(*) as n from t")).rows;
    assertEquals(row?.n, 1);
  } finally {
    client.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("a write that cannot get the state database's lock in time fails as busy", async () => {
  const dir = await Deno.makeTempDir({ prefix: "dbport-state-" });
  const path = `${dir}/state.db`;
  const client = new StateClient(path, 300);
  try {
    await client.execute("PRAGMA journal_mode = WAL");
    await client.execute("create table t (x)");
    await using _lock = await holdWriteLock(path, 3);
    const { longest } = await longestStall(() =>
      assertRejects(
        () => client.execute({ sql: "insert into t values (?)", args: [1] }),
        Error,
        "locked",
      )
    );
    assert(longest < 250, `the event loop stalled ${longest.toFixed(0)} ms`);
  } finally {
    client.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("a log batch commits all or none, and leaves later writes synced", async () => {
  const dir = await Deno.makeTempDir({ prefix: "dbport-state-" });
  const client = new StateClient(`${dir}/state.db`, 1_000);
  const synchronous = async () =>
    (await client.execute("PRAGMA synchronous")).rows[0]?.synchronous;
  try {
    await client.execute("PRAGMA journal_mode = WAL");
    await client.execute("create table t (x unique)");
    const full = await synchronous();
    assertEquals(full, 2, "the connection syncs every COMMIT (FULL)");
    await client.batch([
      { sql: "insert into t values (?)", args: [1] },
      { sql: "insert into t values (?)", args: [2] },
    ], "log");
    // A failing log batch: the whole batch is rolled back.
    await assertRejects(() =>
      client.batch([
        { sql: "insert into t values (?)", args: [3] },
        { sql: "insert into t values (?)", args: [1] },
      ], "log")
    );
    const rows = (await client.execute("select x from t order by x")).rows;
    assertEquals(rows.map((row) => row.x), [1, 2]);
    assertEquals(await synchronous(), full, "FULL again after log batches");
    await client.batch(
      [{ sql: "insert into t values (?)", args: [4] }],
      "write",
    );
    assertEquals(await synchronous(), full);
  } finally {
    client.close();
    await Deno.remove(dir, { recursive: true });
  }
});
