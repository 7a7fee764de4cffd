/**
 * A long PostgreSQL statement is parsed off the event loop
 * (lib/db/postgres/pg_parse_off_loop.ts): the event loop's thread spends next to no
 * CPU on a 100 KB text that takes 150 ms of it to parse and analyze.
 */

import { assert, assertEquals } from "@std/assert";
import { parsePostgres } from "../../lib/db/postgres/pg_parse.ts";
import { stopParser } from "../../lib/db/postgres/pg_parse_off_loop.ts";

/** CPU time of this (the event loop's) thread so far, in ms (Linux: /proc). */
function mainThreadCpuMs(): number {
  const stat = Deno.readTextFileSync("/proc/thread-self/stat");
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

const LIMIT = 102_400;
const LONG = {
  "a 100 KB chain of additions": "select " + "1+".repeat((LIMIT - 10) / 2) +
    "1",
  "6,000 unions": Array.from({ length: 6_000 }, () => "select 1")
    .join(" union all ").slice(0, LIMIT),
  "8,000 function calls": "select " +
    Array.from({ length: 8_000 }, (_, i) => `f${i}(x)`).join(",").slice(
      0,
      LIMIT - 20,
    ) + " from t",
};

for (const [name, sql] of Object.entries(LONG)) {
  Deno.test({
    name: `${name}: parsed off the event loop, answered, never thrown`,
    ignore: Deno.build.os !== "linux",
    async fn() {
      try {
        const before = mainThreadCpuMs();
        const parsed = await parsePostgres(sql);
        const spent = mainThreadCpuMs() - before;
        // In-thread these took 140-180 ms of the event loop's CPU (and one
        // threw RangeError); off it, about 10 ms.
        assert(spent < 60, `the event loop's thread spent ${spent} ms parsing`);
        if (!parsed.ok) assert(parsed.message.length > 0);
      } finally {
        stopParser();
      }
    },
  });
}

Deno.test("a short statement is still parsed at once, with its analysis", async () => {
  const parsed = await parsePostgres("select name from authors where id = 1");
  assert(parsed.ok);
  assertEquals(parsed.analysis?.tier, "read");
});
