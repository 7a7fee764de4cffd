/**
 * The fast path's request headers read as a web `Headers` reads them.
 */

import { assertEquals } from "@std/assert";
import { RawHeaders } from "../../lib/server/raw_headers.ts";

const RAW = [
  "Host",
  "127.0.0.1:1",
  "mcp-param-b",
  "2",
  "Authorization",
  "Bearer a",
  "MCP-Param-A",
  "1",
  "authorization",
  "Bearer b",
  "content-type",
  "application/json",
];

Deno.test("RawHeaders answers as Headers does: any case, repeats joined, names sorted", () => {
  const raw = new RawHeaders(RAW);
  const web = new Headers();
  for (let i = 0; i < RAW.length; i += 2) web.append(RAW[i]!, RAW[i + 1]!);
  for (
    const name of ["host", "HOST", "authorization", "Content-Type", "origin"]
  ) {
    assertEquals(raw.get(name), web.get(name), name);
  }
  assertEquals(raw.value("authorization"), "Bearer a, Bearer b");
  assertEquals(raw.value("origin"), undefined);
  const seen: [string, string][] = [];
  raw.forEach((value, name) => seen.push([name, value]));
  const expected: [string, string][] = [];
  web.forEach((value, name) => expected.push([name, value]));
  assertEquals(seen, expected);
  assertEquals(raw.hasPrefix("mcp-param-"), true);
  assertEquals(new RawHeaders(["Host", "h"]).hasPrefix("mcp-param-"), false);
  // node's own array is left as it was.
  assertEquals(RAW[0], "Host");
});
