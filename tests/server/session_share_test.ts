import { assertEquals } from "@std/assert";
import { SessionStore } from "../../lib/server/sessions.ts";

const init = (principalKey: string) => ({
  protocolVersion: "2025-11-25",
  principalKey,
  clientCapabilities: {},
});

Deno.test("SessionStore: one token's new sessions evict its own, never another token's", () => {
  const store = new SessionStore(16);
  const b = store.create(init("token:b"));
  const a = Array.from({ length: 40 }, () => store.create(init("token:a")));
  assertEquals(store.size, 16);
  assertEquals(store.lookup(b.id, "token:b").ok, true);
  assertEquals(store.lookup(a[0]!.id, "token:a").ok, false);
  assertEquals(store.lookup(a[39]!.id, "token:a").ok, true);
});

Deno.test("SessionStore: with one token the least recently used session goes first", () => {
  const store = new SessionStore(3);
  const [s1, s2, s3] = [1, 2, 3].map(() => store.create(init("token:a")));
  store.lookup(s1!.id, "token:a");
  store.create(init("token:a"));
  assertEquals(store.lookup(s2!.id, "token:a").ok, false);
  assertEquals(store.lookup(s1!.id, "token:a").ok, true);
  assertEquals(store.lookup(s3!.id, "token:a").ok, true);
});
