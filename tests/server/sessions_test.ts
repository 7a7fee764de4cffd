import { assertEquals } from "@std/assert";
import { SessionStore } from "../../lib/server/sessions.ts";

const init = (principalKey: string) => ({
  protocolVersion: "2025-11-25",
  principalKey,
  clientCapabilities: {},
});

Deno.test("SessionStore.lookup() tells an unknown session from another principal's", () => {
  const store = new SessionStore();
  const session = store.create(init("a"));
  assertEquals(store.lookup(session.id, "a").ok, true);
  assertEquals(store.lookup(session.id, "b"), {
    ok: false,
    problem: "other_principal",
  });
  assertEquals(store.lookup("nope", "a"), { ok: false, problem: "unknown" });
});

Deno.test("SessionStore evicts the least recently used session past its capacity", () => {
  const store = new SessionStore(3);
  const [a, b, c] = [
    store.create(init("p")),
    store.create(init("p")),
    store.create(init("p")),
  ];
  store.lookup(a.id, "p");
  const d = store.create(init("p"));
  assertEquals(store.size, 3);
  assertEquals(store.lookup(b.id, "p").ok, false);
  for (const kept of [a, c, d]) {
    assertEquals(store.lookup(kept.id, "p").ok, true);
  }
});

Deno.test("SessionStore.dropPrincipal() ends the sessions of a revoked token", () => {
  const store = new SessionStore();
  const mine = [store.create(init("t")), store.create(init("t"))];
  const other = store.create(init("u"));
  assertEquals(store.dropPrincipal("t"), 2);
  for (const session of mine) {
    assertEquals(store.lookup(session.id, "t").ok, false);
  }
  assertEquals(store.lookup(other.id, "u").ok, true);
});
