/**
 * Open findings of the stop 45 outsider (branch attack45): tests that fail
 * on the code as it is, kept out of the suite (the file name does not end in
 * `_test.ts`). Run one with
 * `deno test --config deno.dev.json --no-prompt --allow-all tests/e2e/open_findings_stop45.ts`.
 */

import { assert } from "@std/assert";
import { fixtureCatalog } from "../_catalog.ts";
import { modernHeaders, modernRequest, startTestServer } from "../_server.ts";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

// What I did: a request head in one go, then a body promised by
// Content-Length trickled one byte every 200 ms on a server whose idle
// timeout is 300 ms (each byte within the idle timeout), for 20 idle
// timeouts.
// What happened: the connection is kept the whole time. The idle watch
// (lib/server/connection_slots.ts) only asks whether a byte moved; the
// head has a deadline of its own ("30 s to arrive, however slowly") but a
// body has none (node:http's requestTimeout is 0), so 64 clients trickling
// 10 MB bodies hold every connection slot for weeks: the slow loris the
// head deadline stops, moved one line down. Not new in 34f5d7b (node:http's
// socket timeout also counted any byte as activity).
// What should happen: a whole request (head and body) gets a bounded time
// to arrive, as the head does — say the idle timeout for the head and a
// pace floor or a total cap for the body (docs/wire.md "Limits" would say
// which).
Deno.test("a body trickled a byte at a time is cut, as a trickled head is", async () => {
  await using t = await startTestServer({
    idleTimeoutMs: 300,
    catalog: fixtureCatalog(),
    settings: { requireAuth: false },
  });
  const body = JSON.stringify(modernRequest("tools/list", {}, 1));
  const head = Object.entries(modernHeaders(JSON.parse(body)))
    .map(([k, v]) => `${k}: ${v}\r\n`).join("");
  const conn = await Deno.connect({ hostname: "127.0.0.1", port: t.port });
  const started = Date.now();
  await conn.write(
    new TextEncoder().encode(
      `POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:${t.port}\r\n${head}content-length: ${body.length}\r\n\r\n`,
    ),
  );
  let cut = false;
  for (const byte of new TextEncoder().encode(body)) {
    try {
      await conn.write(Uint8Array.of(byte));
    } catch {
      cut = true;
      break;
    }
    await sleep(200);
    if (Date.now() - started > 6_000) break;
  }
  try {
    conn.close();
  } catch { /* closed */ }
  assert(cut, `still open after ${Date.now() - started} ms of a trickled body`);
});
