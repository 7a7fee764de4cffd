import { assert, assertEquals } from "@std/assert";
import {
  MAX_MESSAGE_LENGTH,
  redact,
  withVisible,
} from "../../lib/db/redact.ts";
import { describeTarget } from "../../lib/db/target.ts";

Deno.test("redact() masks the connection's secrets and what looks like one", () => {
  const text = redact(
    'password authentication failed for user "alice" at db.internal.example:5432 (host=10.0.0.7 password=s3cret) postgres://alice:s3cret@db/x /home/alice/data.db',
    ["alice", "s3cret"],
  );
  for (
    const leak of [
      "alice",
      "s3cret",
      "10.0.0.7",
      "db.internal.example",
      "/home/",
    ]
  ) {
    assert(!text.includes(leak), `${leak} leaked: ${text}`);
  }
  assert(text.includes("password authentication failed"));
});

Deno.test("redact() skips secrets shorter than 3 characters and caps the length", () => {
  assertEquals(redact("a table named ab", ["ab"]), "a table named ab");
  const long = redact("x".repeat(2000));
  assertEquals(long.length, MAX_MESSAGE_LENGTH);
  assert(long.endsWith("…"));
});

Deno.test("redact() keeps what list_connections shows the client: the connection's host, port and database", () => {
  const target = describeTarget(
    "postgres",
    "postgres://carol:pa55word@10.1.2.3:6543/shop_db",
  )!;
  const secrets = withVisible([...target.secrets], target.visible);
  assertEquals(
    redact('database "shop_db" does not exist', secrets),
    'database "shop_db" does not exist',
  );
  assertEquals(
    redact("connect ECONNREFUSED 10.1.2.3:6543", secrets),
    "connect ECONNREFUSED 10.1.2.3:6543",
  );
  // Passwords, users, other hosts and local paths still go.
  assertEquals(
    redact(
      'password authentication failed for user "carol" (pa55word) via 10.9.9.9:5432 reading /home/carol/.pgpass',
      secrets,
    ),
    "password authentication failed for user [redacted] ([redacted]) via [redacted] reading [redacted]",
  );
  // A value that is also a secret (a user named like the database) stays masked.
  const same = describeTarget("postgres", "postgres://shop:x@h.example/shop")!;
  assertEquals(
    redact(
      'role "shop" on database shop',
      withVisible([...same.secrets], same.visible),
    ),
    "role [redacted] on database [redacted]",
  );
});
