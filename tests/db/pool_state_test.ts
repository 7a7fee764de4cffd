/**
 * What the pool knows of a connection's state for the console: its last
 * failure to connect (message and time) until it answers again, and a
 * connection tested outside the pool counting as connected.
 */

import { assert, assertEquals, assertMatch } from "@std/assert";
import { DriverPool } from "../../lib/db/pool.ts";
import { needs, POSTGRES_URL, READ_OPTIONS } from "../_db.ts";

Deno.test({
  name:
    "DriverPool: a connection that cannot connect keeps its last failure until it answers",
  ignore: needs("postgres").ignore,
  // The pool asks the login's risks in the background (a 10 s timeout).
  sanitizeOps: false,
  sanitizeResources: false,
  async fn() {
    let now = 1_000_000;
    const pool = new DriverPool({ now: () => now });
    const id = crypto.randomUUID();
    const down = {
      id,
      engine: "postgres" as const,
      url: "postgres://postgres@127.0.0.1:1/none",
    };
    try {
      await pool.get(down).query("select 1", READ_OPTIONS).then(
        () => assert(false, "port 1 answered"),
        () => {},
      );
      const failure = pool.lastFailure(id);
      assertMatch(failure?.message ?? "", /ECONNREFUSED/);
      assertEquals(failure?.at, now);
      assertEquals(pool.isConnected(id), false);
      // The same id, now reachable: the failure is gone once it answers.
      now += 1_000;
      await pool.get({ ...down, url: POSTGRES_URL }).query(
        "select 1",
        READ_OPTIONS,
      );
      assertEquals(pool.lastFailure(id), null);
      assertEquals(pool.isConnected(id), true);
      // A test made outside the pool counts, both ways.
      pool.noteOutcome(id, "no route to host");
      assertEquals(pool.isConnected(id), false);
      assertEquals(pool.lastFailure(id)?.message, "no route to host");
      const other = crypto.randomUUID();
      pool.noteOutcome(`${other}:owner`, null);
      assertEquals(pool.isConnected(other), true);
      now += 10 * 60_000;
      assertEquals(pool.isConnected(other), false, "stale after 5 minutes");
      // A connection removed is forgotten.
      await pool.retain(new Set());
      assertEquals(pool.lastFailure(id), null);
    } finally {
      await pool.closeAll();
    }
  },
});
