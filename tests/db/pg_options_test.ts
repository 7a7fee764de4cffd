/**
 * postgres.js's reopening delay after sessions closed with an error: at most
 * 1 s however many closed in a row (its default grows to 20 s, and reads
 * waited 7-15 s for a session after a few were ended: outsider stop48).
 */

import { assert, assertEquals } from "@std/assert";
import {
  postgresOptions,
  reopenDelay,
} from "../../lib/db/postgres/pg_options.ts";

Deno.test("postgres options: a session closed with an error is reopened within 1 s, whatever closed before, and as soon as postgres.js would after the first", () => {
  for (let retries = 0; retries < 40; retries++) {
    for (let draw = 0; draw < 20; draw++) {
      const seconds = reopenDelay(retries);
      assert(seconds <= 1, `${retries} closes: ${seconds} s`);
      assert(seconds >= 0.5 * Math.min(3 ** retries / 100, 1), `${seconds} s`);
    }
  }
  // The first reopening waits no longer than postgres.js's own (10 ms).
  for (let draw = 0; draw < 20; draw++) assert(reopenDelay(0) <= 0.01);
  const options = postgresOptions({
    url: "postgres://u@127.0.0.1:5432/db",
    secrets: [],
  }) as { backoff?: unknown };
  assertEquals(options.backoff, reopenDelay);
});
