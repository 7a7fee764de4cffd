/**
 * `main.ts serve` as a user runs it: it prints where it listens and what to do
 * next, writes the handshake, answers, and on SIGTERM/SIGINT stops and removes
 * the handshake.
 */
import { assert, assertEquals, assertStringIncludes } from "@std/assert";
import { spawnServe } from "../_main.ts";
import { exists, modernRequest, postModern } from "../_server.ts";

async function runServe(signal: Deno.Signal) {
  const home = await Deno.makeTempDir({ prefix: "dbport-serve-" });
  const serve = await spawnServe(home);
  const child = serve.child;
  try {
    const out = serve.out;
    const url = serve.url;
    assert(url !== undefined, out);
    assertStringIncludes(out, `${home}/mcp-handshake.json`);
    const handshake = JSON.parse(
      await Deno.readTextFile(`${home}/mcp-handshake.json`),
    );
    assertEquals(handshake.pid, child.pid);
    assertEquals(url, `http://127.0.0.1:${handshake.port}/mcp`);
    // The handshake carries the bridge token, and the server accepts it.
    assert(handshake.token.startsWith("dbp_"));
    assert(Date.parse(handshake.expiresAt) > Date.now());
    const answer = await postModern(url, modernRequest("server/discover"), {
      authorization: `Bearer ${handshake.token}`,
    });
    assertEquals(
      answer.json.result._meta["dbport/instanceId"],
      handshake.instanceId,
    );
    child.kill(signal);
    const all = await serve.readRest();
    const status = await child.status;
    const stderr = await new Response(child.stderr).text();
    assertEquals(status.code, 0);
    // The bridge token is never printed or logged.
    assertEquals(all.includes(handshake.token), false);
    assertEquals(stderr.includes(handshake.token), false);
    assertEquals(
      await exists(`${home}/mcp-handshake.json`),
      false,
    );
  } finally {
    try {
      child.kill("SIGKILL");
    } catch { /* already gone */ }
    await Deno.remove(home, { recursive: true });
  }
}

Deno.test("main.ts serve starts, answers and removes its handshake on SIGTERM", async () => {
  await runServe("SIGTERM");
});

Deno.test("main.ts serve stops cleanly on SIGINT", async () => {
  await runServe("SIGINT");
});
