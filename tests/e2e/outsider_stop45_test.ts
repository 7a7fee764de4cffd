/**
 * Outsider attack of stop 45 (branch attack45): the alarms of commit 34f5d7b
 * (one runtime timer for every request deadline, statement timeout, session
 * wait and idle watch), node:http's socket timeouts replaced by the slots'
 * idle watch, log batches committed without a sync, and the PostgreSQL
 * reader's exchange written into one buffer.
 */

import { assert, assertEquals } from "@std/assert";
import { AlarmClock } from "../../lib/base/alarms.ts";
import { savedConnection, serverWith } from "../_connections.ts";
import postgres from "postgres";
import { type Fixture, needs, openFixture } from "../_db.ts";
import { callTool } from "../_tool_call.ts";
import { textOf } from "../_outsider.ts";
import { stopParser } from "../../lib/db/postgres/pg_parse_off_loop.ts";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

// ------------------------------------------------------------ alarms

// What I did: two alarms due at the same time; the first one's fire clears
// the second (as an abort listener clears its own alarm when a deadline
// aborts: session_share's waiter, say).
// What happened: the cleared alarm fired anyway: #fired took every due
// entry out of the set before calling any, so clear() found nothing to
// delete and the entry was still in the list being fired. A setTimeout
// cleared by another timer's callback never runs; lib/base/alarms.ts says
// "It no longer fires".
// What should happen: a cleared alarm never fires, even when it was due in
// the same tick. Fixed: an entry is marked cleared, and a cleared entry is
// skipped when the due ones are fired.
Deno.test("an alarm cleared by another alarm due in the same tick does not fire", async () => {
  const clock = new AlarmClock();
  let fired = 0;
  let second: { clear(): void } | undefined;
  clock.set(20, () => second?.clear());
  second = clock.set(20, () => fired++);
  await sleep(200);
  assertEquals(fired, 0, "a cleared alarm fired");
  assertEquals(clock.size, 0);
  assertEquals(clock.armed, false);
});

// ------------------------------------------------------------ idle watch

/**
 * A read of `fixture` that waits about `ms`: MariaDB's SLEEP(); on
 * PostgreSQL (pg_sleep is off the read allowlist) a read of a table another
 * session holds locked for `ms` (tests/e2e/heartbeat_test.ts).
 */
async function slowRead(
  fixture: Fixture,
  ms: number,
): Promise<[string, Promise<void>]> {
  if (fixture.engine === "mysql") {
    return [`select sleep(${ms / 1000}) as slept`, Promise.resolve()];
  }
  const table = `"${fixture.schema}".authors`;
  const holder = postgres(fixture.url, { max: 1, onnotice: () => {} });
  const reserved = await holder.reserve();
  await reserved.unsafe(`begin; lock table ${table} in access exclusive mode`)
    .simple();
  const released = sleep(ms).then(async () => {
    await reserved.unsafe("commit").simple();
    reserved.release();
    await holder.end();
  });
  return [`select count(*) as slept from ${table}`, released];
}

for (const engine of ["postgres", "mysql"] as const) {
  // What I did: a 2.5 s read (timeout_seconds 30) on a server whose idle
  // timeout is 300 ms, so the socket is silent for eight idle periods.
  // What should happen (and happened): the read is answered, not cut.
  Deno.test(`${engine}: a long read on a silent socket is not cut by the idle watch`, needs(engine), async () => {
    await using fixture = await openFixture(engine);
    const db = savedConnection(fixture, `atk45_idle_${engine}`);
    await using server = await serverWith([db], {}, { idleTimeoutMs: 300 });
    const [query, released] = await slowRead(fixture, 2_500);
    const started = Date.now();
    const answer = await callTool(server, "execute_query", {
      connection_id: db.id,
      query,
      timeout_seconds: 30,
    });
    await released;
    assertEquals(answer.status, 200, answer.text);
    assertEquals(answer.json.result.isError, undefined, textOf(answer));
    assert(Date.now() - started >= 2_000);
  });
}

// ------------------------------------------------------------ timeouts

// What I did: on each engine, a long read with a 30 s timeout, then, while
// it runs, three reads that would run far longer with a 1 s, 2 s and 1 s
// timeout (short alarms set after a long one), all at once.
// What should happen (and happened): each short read stops at its own
// timeout (generous bound: within 4 s of it) with a timeout error, and the
// long one is answered when it ends.
const HEAVY =
  `with recursive c(n) as (select 1 union all select n + 1 from c where n < 1000000000) select count(*) as n from c`;

