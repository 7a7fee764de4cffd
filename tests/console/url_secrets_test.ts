import { isSecretParam, queryStringSecrets } from "../../lib/db/target.ts";
/**
 * The Edit page's URL: its password and libSQL `authToken` shown as a
 * placeholder, and put back from the saved URL when posted unchanged.
 */

import { assert, assertEquals } from "@std/assert";
import {
  addressOf,
  keepsUrlSecret,
  KEPT_SECRET,
  maskUrlSecrets,
  restoreUrlSecrets,
  secretMoves,
} from "../../lib/console/url_secrets.ts";

const K = KEPT_SECRET;

Deno.test("maskUrlSecrets hides passwords and tokens, nothing else", () => {
  const cases: [string, string][] = [
    ["postgres://u:pw@h:5432/db", `postgres://u:${K}@h:5432/db`],
    [
      "postgres://u:p%40ss:w@h/db?sslmode=require",
      `postgres://u:${K}@h/db?sslmode=require`,
    ],
    ["mysql://u:a@b@h/db", `mysql://u:${K}@h/db`],
    ["postgres://u@h/db", "postgres://u@h/db"],
    ["postgres://u:@h/db", "postgres://u:@h/db"],
    ["postgres://h/db?user=a@b", "postgres://h/db?user=a@b"],
    [
      "libsql://x.turso.io?authToken=abc.def&tls=1",
      `libsql://x.turso.io?authToken=${K}&tls=1`,
    ],
    ["/home/me/shop.db", "/home/me/shop.db"],
    ["file:shop.db", "file:shop.db"],
  ];
  for (const [url, shown] of cases) {
    assertEquals(maskUrlSecrets(url), shown, url);
  }
});

Deno.test("restoreUrlSecrets keeps the saved secret only for the placeholder", () => {
  const saved = "postgres://u:pw@h:5432/db";
  const cases: [string, string, string][] = [
    [maskUrlSecrets(saved), saved, saved],
    [
      `postgres://u:${K}@other:5432/db2`,
      saved,
      "postgres://u:pw@other:5432/db2",
    ],
    ["postgres://u:new@h:5432/db", saved, "postgres://u:new@h:5432/db"],
    ["postgres://u@h:5432/db", saved, "postgres://u@h:5432/db"],
    [`postgres://u:${K}@h/db`, "postgres://u@h/db", "postgres://u:@h/db"],
    [
      maskUrlSecrets("libsql://x.turso.io?authToken=abc&tls=1"),
      "libsql://x.turso.io?authToken=abc&tls=1",
      "libsql://x.turso.io?authToken=abc&tls=1",
    ],
    [
      "libsql://x.turso.io?authToken=new",
      "libsql://x.turso.io?authToken=abc",
      "libsql://x.turso.io?authToken=new",
    ],
  ];
  for (const [posted, before, want] of cases) {
    assertEquals(restoreUrlSecrets(posted, before), want, posted);
  }
});

Deno.test("addressOf names the server a secret goes to: scheme, host, port, a host= override", () => {
  assertEquals(addressOf("postgres://u:pw@H:5432/db"), "postgres://h:5432");
  assertEquals(addressOf("postgres://u:pw@h:5432/other"), "postgres://h:5432");
  assertEquals(
    addressOf("postgres://u:pw@h/db?host=evil.example"),
    "postgres://h?host=evil.example",
  );
  assertEquals(
    addressOf("libsql://x.turso.io?authToken=abc"),
    "libsql://x.turso.io",
  );
});

Deno.test("addressOf reads several hosts with a port each: the host list, not the database", () => {
  assertEquals(
    addressOf("postgres://u:pw@H1:5432,h2:5433/db?sslmode=require"),
    "postgres://h1:5432,h2:5433?sslmode=require",
  );
  assertEquals(
    addressOf("postgres://u:pw@h1:5432,h2:5433/other"),
    "postgres://h1:5432,h2:5433",
  );
  assertEquals(
    maskUrlSecrets("postgres://u:pw@h1:5432,h2:5433/db"),
    "postgres://u:(saved)@h1:5432,h2:5433/db",
  );
});

Deno.test("secretMoves refuses a kept secret sent to another host, port or tunnel", () => {
  const saved = { url: "postgres://u:pw@h:5432/db" };
  assertEquals(secretMoves(saved, { url: "postgres://u:x@h:5432/db2" }), null);
  for (
    const url of [
      "postgres://u:x@other:5432/db",
      "postgres://u:x@h:5433/db",
      "postgres://u:x@h:5432/db?host=other",
      "mysql://u:x@h:5432/db",
    ]
  ) {
    const refused = secretMoves(saved, { url });
    assertEquals(refused?.includes("stays with postgres://h:5432"), true, url);
  }
  assertEquals(
    secretMoves(saved, { url: saved.url, ssh: { host: "jump" } })?.includes(
      "SSH tunnel",
    ),
    true,
  );
  assertEquals(
    secretMoves(
      { ...saved, ssh: { host: "jump" } },
      { url: saved.url, ssh: { host: "jump" } },
    ),
    null,
  );
});

Deno.test("keepsUrlSecret tells a placeholder from a typed secret", () => {
  assertEquals(keepsUrlSecret(`postgres://u:${K}@h/db`), true);
  assertEquals(keepsUrlSecret(`libsql://x?authToken=${K}`), true);
  assertEquals(keepsUrlSecret("postgres://u:typed@h/db"), false);
  assertEquals(keepsUrlSecret("postgres://u@h/db"), false);
});

Deno.test("a PostgreSQL client key's passphrase (sslpassword) is masked and kept as a password is", () => {
  const saved =
    "postgres://u:pw@h/db?sslmode=verify-full&sslcert=/c.pem&sslkey=/c.key&sslpassword=kp%2Bss";
  const shown = maskUrlSecrets(saved);
  assertEquals(
    shown,
    `postgres://u:${K}@h/db?sslmode=verify-full&sslcert=/c.pem&sslkey=/c.key&sslpassword=${K}`,
  );
  assertEquals(keepsUrlSecret(shown), true);
  assertEquals(restoreUrlSecrets(shown, saved), saved);
  // A passphrase typed again replaces the saved one; the key file may change
  // with it, and the secret stays with the same server.
  const typed = shown.replace("sslpassword=" + K, "sslpassword=new");
  assertEquals(
    restoreUrlSecrets(typed, saved),
    saved.replace("kp%2Bss", "new"),
  );
  assertEquals(secretMoves({ url: saved }, { url: typed }), null);
});

Deno.test("a secret parameter's name in percent-encoding is the same secret: masked, kept, redacted (outsider stop 53)", () => {
  const url =
    "postgres://u@db.example/app?sslcert=c.pem&sslkey=k.key&ssl%70assword=pass%20phrase&%61uthToken=tok";
  assertEquals(
    maskUrlSecrets(url),
    "postgres://u@db.example/app?sslcert=c.pem&sslkey=k.key&ssl%70assword=(saved)&%61uthToken=(saved)",
  );
  assertEquals(restoreUrlSecrets(maskUrlSecrets(url), url), url);
  assert(keepsUrlSecret(maskUrlSecrets(url)));
  assertEquals(queryStringSecrets(url), [
    "pass%20phrase",
    "pass phrase",
    "tok",
  ]);
  assert(isSecretParam("%73slpassword") && !isSecretParam("sslkey"));
});
