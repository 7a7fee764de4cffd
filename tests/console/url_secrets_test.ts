/**
 * The Edit page's URL: its password and libSQL `authToken` shown as a
 * placeholder, and put back from the saved URL when posted unchanged.
 */

import { assertEquals } from "@std/assert";
import {
  KEPT_SECRET,
  maskUrlSecrets,
  restoreUrlSecrets,
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
