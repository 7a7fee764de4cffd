import { assertEquals } from "@std/assert";
import {
  describeTarget,
  hostList,
  urlPasswords,
  urlProblem,
  urlWithoutSecrets,
} from "../../lib/db/target.ts";
import { withLogin } from "../../lib/db/split_driver.ts";
import { ownerSecrets } from "../../lib/db/open_driver.ts";
import { ownerOnly, redact } from "../../lib/db/redact.ts";

Deno.test("hostList() reads libpq's host lists: a port each, a shared one, IPv6 literals; refuses a port that is none", () => {
  assertEquals(
    hostList("postgres://u:p@h1:5432,h2:5433/db", 5432)?.hosts.map((h) =>
      `${h.host} ${h.port}`
    ),
    ["h1 5432", "h2 5433"],
  );
  assertEquals(
    hostList("postgres://u@[::1]:6000,h2/db?x=1", 5432),
    {
      hosts: [
        { host: "::1", written: "[::1]", port: 6000 },
        { host: "h2", written: "h2", port: 5432 },
      ],
      url: "postgres://u@[::1]:6000/db?x=1",
    },
  );
  assertEquals(hostList("postgres://u@h1/db", 5432), null);
  assertEquals(hostList("postgres://u@h1:x,h2/db", 5432), null);
  assertEquals(hostList("postgres://u@h1:99999,h2/db", 5432), null);
});

Deno.test("describeTarget() of several hosts with a port each: the list as written, no single port, each host visible; secrets read", () => {
  const target = describeTarget(
    "postgres",
    "postgres://me:p%40ss@h1:5432,h2:5433/shop?sslpassword=kp",
  )!;
  assertEquals(target.host, "h1:5432,h2:5433");
  assertEquals(target.port, null);
  assertEquals(target.database, "shop");
  assertEquals(target.secrets, ["me", "p@ss", "kp"]);
  for (const value of ["h1:5432", "h2:5433", "h1", "h2"]) {
    assertEquals(target.visible.includes(value), true, value);
  }
  // Sharing a port: as before.
  const shared = describeTarget("postgres", "postgres://me@h1,h2:5432/shop")!;
  assertEquals([shared.host, shared.port], ["h1,h2", 5432]);
  assertEquals(
    urlProblem("postgres", "postgres://me@h1:5432,h2:5433/shop"),
    null,
  );
  assertEquals(
    urlProblem("postgres", "postgres://me@h1:x,h2/shop"),
    "is not a valid URL",
  );
});

Deno.test("urlWithoutSecrets(), urlPasswords() and withLogin() read a URL of several hosts with their ports", () => {
  const url = "postgres://me:s3cret@h1:5432,h2:5433/shop?authToken=tok1";
  assertEquals(
    urlWithoutSecrets(url),
    "postgres://me:[redacted]@h1:5432,h2:5433/shop?authToken=[redacted]",
  );
  assertEquals(urlPasswords(url), ["s3cret"]);
  assertEquals(
    withLogin(url, { user: "ai reader", password: "p@w" }),
    "postgres://ai%20reader:p%40w@h1:5432,h2:5433/shop?authToken=tok1",
  );
});

Deno.test("a password's escapes: urlPasswords() gives it as written and as decoded, and the owner's messages mask both forms", () => {
  assertEquals(urlPasswords("postgres://me:p%40ss@h/db"), ["p%40ss", "p@ss"]);
  // A '%' that starts no escape is kept; the escapes around it decoded.
  assertEquals(urlPasswords("postgres://me:50%off%21@h/db"), [
    "50%off%21",
    "50%off!",
  ]);
  assertEquals(urlPasswords("postgres://me:plain@h1:5432,h2:5433/db"), [
    "plain",
  ]);
  assertEquals(urlPasswords("postgres://me@h/db"), []);
  assertEquals(urlPasswords("postgres://me:@h/db"), []);
  const secrets = ownerOnly(ownerSecrets({
    id: "c1",
    engine: "postgres",
    url: "postgres://me:sec%25ret%zz@h/db",
  }));
  assertEquals(
    redact(
      "could not use postgres://me:sec%25ret%zz@h/db: password sec%ret%zz refused",
      secrets,
    ),
    "could not use postgres://me:[redacted]@h/db: password [redacted] refused",
  );
});
