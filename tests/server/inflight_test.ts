import { assert, assertEquals, assertInstanceOf } from "@std/assert";
import { InFlightRegistry, RequestStopped } from "../../lib/server/inflight.ts";

Deno.test("InFlightRegistry keeps ids of different principals and types apart", () => {
  const registry = new InFlightRegistry();
  const one = registry.add("a", 1);
  registry.add("b", 1);
  const text = registry.add("a", "1");
  assertEquals(registry.size, 3);
  assertEquals(registry.cancel("a", 1), true);
  assertEquals(one.controller.signal.aborted, true);
  assertEquals(text.controller.signal.aborted, false);
});

Deno.test("InFlightRegistry accepts equal ids from one principal, and cancel() stops each", () => {
  // Two stdio clients behind one bridge token both number from 0.
  const registry = new InFlightRegistry();
  const first = registry.add("bridge", 0);
  const second = registry.add("bridge", 0);
  const other = registry.add("bridge", 1);
  assertEquals(registry.size, 3);
  assertEquals(registry.cancel("bridge", 0), true);
  assert(first.controller.signal.aborted && second.controller.signal.aborted);
  assertEquals(other.controller.signal.aborted, false);
  registry.delete(first);
  registry.delete(first);
  assertEquals(registry.size, 2);
  registry.delete(second);
  registry.delete(other);
  assertEquals(registry.size, 0);
});

Deno.test("InFlightRegistry.cancel() stops only the named principal's request", () => {
  const registry = new InFlightRegistry();
  const mine = registry.add("a", 7);
  const theirs = registry.add("b", 7);
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
  const one = registry.add("t", 1);
  const two = registry.add("t", 2);
  const other = registry.add("u", 1);
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
  const entry = registry.add("a", 1);
  assertEquals(await registry.drain(20), false);
  const draining = registry.drain(1_000);
  registry.delete(entry);
  assertEquals(await draining, true);
  assertEquals(registry.size, 0);
});
