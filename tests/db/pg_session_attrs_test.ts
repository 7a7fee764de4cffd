import { assertEquals, assertThrows } from "@std/assert";
import { DbError } from "../../lib/db/errors.ts";
import { sessionAttrs } from "../../lib/db/postgres/pg_session_attrs.ts";

const ONE = "postgres://u:p@db.example:5432/app";
const TWO = "postgres://u:p@a.example:5432,b.example:5433/app";

Deno.test("target_session_attrs: libpq's values, as postgres.js is to check them", () => {
  const cases: [string, string, string | null][] = [
    [ONE, "any", null],
    [ONE, "read-write", "primary"],
    [ONE, "primary", "primary"],
    [ONE, "read-only", "standby"],
    [ONE, "standby", "standby"],
    // postgres.js refused the only host of a one-host URL.
    [ONE, "prefer-standby", null],
    [TWO, "prefer-standby", "prefer-standby"],
    [TWO, "read-write", "primary"],
    [TWO, "any", null],
  ];
  for (const [base, value, attrs] of cases) {
    const got = sessionAttrs(
      `${base}?sslmode=disable&target_session_attrs=${value}`,
    );
    assertEquals(got, { url: `${base}?sslmode=disable`, attrs }, value);
  }
});

Deno.test("target_session_attrs: the URL without it, other parameters kept", () => {
  assertEquals(sessionAttrs(ONE), { url: ONE, attrs: null });
  assertEquals(sessionAttrs(`${ONE}?sslmode=require`), {
    url: `${ONE}?sslmode=require`,
    attrs: null,
  });
  assertEquals(sessionAttrs(`${ONE}?target_session_attrs=any`), {
    url: ONE,
    attrs: null,
  });
  assertEquals(
    sessionAttrs(`${ONE}?application_name=x&target_session_attrs=primary#frag`),
    { url: `${ONE}?application_name=x`, attrs: "primary" },
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
