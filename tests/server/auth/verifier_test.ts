import { assert, assertEquals } from "@std/assert";
import {
  generateSalt,
  generateToken,
  hashToken,
  type StoredToken,
} from "../../../lib/app/tokens.ts";
import {
  constantTimeEqual,
  TokenVerifier,
} from "../../../lib/server/auth/verifier.ts";
import { fakeClock } from "../../_clock.ts";

function stored(
  overrides: Partial<StoredToken> = {},
): { token: StoredToken; plaintext: string } {
  const plaintext = generateToken();
  const salt = generateSalt();
  return {
    plaintext,
    token: {
      id: crypto.randomUUID(),
      name: "t",
      prefix: plaintext.slice(0, 10),
      salt,
      hash: hashToken(salt, plaintext),
      level: "readWrite",
      connections: ["c1"],
      createdAt: 0,
      expiresAt: null,
      revokedAt: null,
      lastUsedAt: null,
      ...overrides,
    },
  };
}

Deno.test("constantTimeEqual() compares whole strings of any length", () => {
  assertEquals(constantTimeEqual("abc", "abc"), true);
  assertEquals(constantTimeEqual("abc", "abd"), false);
  assertEquals(constantTimeEqual("abc", "ab"), false);
  assertEquals(constantTimeEqual("", ""), true);
});

Deno.test("TokenVerifier.verify() names the principal of an active token", () => {
  const { token, plaintext } = stored();
  const verifier = new TokenVerifier("instance");
  verifier.setUserTokens([token]);
  const result = verifier.verify(plaintext);
  assert(result.kind === "ok");
  assertEquals(result.principal.key, `token:${token.id}`);
  assertEquals(result.principal.kind, "token");
  assertEquals(result.principal.tokenId, token.id);
  assertEquals([...result.principal.scopes].sort(), [
    "resources:read",
    "tools:read",
    "tools:write",
  ]);
  assertEquals([...result.principal.connections!], ["c1"]);
});

Deno.test("TokenVerifier.verify() tells unknown, revoked and expired apart", () => {
  const clock = fakeClock(1_000);
  const revoked = stored({ revokedAt: 500 });
  const expired = stored({ expiresAt: 1_000 });
  const verifier = new TokenVerifier("instance", clock.now);
  verifier.setUserTokens([revoked.token, expired.token]);
  assertEquals((verifier.verify(revoked.plaintext)).kind, "revoked");
  assertEquals((verifier.verify(expired.plaintext)).kind, "expired");
  assertEquals((verifier.verify(generateToken())).kind, "unknown");
  assertEquals((verifier.verify("")).kind, "unknown");
});

Deno.test("TokenVerifier gives every bridge token one principal key", () => {
  const one = stored({ name: "__stdio_bridge__" });
  const two = stored({ name: "__stdio_bridge__" });
  const verifier = new TokenVerifier("instance-7");
  verifier.setBridgeTokens([one.token, two.token]);
  const a = verifier.verify(one.plaintext);
  const b = verifier.verify(two.plaintext);
  assert(a.kind === "ok" && b.kind === "ok");
  assertEquals(a.principal.key, "bridge:instance-7");
  assertEquals(b.principal.key, "bridge:instance-7");
  assertEquals(a.principal.kind, "bridge");
  assertEquals(a.principal.connections, null);
  // A user token of the same name is an ordinary token.
  verifier.setUserTokens([(stored({ name: "__stdio_bridge__" })).token]);
  verifier.setBridgeTokens([]);
  assertEquals((verifier.verify(one.plaintext)).kind, "unknown");
});

Deno.test("TokenVerifier remembers a proven token only until the tokens change, and still checks its expiry", () => {
  const clock = fakeClock(1_000);
  const token = stored({ expiresAt: 5_000 });
  const verifier = new TokenVerifier("instance", clock.now);
  verifier.setUserTokens([token.token]);
  assertEquals(verifier.verify(token.plaintext).kind, "ok");
  assertEquals(verifier.verify(token.plaintext).kind, "ok");
  // Expiry is read on every call, remembered or not.
  clock.advance(4_000);
  assertEquals(verifier.verify(token.plaintext).kind, "expired");
  // A reload without the token (revoked and pruned, say) forgets it.
  verifier.setUserTokens([]);
  assertEquals(verifier.verify(token.plaintext).kind, "unknown");
  // A reload with it revoked says so.
  verifier.setUserTokens([{ ...token.token, revokedAt: 4_500 }]);
  assertEquals(verifier.verify(token.plaintext).kind, "revoked");
});
