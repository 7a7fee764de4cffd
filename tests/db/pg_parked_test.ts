/**
 * Wired PostgreSQL sessions parked between reads (lib/db/postgres/pg_parked.ts):
 * reads one after another take the session the last one left, with no
 * marker through postgres.js; a write of postgres.js's own path still gets
 * a session at once; parked sessions go back to postgres.js when unused;
 * one ended by the server while parked costs the next read nothing.
 */

import { assert, assertEquals } from "@std/assert";
import postgres from "postgres";
import { PARK_MS, setParking } from "../../lib/db/postgres/pg_parked.ts";
import { wireWrites } from "../../lib/db/postgres/pg_wire.ts";
import type { Driver } from "../../lib/db/types.ts";
import { ownPostgresDriver } from "../_pg_driver.ts";
import { needs, openFixture, READ_OPTIONS } from "../_db.ts";
import { waitUntil } from "../_wait.ts";

/** A driver whose sessions carry an application_name of their own. */
function ownDriver(url: string): { driver: Driver; app: string } {
  return ownPostgresDriver(url, "dbport_park");
}

const WRITE_OPTIONS = { ...READ_OPTIONS, mode: "write" as const };

/** `fn` with parking on (as by default: `DBPORT_PG_PARK=0` turns it off). */
function parked(fn: () => Promise<void>): () => Promise<void> {
  return async () => {
    setParking(true);
    try {
      await fn();
    } finally {
      setParking(null);
    }
  };
}

Deno.test({
  name:
    "postgres parked sessions: reads one after another reuse one session with no marker through postgres.js",
  ...needs("postgres"),
  fn: parked(async () => {
    await using fixture = await openFixture("postgres");
    const { driver, app } = ownDriver(fixture.url);
    const admin = postgres(fixture.url, { max: 1, onnotice: () => {} });
    try {
      await driver.query("select 1", READ_OPTIONS);
      const before = { ...wireWrites };
      for (let i = 0; i < 30; i++) {
        const result = await driver.query(`select ${i} as i`, READ_OPTIONS);
        assertEquals(result.rows, [[i]]);
      }
      assertEquals(wireWrites.markers - before.markers, 0, "no marker");
      assertEquals(wireWrites.reads - before.reads, 30);
      assertEquals(wireWrites.postgresJs - before.postgresJs, 0);
      const sessions = await admin`select count(*)::int as n
        from pg_stat_activity where application_name = ${app}`;
      assertEquals(sessions[0]?.n, 1, "one session served every read");
    } finally {
      await admin.end();
      await driver.close();
    }
  }),
});

Deno.test({
  name:
    "postgres parked sessions: a write right after reads gets a session, and reads after it are right",
  ...needs("postgres"),
  fn: parked(async () => {
    await using fixture = await openFixture("postgres");
    const { driver } = ownDriver(fixture.url);
    const table = `parked_${crypto.randomUUID().slice(0, 8)}`;
    try {
      await driver.query(`create table ${table} (x int)`, WRITE_OPTIONS);
      // Every session of the pool parked by concurrent reads, then writes
      // of postgres.js's path, interleaved with more reads.
      for (let round = 0; round < 5; round++) {
        const started = performance.now();
        const reads = Array.from(
          { length: 12 },
          (_, i) => driver.query(`select ${i} as i`, READ_OPTIONS),
        );
        const results = await Promise.all(reads);
        results.forEach((result, i) => assertEquals(result.rows, [[i]]));
        // More reads than sessions: the ones waiting for postgres.js get a
        // session as soon as one is free, not when a parked one times out.
        const took = performance.now() - started;
        assert(took < PARK_MS, `12 reads took ${Math.round(took)} ms`);
        const written = await driver.query(
          `insert into ${table} values (${round})`,
          WRITE_OPTIONS,
        );
        assertEquals(written.rowsAffected, 1);
      }
      const all = await driver.query(
        `select x from ${table} order by x`,
        READ_OPTIONS,
      );
      assertEquals(all.rows, [[0], [1], [2], [3], [4]]);
    } finally {
      await driver.query(`drop table if exists ${table}`, WRITE_OPTIONS)
        .catch(() => {});
      await driver.close();
    }
  }),
});

Deno.test({
  name:
    "postgres parked sessions: one ended by the server while parked costs the next read nothing",
  ...needs("postgres"),
  fn: parked(async () => {
    await using fixture = await openFixture("postgres");
    const { driver, app } = ownDriver(fixture.url);
    const admin = postgres(fixture.url, { max: 1, onnotice: () => {} });
    try {
      await driver.query("select 1", READ_OPTIONS);
      const [row] = await admin`select pg_terminate_backend(pid) as ended
        from pg_stat_activity where application_name = ${app}`;
      assertEquals(row?.ended, true, "the parked session was ended");
      // Its backend gone, the close reaches dbport at once. (A read sent in
      // between fails as any read on a session ended under it — or, when its
      // bytes met the closed socket, is asked again: pg_wired.ts.)
      await waitUntil("the ended backend to exit", async () => {
        const [left] = await admin`select count(*)::int as n
          from pg_stat_activity where application_name = ${app}`;
        return left?.n === 0;
      });
      await new Promise((resolve) => setTimeout(resolve, 200));
      // The next reads go to a new session.
      for (let i = 0; i < 5; i++) {
        const result = await driver.query(`select ${i} as i`, READ_OPTIONS);
        assertEquals(result.rows, [[i]]);
      }
    } finally {
      await admin.end();
      await driver.close();
    }
  }),
});

Deno.test({
  name:
    "postgres parked sessions: an unused parked session goes back to postgres.js, and a new read lends it again",
  ...needs("postgres"),
  fn: parked(async () => {
    await using fixture = await openFixture("postgres");
    const { driver } = ownDriver(fixture.url);
    try {
      await driver.query("select 1", READ_OPTIONS);
      const before = wireWrites.markers;
      await new Promise((resolve) => setTimeout(resolve, PARK_MS + 500));
      const result = await driver.query("select 2 as i", READ_OPTIONS);
      assertEquals(result.rows, [[2]]);
      assertEquals(
        wireWrites.markers - before,
        1,
        "given back, the session was lent again through a marker",
      );
    } finally {
      await driver.close();
    }
  }),
});

Deno.test({
  name:
    "postgres parked sessions: a read cancelled before it starts leaves the parked session usable",
  ...needs("postgres"),
  fn: parked(async () => {
    await using fixture = await openFixture("postgres");
    const { driver } = ownDriver(fixture.url);
    try {
      await driver.query("select 1", READ_OPTIONS);
      const controller = new AbortController();
      controller.abort();
      const refused = await driver.query("select 2", {
        ...READ_OPTIONS,
        signal: controller.signal,
      }).then(() => false, () => true);
      assert(refused, "an aborted read is refused");
      const timedOut = await driver.query("select pg_sleep(5)", {
        ...READ_OPTIONS,
        timeoutMs: 300,
      }).then(() => false, () => true);
      assert(timedOut, "a read past its timeout is stopped");
      for (let i = 0; i < 5; i++) {
        const result = await driver.query(`select ${i} as i`, READ_OPTIONS);
        assertEquals(result.rows, [[i]]);
      }
    } finally {
      await driver.close();
    }
  }),
});
