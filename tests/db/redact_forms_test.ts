/**
 * redact() form by form (issue 34): every key=value key, quoted users and
 * roles, addresses, URLs, local paths, the connection's own secrets, the
 * owner-only mark and the length cap, each pinned to its exact output.
 */
import { assertEquals } from "@std/assert";
import { MAX_MESSAGE_LENGTH, ownerOnly, redact } from "../../lib/db/redact.ts";

const KEYS = [
  "host",
  "hostaddr",
  "hostname",
  "server",
  "port",
  "user",
  "username",
  "uid",
  "password",
  "passwd",
  "pwd",
  "dbname",
  "database",
  "data source",
  "account",
  "token",
  "apikey",
  "api_key",
  "secret",
  "sslcert",
  "sslkey",
  "sslrootcert",
  "authtoken",
  "auth_token",
  "connection_string",
  "dsn",
];

for (const key of KEYS) {
  Deno.test(`redact("failed: ${key}=zq-77 next") masks the value: "failed: ${key}=[redacted] next"`, () => {
    assertEquals(
      redact(`failed: ${key}=zq-77 next`),
      `failed: ${key}=[redacted] next`,
    );
  });
}

Deno.test('redact() masks "key: value", "key = \\"quoted value\\"" and \'single quoted\' forms up to , ; )', () => {
  assertEquals(
    redact(`(Host = "my db"; Port: 5432, user='x y')`),
    "(Host=[redacted]; Port=[redacted], user=[redacted])",
  );
});

Deno.test("redact() leaves words that only start like a key: hostel=3 stays", () => {
  assertEquals(redact("hostel=3 tokens=4"), "hostel=3 tokens=4");
});

for (
  const [input, output] of [
    ['user "alice" has no access', "user [redacted] has no access"],
    ["user 'carol' lacks privilege", "user [redacted] lacks privilege"],
    ['role "admin" does not exist', "role [redacted] does not exist"],
    ["ROLE 'ops' is locked", "ROLE [redacted] is locked"],
    ['password failed FOR USER "dave"', "password failed FOR USER [redacted]"],
    [
      "Access denied for user 'bob'@'10.1.2.3'",
      "Access denied for user [redacted]@'[redacted]'",
    ],
  ] as const
) {
  Deno.test(`redact(${JSON.stringify(input)}) masks the quoted name: ${JSON.stringify(output)}`, () => {
    assertEquals(redact(input), output);
  });
}

for (
  const [input, output] of [
    ["could not connect to 10.0.0.7", "could not connect to [redacted]"],
    [
      "could not connect to 10.0.0.7:5432 now",
      "could not connect to [redacted] now",
    ],
    ["refused by [fe80::1]:5432 now", "refused by [redacted] now"],
    ["refused by [::1] now", "refused by [redacted] now"],
    [
      "no answer from db.internal.example:5432 now",
      "no answer from [redacted] now",
    ],
    ["postgres://alice:pw@db/app failed", "[redacted]/app failed"],
    ["mysql://db.example/app down", "[redacted] down"],
    ["libsql://team.turso.io?authToken=x down", "[redacted] down"],
    ["wss://edge.example/db down", "[redacted] down"],
  ] as const
) {
  Deno.test(`redact(${JSON.stringify(input)}) masks the address: ${JSON.stringify(output)}`, () => {
    assertEquals(redact(input), output);
  });
}

for (
  const path of [
    "/var/lib/db.sqlite",
    "/tmp/x.so",
    "/root/.pgpass",
    "/etc/passwd",
    "/home/alice/data.db",
    "/Users/alice/data.db",
    "/private/var/db",
    "/opt/app/db",
    "/srv/db",
    "/mnt/disk/db",
    "/Volumes/Disk/db",
    "/run/postgresql/.s.PGSQL.5432",
    "/data/app.db",
    "C:\\Users\\alice\\app.db",
  ]
) {
  Deno.test(`redact("cannot open ${path} now") masks the path: "cannot open [redacted] now"`, () => {
    assertEquals(
      redact(`cannot open ${path} now`),
      "cannot open [redacted] now",
    );
  });
}

Deno.test("redact() leaves paths outside the listed roots and plain slashes: /usr/share/x, a/b", () => {
  assertEquals(
    redact("a/b and /usr/share/x stay"),
    "a/b and /usr/share/x stay",
  );
});

Deno.test("redact() masks a 3-character secret and leaves a 2-character one", () => {
  assertEquals(
    redact("the xyz and the ab", ["xyz", "ab"]),
    "the [redacted] and the ab",
  );
});

Deno.test("redact() masks secrets case-insensitively and every occurrence", () => {
  assertEquals(
    redact("Alice met ALICE", ["alice"]),
    "[redacted] met [redacted]",
  );
});

Deno.test("redact() masks the longer of two overlapping secrets whole: abcdef, not [redacted]def", () => {
  assertEquals(
    redact("value abcdef here", ["abc", "abcdef"]),
    "value [redacted] here",
  );
  assertEquals(
    redact("value abcdef here", ["abcdef", "abc"]),
    "value [redacted] here",
  );
});

Deno.test("redact() without a secrets list still masks key=value pairs and paths", () => {
  assertEquals(
    redact("token=abc123 at /tmp/x"),
    "token=[redacted] at [redacted]",
  );
});

Deno.test("redact() with an ownerOnly() list masks only those secrets (3+ characters), keeping host, address and path", () => {
  assertEquals(
    redact(
      "host=h1 10.0.0.7 /tmp/x pw s3cret and ab",
      ownerOnly(["s3cret", "ab"]),
    ),
    "host=h1 10.0.0.7 /tmp/x pw [redacted] and ab",
  );
  assertEquals(redact("the xyz", ownerOnly(["xyz"])), "the [redacted]");
  // The owner-only path masks as written (case-sensitive) and does not trim.
  assertEquals(redact(" Xyz xyz ", ownerOnly(["xyz"])), " Xyz [redacted] ");
});

Deno.test("redact() without the owner-only mark masks addresses even when given the same secrets", () => {
  assertEquals(
    redact("host=h1 10.0.0.7 pw s3cret", ["s3cret"]),
    "host=[redacted] [redacted] pw [redacted]",
  );
});

Deno.test("redact() caps a message at 600 characters: 600 stay whole, 601 become 599 and …", () => {
  assertEquals(MAX_MESSAGE_LENGTH, 600);
  const exact = "x".repeat(600);
  assertEquals(redact(exact), exact);
  const over = redact("y".repeat(601));
  assertEquals(over.length, 600);
  assertEquals(over, "y".repeat(599) + "…");
});

Deno.test("redact() trims surrounding whitespace", () => {
  assertEquals(redact("  failed  "), "failed");
});
