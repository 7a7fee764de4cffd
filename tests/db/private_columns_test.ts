/**
 * The private-column grammar (lib/db/private_columns.ts): what an entry may
 * be, what it matches, and the connection field that holds the list.
 */

import { assert, assertEquals, assertThrows } from "@std/assert";
import { parseConnections } from "../../lib/app/connections.ts";
import {
  checkPrivateEntry,
  parsePrivateList,
  privateMatch,
  privatePatterns,
} from "../../lib/db/private_columns.ts";

Deno.test("private-column entries: two or three parts, * as a wildcard, a column part that names something", () => {
  for (
    const ok of [
      "customers.email",
      "shop.customers.email",
      "*.email",
      "*.*ssn*",
      "s*.c*.e*",
      "Kunden.E-Mail",
    ]
  ) assertEquals(checkPrivateEntry(ok), null, ok);
  for (
    const bad of [
      "email",
      "a.b.c.d",
      ".email",
      "customers.",
      "customers.*",
      "*.*",
      "*.**",
      "cust omers.email",
      'customers."email"',
      "customers.e\u0000mail",
      `t.${"x".repeat(129)}`,
    ]
  ) assert(checkPrivateEntry(bad) !== null, bad);
});

Deno.test("private-column patterns match case-insensitively, any schema for two parts, never the engines' own schemas", () => {
  const patterns = privatePatterns(["*.email", "*.*ssn*", "hr.staff.salary"]);
  const match = (
    s: string,
    t: string,
    c: string,
    engine: "postgres" | "mysql" | "sqlite" = "postgres",
  ) => privateMatch(patterns, s, t, c, engine)?.text ?? null;
  assertEquals(match("public", "customers", "email"), "*.email");
  assertEquals(match("shop", "Leads", "EMAIL"), "*.email");
  assertEquals(match("shop", "customers", "backup_email"), null);
  assertEquals(match("shop", "customers", "ssn"), "*.*ssn*");
  assertEquals(match("shop", "customers", "last_ssn_digits"), "*.*ssn*");
  assertEquals(match("hr", "staff", "salary"), "hr.staff.salary");
  assertEquals(match("public", "staff", "salary"), null);
  assertEquals(match("information_schema", "x", "email"), null);
  assertEquals(match("pg_catalog", "x", "email"), null);
  assertEquals(match("main", "sqlite_master", "email", "sqlite"), null);
  assertEquals(match("main", "pragma_table_xinfo", "email", "sqlite"), null);
  assertEquals(match("mysql", "user", "email", "mysql"), null);
  assertEquals(match("sys", "x", "email", "mysql"), null);
  // Another engine's own names are the user's here.
  assertEquals(match("main", "pragma_users", "email", "sqlite"), "*.email");
  assertEquals(match("sys", "users", "email"), "*.email");
  assertEquals(match("mysql", "users", "email"), "*.email");
  assertEquals(match("shop", "sqlite_export", "email"), "*.email");
  assertEquals(match("pg_app", "users", "email", "mysql"), "*.email");
  // A regular-expression character is itself, not a pattern.
  assertEquals(
    privateMatch(privatePatterns(["t.a+b"]), "s", "t", "aab", "postgres"),
    null,
  );
});

Deno.test("--private parses a comma list, clears with an empty text, and names a bad entry", () => {
  assertEquals(parsePrivateList(" *.email , shop.c.ssn "), [
    "*.email",
    "shop.c.ssn",
  ]);
  assertEquals(parsePrivateList(""), []);
  assertThrows(() => parsePrivateList("*.email,email"), Error, '"email"');
  assertThrows(() => parsePrivateList("*.email,*.EMAIL"), Error, "twice");
});

Deno.test("connections.json holds privateColumns, checked", () => {
  const entry = {
    id: crypto.randomUUID(),
    name: "Shop",
    engine: "postgres",
    url: "postgres://u@h/db",
  };
  const ok = parseConnections(
    JSON.stringify({
      connections: [{ ...entry, privateColumns: ["*.email"] }],
    }),
  );
  assert(ok.ok);
  assertEquals(ok.connections[0]!.privateColumns, ["*.email"]);
  const bad = parseConnections(
    JSON.stringify({ connections: [{ ...entry, privateColumns: ["*.*"] }] }),
  );
  assert(!bad.ok);
  assert(bad.message.includes("privateColumns"), bad.message);
});
