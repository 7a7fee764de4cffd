/**
 * When a PostgreSQL read may run alone, and what it sends first
 * (lib/db/postgres/pg_lean.ts): only on a server that reports its read-only default
 * (14 and later), only for a statement that leaves no state, with just the
 * session-level settings the session lacks.
 */

import { assertEquals } from "@std/assert";
import type postgres from "postgres";
import {
  leanRead,
  planFor,
  timeoutFits,
} from "../../lib/db/postgres/pg_lean.ts";
import type { WireSession } from "../../lib/db/postgres/pg_wire.ts";
import { READ_OPTIONS } from "../_db.ts";

type Sql = ReturnType<typeof postgres>;

const server = (version?: string) =>
  ({
    parameters: version === undefined ? {} : { server_version: version },
  }) as unknown as Sql;

const SIGNED = {
  ...READ_OPTIONS,
  sign: { client: "claude", token: "t", call: "00000000" },
};

Deno.test("leanRead: PostgreSQL 14 and later, a stateless statement only", () => {
  const lean = { timeout: READ_OPTIONS.timeoutMs + 5_000, app: "" };
  assertEquals(
    leanRead(server("15.20 (Debian 15.20-0+deb12u1)"), true, READ_OPTIONS),
    lean,
  );
  assertEquals(leanRead(server("14.0"), true, READ_OPTIONS), lean);
  assertEquals(leanRead(server("18beta1"), true, SIGNED), {
    ...lean,
    app: "dbport/claude",
  });
  // Before 14 the read-only default is not reported: the rolled-back
  // transaction stays; so does an unknown version, or a statement that
  // may leave state.
  assertEquals(leanRead(server("13.14"), true, READ_OPTIONS), null);
  assertEquals(leanRead(server("9.6.24"), true, READ_OPTIONS), null);
  assertEquals(leanRead(server(), true, READ_OPTIONS), null);
  assertEquals(leanRead(server("garbage"), true, READ_OPTIONS), null);
  assertEquals(leanRead(server("16.1"), false, READ_OPTIONS), null);
});

const ASK = {
  begin: "BEGIN READ ONLY; SET LOCAL statement_timeout = 15000",
  after: ["ROLLBACK"],
  recover: ["ROLLBACK"],
};

Deno.test("planFor: a read that is not lean sends BEGIN … ROLLBACK as asked", () => {
  const session: WireSession = { readOnly: true, timeout: 15_000, app: "" };
  const plan = planFor({ ...ASK, lean: null }, session);
  assertEquals(
    [plan.begin, plan.wrap, plan.after, plan.recover, plan.lean],
    [ASK.begin, false, ["ROLLBACK"], ["ROLLBACK"], null],
  );
});

Deno.test("planFor: a lean read sets only what its session lacks, and expects only those reports", () => {
  const lean = { timeout: 15_000, app: "dbport/claude" };
  const fresh: WireSession = { readOnly: false, timeout: null, app: null };
  const first = planFor({ ...ASK, lean }, fresh);
  assertEquals(
    first.begin,
    "SET default_transaction_read_only = on; SET statement_timeout = 15000; SET application_name = 'dbport/claude'",
  );
  // BEGIN READ ONLY and ROLLBACK in the statement's own batch; a ROLLBACK
  // again only after a failed statement.
  assertEquals([first.wrap, first.after, first.recover], [true, [], [
    "ROLLBACK",
  ]]);
  assertEquals([...first.reports], [
    ["default_transaction_read_only", "on"],
    ["application_name", "dbport/claude"],
  ]);
  // The same caller again: the statement alone, no report expected.
  const again = planFor({ ...ASK, lean }, {
    readOnly: true,
    timeout: 15_000,
    app: "dbport/claude",
  });
  assertEquals([again.begin, again.reports.size], ["", 0]);
  // An unsigned read after a signed one: the session's own name back.
  const unsigned = planFor({ ...ASK, lean: { timeout: 15_000, app: "" } }, {
    readOnly: true,
    timeout: 15_000,
    app: "dbport/claude",
  });
  assertEquals(unsigned.begin, "RESET application_name");
  assertEquals([...unsigned.reports], [["application_name", null]]);
  // Another timeout: only it.
  const timeout = planFor({ ...ASK, lean: { ...lean, timeout: 35_000 } }, {
    readOnly: true,
    timeout: 15_000,
    app: "dbport/claude",
  });
  assertEquals(timeout.begin, "SET statement_timeout = 35000");
});

Deno.test("planFor: a lean read keeps its session's timeout when it is at least its own and less than a second more", () => {
  const session = (timeout: number | null): WireSession => ({
    readOnly: true,
    timeout,
    app: "",
  });
  const ask = (timeout: number) => ({ ...ASK, lean: { timeout, app: "" } });
  // What is left of a 30 s call's deadline, a few ms under: the second up.
  const first = planFor(ask(34_987), session(null));
  assertEquals(first.begin, "SET statement_timeout = 35000");
  assertEquals(first.lean?.timeout, 35_000, "what the session will have");
  // The next reads, a few ms under or exactly: nothing to set.
  for (const least of [34_950, 34_001, 35_000]) {
    const plan = planFor(ask(least), session(35_000));
    assertEquals(plan.begin, "", `a read that needs ${least} ms`);
    assertEquals(plan.lean?.timeout, 35_000);
  }
  // Never less than a read needs, never a second or more above it.
  assertEquals(
    planFor(ask(35_001), session(35_000)).begin,
    "SET statement_timeout = 36000",
  );
  assertEquals(
    planFor(ask(34_000), session(35_000)).begin,
    "SET statement_timeout = 34000",
  );
  assertEquals(
    planFor(ask(8_000), session(46_000)).begin,
    "SET statement_timeout = 8000",
  );
});

Deno.test("timeoutFits: at least the read's, under a second more", () => {
  assertEquals(timeoutFits(null, 5_000), false);
  assertEquals(timeoutFits(5_000, 5_000), true);
  assertEquals(timeoutFits(5_999, 5_000), true);
  assertEquals(timeoutFits(6_000, 5_000), false);
  assertEquals(timeoutFits(4_999, 5_000), false);
});
