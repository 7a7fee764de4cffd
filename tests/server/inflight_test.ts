import { assert, assertEquals, assertInstanceOf } from "@std/assert";
import { InFlightRegistry, RequestStopped } from "../../lib/server/inflight.ts";

Deno.test("InFlightRegistry keeps ids of different principals and types apart", () => {
  const registry = new InFlightRegistry();
  assert(registry.add("a", 1) !== null);
  assert(registry.add("b", 1) !== null);
  assert(registry.add("a", "1") !== null);
  assertEquals(registry.add("a", 1), null);
  assertEquals(registry.size, 3);
});

Deno.test("InFlightRegistry.cancel() stops only the named principal's request", () => {
  const registry = new InFlightRegistry();
  const mine = registry.add("a", 7)!;
  const theirs = registry.add("b", 7)!;
  assertEquals(registry.cancel("b", 8), false);
  assertEquals(registry.cancel("a", 7), true);
  assertEquals(mine.controller.signal.aborted, true);
  assertInstanceOf(mine.controller.signal.reason, RequestStopped);
  assertEquals(
    (mine.controller.signal.reason as RequestStopped).reason,
    "cancelled",
  );
  assertEquals(theirs.controller.signal.aborted, false);
});

Deno.test("InFlightRegistry.stopPrincipal() stops every request of a revoked token", () => {
  const registry = new InFlightRegistry();
  const one = registry.add("t", 1)!;
  const two = registry.add("t", 2)!;
  const other = registry.add("u", 1)!;
  assertEquals(registry.stopPrincipal("t", "revoked"), 2);
  assertEquals(
    [one, two].map((e) =>
      (e.controller.signal.reason as RequestStopped).reason
    ),
    ["revoked", "revoked"],
  );
  assertEquals(other.controller.signal.aborted, false);
});

Deno.test("InFlightRegistry.drain() resolves when the last request ends, or times out", async () => {
  const registry = new InFlightRegistry();
  assertEquals(await registry.drain(10), true);
  const entry = registry.add("a", 1)!;
  assertEquals(await registry.drain(20), false);
  const draining = registry.drain(1_000);
  registry.delete(entry);
  assertEquals(await draining, true);
  assertEquals(registry.size, 0);
});
