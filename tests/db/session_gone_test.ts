/**
 * A PostgreSQL session that dies between two statements (the server
 * restarted, an admin ended it, a tunnel dropped) fails its call and never
 * the process: postgres.js would otherwise write ROLLBACK to a socket it had
 * dropped, from a timer no caller can catch.
 */

import { assertEquals } from "@std/assert";
import { DriverPool } from "../../lib/db/pool.ts";
import { needs, openFixture, POSTGRES_URL, READ_OPTIONS } from "../_db.ts";
import postgres from "postgres";

Deno.test({
  name:
    "postgres: sessions ended by the server mid-pool fail a call or two, and the driver goes on",
  ...needs("postgres"),
  async fn() {
    // Through the pool, as the server uses it: a driver that lost its
    // sessions is replaced at the next call. In a database of its own, so
    // that ending "all" sessions ends only this test's (other tests and
    // dbport processes use the same server at the same time).
    await using fixture = await openFixture("postgres", { ownDatabase: true });
    const database = new URL(fixture.url).pathname.slice(1);
    const pool = new DriverPool();
    const spec = {
      id: crypto.randomUUID(),
      engine: "postgres" as const,
      url: fixture.url,
    };
    const driver = {
      query: (text: string, options: typeof READ_OPTIONS) =>
        pool.get(spec).query(text, options),
    };
    const admin = postgres(POSTGRES_URL, { max: 1, onnotice: () => {} });
    try {
      for (let round = 0; round < 5; round++) {
        // Several pooled sessions, all idle, then all ended by the server.
        await Promise.all(
          [1, 2, 3].map(() =>
            driver.query("SELECT pg_sleep(0.05)", READ_OPTIONS)
          ),
        );
        await admin.unsafe(
          "select pg_terminate_backend(pid) from pg_stat_activity where datname = $1 and application_name like 'dbport%' and pid <> pg_backend_pid()",
          [database],
        );
        const outcomes = await Promise.allSettled(
          [1, 2, 3].map(() => driver.query("SELECT 1 AS one", READ_OPTIONS)),
        );
        for (const outcome of outcomes) {
          if (outcome.status === "rejected") {
            // A lost session, said as one: not a crash, not a hang.
            assertEquals(
              (outcome.reason as { kind?: string }).kind,
              "connect",
              String(outcome.reason),
            );
          }
        }
        // Alive, and the next call works.
        const next = await driver.query("SELECT 1 AS one", READ_OPTIONS);
        assertEquals(next.rows, [[1]]);
      }
    } finally {
      await pool.closeAll();
      await admin.end();
    }
  },
});
