/**
 * base64 over the built-in `toBase64`/`fromBase64`: the same text as the
 * `btoa` spelling it replaced, and base64url decoding as strict as before.
 */
import { assertEquals } from "@std/assert";
import {
  fromBase64Url,
  toBase64,
  toBase64Url,
} from "../../lib/protocol/base64.ts";

/** The spelling the built-ins replaced, kept here as the reference. */
function viaBtoa(bytes: Uint8Array): string {
  let binary = "";
  for (let i = 0; i < bytes.length; i += 0x8000) {
    binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  }
  return btoa(binary);
}

Deno.test("toBase64 and toBase64Url write what btoa wrote, at every length", () => {
  for (const length of [0, 1, 2, 3, 4, 31, 32, 33, 0x8000, 0x8001, 65_536]) {
    const bytes = crypto.getRandomValues(new Uint8Array(length));
    assertEquals(toBase64(bytes), viaBtoa(bytes));
    assertEquals(
      toBase64Url(bytes),
      viaBtoa(bytes).replaceAll("+", "-").replaceAll("/", "_").replace(
        /=+$/,
        "",
      ),
    );
    assertEquals(fromBase64Url(toBase64Url(bytes)), bytes);
  }
});

Deno.test("fromBase64Url refuses padding, white space, the standard alphabet and a lone character", () => {
  for (const text of ["AB==", " AA", "AA AA", "+/", "A", "A="]) {
    assertEquals(fromBase64Url(text), null, JSON.stringify(text));
  }
  assertEquals(fromBase64Url(""), new Uint8Array(0));
  assertEquals(fromBase64Url("-_"), new Uint8Array([251]));
  assertEquals(fromBase64Url("AQ"), new Uint8Array([1]));
});
