/**
 * The authentication lockout over real HTTP (docs/wire.md "Authentication
 * lockout"), driven by an injected clock.
 */
import { assertEquals } from "@std/assert";
import { fakeClock } from "../../_clock.ts";
import {
  modernRequest,
  postModern,
  startTestServer,
  type TestServer,
} from "../../_server.ts";

function discover(
  t: TestServer,
  authorization: string | null,
  id: string | number = 1,
) {
  return postModern(t.url, modernRequest("server/discover", {}, id), {
    authorization,
  });
}

const WRONG = "Bearer dbp_wrongwrongwrongwrongwrongwrongwrongwrongwro";

Deno.test("5 failed attempts lock the caller out for 5 minutes with -33010 and Retry-After", async () => {
  const clock = fakeClock();
  await using t = await startTestServer({ now: clock.now });
  const good = `Bearer ${t.token}`;
  for (let i = 1; i <= 4; i++) {
    assertEquals((await discover(t, WRONG)).status, 401, `failure ${i}`);
  }
  // Four failures do not lock.
  assertEquals((await discover(t, good)).status, 200);
  // The fifth failure is itself answered 401, and locks.
  assertEquals((await discover(t, WRONG)).status, 401);
  const locked = await discover(t, WRONG, "after");
  assertEquals(locked.status, 429);
  assertEquals(locked.headers.get("retry-after"), "300");
  assertEquals(locked.json.error.code, -33010);
  assertEquals(locked.json.id, "after");
  // Another client on 127.0.0.1 with a valid token is still served.
  assertEquals((await discover(t, good)).status, 200);
  // Retry-After counts down, rounded up to whole seconds.
  clock.advance(299_001);
  const late = await discover(t, WRONG);
  assertEquals(late.status, 429);
  assertEquals(late.headers.get("retry-after"), "1");
  clock.advance(999);
  assertEquals((await discover(t, WRONG)).status, 401);
});

Deno.test("one stale client's failures never lock out a client with a valid token", async () => {
  const clock = fakeClock();
  await using t = await startTestServer({ now: clock.now });
  // A revoked token left in some client's config, retried forever.
  for (let i = 0; i < 20; i++) await discover(t, WRONG);
  for (let i = 0; i < 5; i++) {
    assertEquals((await discover(t, `Bearer ${t.token}`)).status, 200);
  }
  assertEquals((await discover(t, WRONG)).status, 429);
  assertEquals((await discover(t, null)).status, 429);
});

Deno.test("a success does not unlock a locked caller, and refusals while locked do not extend it", async () => {
  const clock = fakeClock();
  await using t = await startTestServer({ now: clock.now });
  for (let i = 0; i < 5; i++) await discover(t, WRONG);
  for (let i = 0; i < 10; i++) {
    assertEquals((await discover(t, `Bearer ${t.token}`)).status, 200);
    assertEquals((await discover(t, WRONG)).status, 429);
    clock.advance(1_000);
  }
  clock.advance(290_000);
  assertEquals((await discover(t, WRONG)).status, 401);
});

Deno.test("failures older than 60 seconds do not count toward the lockout", async () => {
  const clock = fakeClock();
  await using t = await startTestServer({ now: clock.now });
  for (let i = 0; i < 4; i++) await discover(t, WRONG);
  clock.advance(60_000);
  assertEquals((await discover(t, WRONG)).status, 401);
  assertEquals((await discover(t, `Bearer ${t.token}`)).status, 200);
  for (let i = 0; i < 3; i++) await discover(t, WRONG);
  // 4 failures within the last 60 s: one more locks.
  assertEquals((await discover(t, `Bearer ${t.token}`)).status, 200);
  await discover(t, WRONG);
  assertEquals((await discover(t, WRONG)).status, 429);
});

Deno.test("missing and malformed Authorization headers count as failed attempts", async () => {
  const clock = fakeClock();
  await using t = await startTestServer({ now: clock.now });
  for (const value of [null, null, "Basic x", "Bearer", null]) {
    const answer = await discover(t, value);
    assertEquals([401, 400].includes(answer.status), true);
  }
  assertEquals((await discover(t, null)).status, 429);
});

Deno.test("restarting the server clears a lockout", async () => {
  const home = await Deno.makeTempDir({ prefix: "dbport-lockout-" });
  try {
    {
      await using t = await startTestServer({ home });
      for (let i = 0; i < 5; i++) await discover(t, WRONG);
      assertEquals((await discover(t, WRONG)).status, 429);
    }
    // Same home, same tokens, a new process state: the lockout is gone.
    await using again = await startTestServer({ home, token: null });
    assertEquals((await discover(again, WRONG)).status, 401);
  } finally {
    await Deno.remove(home, { recursive: true });
  }
});
