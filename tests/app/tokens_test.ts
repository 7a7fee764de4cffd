import {
  assert,
  assertEquals,
  assertMatch,
  assertNotEquals,
} from "@std/assert";
import { parseDuration } from "../../lib/app/duration.ts";
import { openStateDb, type StateDb } from "../../lib/app/state_db.ts";
import {
  generateToken,
  hashToken,
  tokenStatus,
  TokenStore,
} from "../../lib/app/tokens.ts";

async function withDb(run: (db: StateDb, home: string) => Promise<void>) {
  const home = await Deno.makeTempDir({ prefix: "dbport-tokens-" });
  const db = await openStateDb(home);
  try {
    await run(db, home);
  } finally {
    db.close();
    await Deno.remove(home, { recursive: true });
  }
}

Deno.test("generateToken() is dbp_ and base64url of 32 random bytes", () => {
  const token = generateToken();
  assertMatch(token, /^dbp_[A-Za-z0-9_-]{43}$/);
  assertNotEquals(generateToken(), token);
});

Deno.test("hashToken() depends on the salt", () => {
  const token = generateToken();
  assertNotEquals(hashToken("a", token), hashToken("b", token));
  assertMatch(hashToken("a", token), /^[0-9a-f]{64}$/);
});

Deno.test("TokenStore.create() stores a salted hash and a display prefix, never the plaintext", async () => {
  await withDb(async (db, home) => {
    const store = new TokenStore(db);
    const before = await store.generation();
    const { token, plaintext } = await store.create({
      name: " laptop ",
      level: "readWrite",
      connections: ["a"],
      expiresAt: 5_000,
    }, 1_000);
    assertEquals(await store.generation(), before + 1);
    assertEquals(token.name, "laptop");
    assertEquals(token.prefix, plaintext.slice(0, 10));
    const [row] = await store.all();
    assert(row !== undefined);
    assertEquals(row.hash, hashToken(row.salt, plaintext));
    assertEquals(
      { ...row, salt: "", hash: "" },
      { ...token, salt: "", hash: "" },
    );
    const disk = new TextDecoder("latin1").decode(
      new Uint8Array([
        ...await Deno.readFile(`${home}/state.db`),
        ...await Deno.readFile(`${home}/state.db-wal`).catch(() => []),
      ]),
    );
    assertEquals(disk.includes(plaintext), false);
    assertEquals(disk.includes(plaintext.slice(10)), false);
  });
});

Deno.test("TokenStore.find() takes an id or a unique name, and lists the ids of a shared name", async () => {
  await withDb(async (db) => {
    const store = new TokenStore(db);
    const init = {
      level: "readOnly",
      connections: null,
      expiresAt: null,
    } as const;
    const one = (await store.create({ ...init, name: "one" })).token;
    const a = (await store.create({ ...init, name: "twin" })).token;
    const b = (await store.create({ ...init, name: "twin" })).token;
    assertEquals((await store.find("one")).ok, true);
    assertEquals((await store.find(one.id)).ok, true);
    const twin = await store.find("twin");
    assert(!twin.ok);
    assert(twin.message.includes(a.id) && twin.message.includes(b.id));
    const none = await store.find("zzz");
    assert(!none.ok && none.message.includes('"zzz"'));
  });
});

Deno.test("TokenStore.revoke() keeps the row, marks it and bumps the generation", async () => {
  await withDb(async (db) => {
    const store = new TokenStore(db);
    const { token } = await store.create({
      name: "x",
      level: "fullAccess",
      connections: null,
      expiresAt: null,
    });
    const generation = await store.generation();
    await store.revoke(token.id, 42);
    assertEquals(await store.generation(), generation + 1);
    const [listed] = await store.list();
    assertEquals(listed!.revokedAt, 42);
    assertEquals(tokenStatus(listed!, 43), "revoked");
    // Revoking again keeps the first time.
    await store.revoke(token.id, 99);
    assertEquals((await store.list())[0]!.revokedAt, 42);
  });
});

Deno.test("tokenStatus() treats the expiry instant as expired", () => {
  const token = {
    id: "",
    name: "",
    prefix: "",
    level: "readOnly" as const,
    connections: null,
    createdAt: 0,
    expiresAt: 100,
    revokedAt: null,
    lastUsedAt: null,
  };
  assertEquals(tokenStatus(token, 99), "active");
  assertEquals(tokenStatus(token, 100), "expired");
  assertEquals(tokenStatus({ ...token, expiresAt: null }, 1e15), "active");
});

Deno.test("parseDuration() reads s, m, h, d and never", () => {
  assertEquals(parseDuration("90s"), { ok: true, ms: 90_000 });
  assertEquals(parseDuration("30m"), { ok: true, ms: 1_800_000 });
  assertEquals(parseDuration("12h"), { ok: true, ms: 43_200_000 });
  assertEquals(parseDuration("30d"), { ok: true, ms: 2_592_000_000 });
  assertEquals(parseDuration("never"), { ok: true, ms: null });
  for (const bad of ["", "0d", "-1d", "1w", "1.5h", "d", "10 d", "9999999d"]) {
    const parsed = parseDuration(bad);
    assert(!parsed.ok, bad);
    assert(parsed.message.includes(`"${bad}"`));
  }
});
