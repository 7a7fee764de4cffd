import { assertEquals, assertThrows } from "@std/assert";
import { DbError } from "../../lib/db/errors.ts";
import { sessionAttrs } from "../../lib/db/postgres/pg_session_attrs.ts";

const ONE = "postgres://u:p@db.example:5432/app";
const TWO = "postgres://u:p@a.example:5432,b.example:5433/app";

Deno.test("target_session_attrs: libpq's values, as postgres.js is to check them", () => {
  // [URL, value, what postgres.js checks, what dbport's host picker checks]
  const cases: [string, string, string | null, string | null][] = [
    [ONE, "any", null, null],
    [ONE, "read-write", "primary", "primary"],
    [ONE, "primary", "primary", "primary"],
    [ONE, "read-only", "standby", "standby"],
    [ONE, "standby", "standby", "standby"],
    // postgres.js refuses the only host it is given (dbport gives it one
    // host on several-host URLs too: pg_hosts.ts).
    [ONE, "prefer-standby", null, "prefer-standby"],
    [TWO, "prefer-standby", null, "prefer-standby"],
    [TWO, "read-write", "primary", "primary"],
    [TWO, "any", null, null],
  ];
  for (const [base, value, attrs, hosts] of cases) {
    const got = sessionAttrs(
      `${base}?sslmode=disable&target_session_attrs=${value}`,
    );
    assertEquals(
      got,
      { url: `${base}?sslmode=disable`, attrs, hosts },
      value,
    );
  }
});

Deno.test("target_session_attrs: the URL without it, other parameters kept", () => {
  assertEquals(sessionAttrs(ONE), { url: ONE, attrs: null, hosts: null });
  assertEquals(sessionAttrs(`${ONE}?sslmode=require`), {
    url: `${ONE}?sslmode=require`,
    attrs: null,
    hosts: null,
  });
  assertEquals(sessionAttrs(`${ONE}?target_session_attrs=any`), {
    url: ONE,
    attrs: null,
    hosts: null,
  });
  assertEquals(
    sessionAttrs(`${ONE}?application_name=x&target_session_attrs=primary#frag`),
    { url: `${ONE}?application_name=x`, attrs: "primary", hosts: "primary" },
  );
});

Deno.test("target_session_attrs: a value libpq does not know is refused, named", () => {
  const error = assertThrows(
    () => sessionAttrs(`${ONE}?target_session_attrs=master`),
    DbError,
  );
  assertEquals(error.kind, "connect");
  assertEquals(
    error.message,
    "the URL's target_session_attrs=\"master\" is not one of any, read-write, read-only, primary, standby, prefer-standby: correct the connection's URL",
  );
});
