/**
 * Statement signing (lib/db/signature.ts) without a database: the comment's
 * exact form, which characters a name keeps, the 48-character limit, the
 * PostgreSQL setting, and that an unsigned statement is sent as written.
 */

import { assertEquals, assertMatch } from "@std/assert";
import {
  applicationName,
  newCallId,
  setApplicationName,
  signatureComment,
  signatureName,
  signed,
} from "../../lib/db/signature.ts";

Deno.test("signatureName: letters, digits and . _ : @ + - are kept as written", () => {
  const kept = "Claude-Code_1.2:beta@host+x";
  assertEquals(signatureName(kept), kept);
  assertEquals(
    signatureName("azAZ09._:@+-"),
    "azAZ09._:@+-",
  );
});

Deno.test("signatureName: each other character becomes one `_` (`*/`, quotes, spaces, newlines, non-ASCII)", () => {
  assertEquals(signatureName("a*/b"), "a__b");
  assertEquals(signatureName('o\'brien "x"'), "o_brien__x_");
  assertEquals(signatureName("a\nb\\c"), "a_b_c");
  assertEquals(signatureName("ü"), "_");
  assertEquals(signatureName("a b c"), "a_b_c");
});

Deno.test("signatureName: 48 characters kept at most, an empty name is `unknown`", () => {
  assertEquals(signatureName("x".repeat(48)), "x".repeat(48));
  assertEquals(signatureName("x".repeat(49)), "x".repeat(48));
  assertEquals(signatureName("ab".repeat(30)), "ab".repeat(24));
  assertEquals(signatureName(""), "unknown");
  // A name of only unsafe characters is not empty: it is underscores.
  assertEquals(signatureName("*/"), "__");
});

Deno.test("signed: an unsigned statement is sent exactly as written; a signed one starts with the comment", () => {
  assertEquals(signed("select 1", undefined), "select 1");
  assertEquals(
    signed("select 1", {
      client: "cli ent",
      token: "bridge",
      call: "0a1b2c3d",
    }),
    "/* dbport client=cli_ent token=bridge call=0a1b2c3d */ select 1",
  );
  // Every part is made safe, not only the client.
  assertEquals(
    signatureComment({ client: "c", token: "t*/", call: "1*/" }),
    "/* dbport client=c token=t__ call=1__ */ ",
  );
});

Deno.test("applicationName / setApplicationName: dbport/<client>, the session's startup name when unsigned", () => {
  const sign = { client: "o'brien", token: "x", call: "1" };
  assertEquals(applicationName(sign), "dbport/o_brien");
  assertEquals(
    setApplicationName(undefined),
    "; SET LOCAL application_name = DEFAULT",
  );
  assertEquals(
    setApplicationName(sign, "SESSION"),
    "; SET SESSION application_name = 'dbport/o_brien'",
  );
  assertEquals(
    setApplicationName(sign),
    "; SET LOCAL application_name = 'dbport/o_brien'",
  );
});

Deno.test("newCallId: 8 lowercase hex digits, different each call", () => {
  const ids = new Set<string>();
  for (let i = 0; i < 50; i++) {
    const id = newCallId();
    assertMatch(id, /^[0-9a-f]{8}$/);
    ids.add(id);
  }
  // 50 draws of 32 bits: a repeat would be a broken generator.
  assertEquals(ids.size, 50);
});
