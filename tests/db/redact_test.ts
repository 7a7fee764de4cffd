import { assert, assertEquals } from "@std/assert";
import { MAX_MESSAGE_LENGTH, redact } from "../../lib/db/redact.ts";

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