for (const engine of ["postgres", "mysql", "sqlite"] as const) {
  Deno.test(`${engine}: short statement timeouts set after a long one fire on time`, needs(engine), async () => {
    await using fixture = await openFixture(engine);
    const db = savedConnection(fixture, `atk45_to_${engine}`);
    await using server = await serverWith([db]);
    const ask = (query: string, timeout: number) => {
      const started = Date.now();
      return callTool(server, "execute_query", {
        connection_id: db.id,
        query,
        timeout_seconds: timeout,
      }).then((answer) => ({ answer, took: Date.now() - started }));
    };
    let long = null;
    let released = Promise.resolve();
    let slow = HEAVY;
    if (engine !== "sqlite") {
      const [query, done] = await slowRead(fixture, 3_000);
      released = done;
      long = ask(query, 30);
      // Settled whatever the assertions below say: no dangling promise.
      long.catch(() => {});
      slow = engine === "mysql" ? "select sleep(20) as slept" : query;
    }
    await sleep(200);
    const short = await Promise.all([ask(slow, 1), ask(slow, 2), ask(slow, 1)]);
    for (const [i, { answer, took }] of short.entries()) {
      const asked = [1, 2, 1][i]! * 1000;
      assertEquals(answer.status, 200, answer.text);
      // A timeout is the JSON-RPC error -33003 (docs/wire.md).
      assertEquals(answer.json?.error?.code, -33003, answer.text.slice(0, 400));
      assert(/statement timeout/.test(answer.text), answer.text.slice(0, 300));
      assert(took >= asked - 50, `stopped after ${took} ms, asked ${asked}`);
      assert(took < asked + 4_000, `stopped after ${took} ms, asked ${asked}`);
    }
    await released;
    if (long !== null) {
      const { answer } = await long;
      assertEquals(answer.json.result.isError, undefined, textOf(answer));
    }
  });
}

// ------------------------------------------------------------ encoder

// What I did: reads through dbport's own PostgreSQL reader (one buffer,
// three bytes per UTF-16 unit at most) of literals made of astral
// characters (four bytes for two units), three-byte characters filling the
// bound exactly (100 KB of them), a lone surrogate and a NUL byte.
// What should happen (and happened): every literal comes back exactly (a
// lone surrogate as U+FFFD, as any UTF-8 encoder writes it); a NUL is
// refused with an error, never a broken exchange, and the session serves the
// next read.
Deno.test("postgres: query text of astral, three-byte and odd characters reaches the database exactly", needs("postgres"), async () => {
  await using fixture = await openFixture("postgres");
  const db = savedConnection(fixture, "atk45_enc");
  await using server = await serverWith([db]);
  const read = (query: string) =>
    callTool(server, "execute_query", { connection_id: db.id, query });
  const cases: [string, string][] = [
    ["😀𝄞🀄".repeat(1000), "😀𝄞🀄".repeat(1000)],
    ["日".repeat(34_000), "日".repeat(34_000)],
    ["a\uD800b", "a\uFFFDb"],
    ["é€😀日\u{10FFFF}", "é€😀日\u{10FFFF}"],
  ];
  for (const [literal, expected] of cases) {
    // Long values are cut in answers: the database's length and SHA-256
    // of what it received are compared instead.
    const answer = await read(
      `select length(v) as n, encode(sha256(convert_to(v, 'UTF8')), 'hex') as h from (select '${literal}'::text as v) s`,
    );
    assertEquals(answer.status, 200, answer.text.slice(0, 300));
    const rows = answer.json?.result?.structuredContent?.rows;
    assert(rows !== undefined, answer.text.slice(0, 300));
    assertEquals(rows, [[[...expected].length, await sha256(expected)]]);
  }
  const nul = await read(`select 'a\u0000b'::text as v`);
  assertEquals(nul.json?.result?.isError, true, nul.text.slice(0, 300));
  const after = await read(`select 41 + 1 as v`);
  assertEquals(after.json?.result?.structuredContent?.rows, [[42]]);
  // Long statements are parsed in a worker whose idle timer (unref'd)
  // outlives the test otherwise.
  stopParser();
});

async function sha256(text: string): Promise<string> {
  const digest = await crypto.subtle.digest(
    "SHA-256",
    new TextEncoder().encode(text),
  );
  return Array.from(new Uint8Array(digest), (b) => b.toString(16).padStart(2, "0"))
    .join("");
}
