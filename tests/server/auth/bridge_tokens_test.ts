import { assert, assertEquals, assertNotEquals } from "@std/assert";
import {
  BRIDGE_ROTATE_BEFORE_MS,
  BRIDGE_TOKEN_LIFETIME_MS,
  BridgeTokens,
} from "../../../lib/server/auth/bridge_tokens.ts";
import { fakeClock } from "../../_clock.ts";

Deno.test("BridgeTokens.mint() makes a readWrite token for all connections, one hour long", () => {
  const clock = fakeClock(0);
  const tokens = new BridgeTokens(clock.now);
  const minted = tokens.mint();
  assertEquals(minted.expiresAt, BRIDGE_TOKEN_LIFETIME_MS);
  const [verifier] = tokens.verifiers();
  assert(verifier !== undefined);
  assertEquals(
    [verifier.name, verifier.level, verifier.connections],
    ["__stdio_bridge__", "readWrite", null],
  );
  // Held as a salted hash only.
  assertEquals(
    JSON.stringify(tokens.verifiers()).includes(minted.plaintext),
    false,
  );
});

Deno.test("BridgeTokens is due for rotation 15 minutes before expiry and prunes expired ones", () => {
  const clock = fakeClock(0);
  const tokens = new BridgeTokens(clock.now);
  const first = tokens.mint();
  clock.advance(BRIDGE_TOKEN_LIFETIME_MS - BRIDGE_ROTATE_BEFORE_MS - 1);
  assertEquals(tokens.dueForRotation(), false);
  clock.advance(1);
  assertEquals(tokens.dueForRotation(), true);
  const second = tokens.mint();
  assertNotEquals(second.plaintext, first.plaintext);
  assertEquals(tokens.current, second);
  assertEquals(tokens.verifiers().length, 2);
  assertEquals(tokens.prune(), false);
  clock.advance(BRIDGE_ROTATE_BEFORE_MS);
  assertEquals(tokens.prune(), true);
  assertEquals(tokens.verifiers().map((t) => t.id), [second.id]);
  tokens.clear();
  assertEquals([tokens.current, tokens.verifiers().length], [null, 0]);
});
